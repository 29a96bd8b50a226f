#include "core/LlvmTarget.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdio>
#include <mutex>

namespace opgen {

namespace {

const char *const kAttributesFlag = "halide_mattrs";

// Appends "-avx512fp16" to the LLVM attributes Halide chose for `module`.
void turn_off_fp16(llvm::Module &module) {
    std::string attributes;
    if (auto *text = llvm::dyn_cast_or_null<llvm::MDString>(module.getModuleFlag(kAttributesFlag))) {
        attributes = text->getString().str();
    }
    attributes += attributes.empty() ? "-avx512fp16" : ",-avx512fp16";
    module.setModuleFlag(llvm::Module::Warning, kAttributesFlag,
                         llvm::MDString::get(module.getContext(), attributes));
}

// The message of the last error Halide's JIT runtime reported on this thread, for calls without
// a user context (Fp16FreeJit's): Pipeline::realize keeps its own, through its context.
thread_local std::string last_jit_error;

void keep_jit_error(Halide::JITUserContext *, const char *message) { last_jit_error = message; }

// Makes keep_jit_error the JIT runtime's error handler for calls without a user context, the other
// default handlers as they were.
void keep_jit_errors() {
    static std::once_flag once;
    std::call_once(once, [] {
        Halide::JITHandlers handlers = Halide::Internal::JITSharedRuntime::set_default_handlers({});
        handlers.custom_error = keep_jit_error;
        Halide::Internal::JITSharedRuntime::set_default_handlers(handlers);
    });
}

// `module`'s code in `context`, with AVX512-FP16 off.
std::unique_ptr<llvm::Module> fp16_free_module(const Halide::Module &module, llvm::LLVMContext &context) {
    std::unique_ptr<llvm::Module> code = Halide::compile_module_to_llvm_module(module, context);
    turn_off_fp16(*code);
    return code;
}

}  // namespace

bool needs_fp16_override(const Halide::Target &ht) {
    return ht.has_feature(Halide::Target::AVX512_SapphireRapids);
}

void compile_without_fp16(const Halide::Module &module, const std::string &path, MachineCode kind) {
    llvm::LLVMContext context;
    std::unique_ptr<llvm::Module> code = fp16_free_module(module, context);
    std::unique_ptr<llvm::raw_fd_ostream> out = Halide::make_raw_fd_ostream(path);
    if (kind == MachineCode::Object) {
        Halide::compile_llvm_module_to_object(*code, *out);
    } else {
        Halide::compile_llvm_module_to_assembly(*code, *out);
    }
    out->flush();
    if (out->has_error()) throw Halide::CompileError("cannot write the object file '" + path + "'");
}

void compile_static_library_without_fp16(const Halide::Pipeline &pipeline, const std::vector<Halide::Argument> &args,
                                         const std::string &name, const Halide::Target &target,
                                         const std::string &base) {
    Halide::Pipeline p = pipeline;
    const Halide::Module module = p.compile_to_module(args, name, target);
    const std::string object = base + ".o";
    compile_without_fp16(module, object);
    Halide::create_static_library({object}, target, base + ".a");
    std::remove(object.c_str());
    module.compile({{Halide::OutputFileType::c_header, base + ".h"}});
}

Fp16FreeJit::Fp16FreeJit(const Halide::Pipeline &pipeline, const std::vector<Halide::Argument> &args,
                         const Halide::Target &target)
    : context_(std::make_unique<llvm::LLVMContext>()) {
    // As Pipeline::compile_jit builds it, less the user context: Target::JIT links the code against
    // Halide's shared JIT runtime, whose handlers take a null context for their defaults.
    const Halide::Target jit = target.with_feature(Halide::Target::JIT);
    const std::string name = "opgen_jit";
    Halide::Pipeline p = pipeline;
    Halide::Module module = p.compile_to_module(args, name, jit);
    std::unique_ptr<llvm::Module> code = fp16_free_module(module, *context_);
    std::vector<Halide::Internal::JITModule> runtime = Halide::Internal::JITSharedRuntime::get(code.get(), jit);
    module_.compile_module(std::move(code), name, jit, runtime);
    keep_jit_errors();
    argv_ = module_.argv_function();
    if (!argv_) throw Halide::CompileError("the JIT found no entry point '" + name + "_argv'");
}

Fp16FreeJit::~Fp16FreeJit() = default;

void Fp16FreeJit::call(const std::vector<halide_buffer_t *> &buffers) const {
    std::vector<const void *> argv(buffers.begin(), buffers.end());
    last_jit_error.clear();
    const int status = argv_(argv.data());
    if (status == 0) return;
    throw Halide::RuntimeError(last_jit_error.empty() ? "Halide error " + std::to_string(status) : last_jit_error);
}

}  // namespace opgen
