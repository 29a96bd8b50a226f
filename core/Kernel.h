// Compiling a scheduled op and running it: JIT compilation for measurement, a call on host
// tensors, and timing by the rules of the design (warm up, repeat until a minimum total time,
// median and spread).
#ifndef OPGEN_CORE_KERNEL_H
#define OPGEN_CORE_KERNEL_H

#include "core/LlvmTarget.h"
#include "core/Lower.h"
#include "core/Reference.h"
#include "core/Target.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opgen {

struct Timing {
    double median_ms = 0;
    double min_ms = 0;
    double max_ms = 0;
    int runs = 0;
    double spread = 0;  // interquartile range over the median: the run-to-run noise of the samples
};

// Median, extremes and spread of timing samples in milliseconds (empty: all zero).
Timing summarize_samples(std::vector<double> samples);

class JitKernel {
public:
    // JIT-compiles `op` with whatever schedule has been applied. Halide::CompileError propagates.
    JitKernel(LoweredOp &op, const Target &target);
    // Binds the inputs (by name) and the output buffer; the tensors must outlive the calls. Each
    // tensor is passed as its own type; UserError when a tensor's type is not the one the op
    // declares for it.
    void bind(const std::map<std::string, HostTensor> &inputs, HostTensor &output);
    // One call of the kernel on the bound tensors. Halide::RuntimeError propagates.
    void run();
    // Warm-up call, then calls until `min_total_ms` have passed (at least `min_runs`);
    // `before_call` (may be empty) runs before each call, outside the timed part.
    Timing time(double min_total_ms = 200, int min_runs = 3, int max_runs = 1000,
                const std::function<void()> &before_call = {});

private:
    LoweredOp &op_;
    Halide::Pipeline pipeline_;
    Halide::Target target_;
    std::vector<Halide::Buffer<>> in_buffers_;
    Halide::Buffer<> out_buffer_;
    // The code when the target has avx512_sapphirerapids (core/LlvmTarget.h); else the pipeline's
    // own JIT.
    std::unique_ptr<Fp16FreeJit> fp16_free_;
};

Halide::Target halide_target_of(const Target &target);
// The Halide target `def`'s kernels compile for (docs/design.md §2.4): halide_target_of, less
// avx512_sapphirerapids where the op uses none of the instructions that feature stands for
// (core/InstructionFeatures.h: VNNI and BF16 dot products, AMX). The dot-product kernels keep it:
// Halide 14 emits vpdpbusd and vdpbf16ps only under it, and their code turns off the AVX512-FP16
// that LLVM's -mcpu=sapphirerapids would bring (core/LlvmTarget.h).
Halide::Target halide_target_of(const Target &target, const ComputeDef &def);

}  // namespace opgen

#endif
