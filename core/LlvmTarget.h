// Code for avx512_sapphirerapids without AVX512-FP16 (docs/design.md §2.4). Halide 14 turns that
// feature into LLVM's -mcpu=sapphirerapids, which brings AVX512-FP16 with it: LLVM then moves
// 16-bit values with vmovw, and the code dies of SIGILL on a CPU with VNNI and BF16 but no FP16
// (AMD Zen 4 and 5). Halide 14 emits vpdpbusd, vdpbf16ps and the AMX tile instructions only under
// that feature, so the dot-product kernels need it, and they (the only kernels compiled with it,
// halide_target_of in core/Kernel.h) hold no f16 value, so FP16 buys them nothing: every module
// compiled for the feature gets "-avx512fp16" after the LLVM attributes Halide chose (its module
// flag halide_mattrs, which Halide's JIT and its object writer both read), in every place that
// turns a pipeline into machine code: JitKernel (measurement), the objects of the cache and model
// libraries, and `opgen emit`'s static libraries.
#ifndef OPGEN_CORE_LLVM_TARGET_H
#define OPGEN_CORE_LLVM_TARGET_H

#include <Halide.h>

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
}

namespace opgen {

// Whether code for `ht` goes through the override: it has avx512_sapphirerapids.
bool needs_fp16_override(const Halide::Target &ht);

enum class MachineCode { Object, Assembly };

// Compiles `module` (Pipeline::compile_to_module) into an object file (or its assembly text) at
// `path`, with AVX512-FP16 off. The module's target decides whether Halide's runtime is inside (it
// is not under NoRuntime).
void compile_without_fp16(const Halide::Module &module, const std::string &path,
                          MachineCode kind = MachineCode::Object);

// What Pipeline::compile_to_static_library writes (`base`.a holding the pipeline `name` and
// Halide's runtime unless `target` has NoRuntime, and its header `base`.h), with AVX512-FP16 off.
void compile_static_library_without_fp16(const Halide::Pipeline &pipeline, const std::vector<Halide::Argument> &args,
                                         const std::string &name, const Halide::Target &target,
                                         const std::string &base);

// A pipeline JIT-compiled in this process with AVX512-FP16 off: Halide's own JIT (the shared JIT
// runtime, its thread pool and handlers) over the overridden LLVM module, called through its argv
// entry point with no user context.
class Fp16FreeJit {
public:
    // `args`: the pipeline's inputs in call order; the output follows them.
    Fp16FreeJit(const Halide::Pipeline &pipeline, const std::vector<Halide::Argument> &args,
                const Halide::Target &target);
    ~Fp16FreeJit();
    Fp16FreeJit(const Fp16FreeJit &) = delete;
    Fp16FreeJit &operator=(const Fp16FreeJit &) = delete;

    // Runs the code on one buffer per input, then the output. Raises Halide::RuntimeError with
    // the runtime's message when the code reports an error, as Pipeline::realize does.
    void call(const std::vector<halide_buffer_t *> &buffers) const;

private:
    // Declared before module_: the JIT module's LLVM IR lives in this context, so it goes last.
    std::unique_ptr<llvm::LLVMContext> context_;
    Halide::Internal::JITModule module_;
    int (*argv_)(const void **) = nullptr;
};

}  // namespace opgen

#endif
