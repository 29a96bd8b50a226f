// What Halide writes for a scheduled op, read back as text for tests to search: its assembly or
// its lowered statement (after every lowering pass, opgen's AMX widening included), compiled for
// `target` without a runtime as its kernels are (halide_target_of(target, def), and FP16 off where
// core/LlvmTarget.h turns it off) (tests/core/LowPrecisionTest, tests/core/AmxTileTest).
#ifndef OPGEN_TESTS_SUPPORT_PIPELINE_TEXT_H
#define OPGEN_TESTS_SUPPORT_PIPELINE_TEXT_H

#include "core/AmxLowering.h"
#include "core/Kernel.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace opgen::test {

enum class PipelineText { Assembly, LoweredStmt };

inline std::string pipeline_text(const LoweredOp &op, const Target &target, PipelineText kind) {
    Halide::Pipeline pipeline(op.output);
    add_amx_lowering(pipeline, op);
    std::vector<Halide::Argument> args(op.params.begin(), op.params.end());
    const std::string path =
        testing::TempDir() + "/pipeline_text_" + std::to_string(getpid()) + ".txt";
    const Halide::Target ht = halide_target_of(target, *op.def).with_feature(Halide::Target::NoRuntime);
    if (kind == PipelineText::Assembly && needs_fp16_override(ht)) {
        compile_without_fp16(pipeline.compile_to_module(args, "kernel", ht), path, MachineCode::Assembly);
    } else if (kind == PipelineText::Assembly) {
        pipeline.compile_to_assembly(path, args, "kernel", ht);
    } else {
        pipeline.compile_to_lowered_stmt(path, args, Halide::Text, ht);
    }
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::remove(path.c_str());
    return text.str();
}

} // namespace opgen::test

#endif
