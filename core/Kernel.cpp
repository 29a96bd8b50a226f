#include "core/Kernel.h"

#include "base/AmxPermission.h"
#include "core/AmxLowering.h"
#include "core/InstructionFeatures.h"

#include <algorithm>
#include <chrono>

namespace opgen {

Halide::Target halide_target_of(const Target &target) {
    if (target.halide_target == "host") return checked_host_halide_target();
    return Halide::Target(target.halide_target);
}

Halide::Target halide_target_of(const Target &target, const ComputeDef &def) {
    Halide::Target ht = halide_target_of(target);
    if (instruction_features(def, target).empty()) {
        ht = ht.without_feature(Halide::Target::AVX512_SapphireRapids);
    }
    return ht;
}

namespace {
// `t` as a Halide buffer of the type `decl` declares, over the tensor's own memory.
Halide::Buffer<> wrap(HostTensor &t, const TensorDecl &decl, const std::string &op) {
    user_check(t.dtype == decl.dtype) << "op '" << op << "': tensor '" << decl.name << "' is "
                                      << dtype_name(t.dtype) << ", the op declares " << dtype_name(decl.dtype);
    // Halide lists dimensions innermost first; HostTensor is row-major, outermost first.
    std::vector<int> sizes(t.dims.rbegin(), t.dims.rend());
    return Halide::Buffer<>(halide_type(t.dtype), t.host(), sizes);
}
}  // namespace

JitKernel::JitKernel(LoweredOp &op, const Target &target)
    : op_(op), pipeline_(op.output), target_(halide_target_of(target, *op.def)) {
    user_check(target.measurable) << "target '" << target.name << "' cannot run on this machine";
    add_amx_lowering(pipeline_, op);
    user_check(!op.amx_tile || request_amx_permission())
        << "target '" << target.name << "': the operating system refused the permission to use AMX tiles";
    if (needs_fp16_override(target_)) {
        std::vector<Halide::Argument> args(op.params.begin(), op.params.end());
        fp16_free_ = std::make_unique<Fp16FreeJit>(pipeline_, args, target_);
    } else {
        pipeline_.compile_jit(target_);
    }
}

void JitKernel::bind(const std::map<std::string, HostTensor> &inputs, HostTensor &output) {
    in_buffers_.clear();
    for (size_t i = 0; i < op_.params.size(); i++) {
        HostTensor &t = const_cast<HostTensor &>(inputs.at(op_.param_names[i]));
        in_buffers_.push_back(wrap(t, *op_.def->find_tensor(op_.param_names[i]), op_.def->name));
        op_.params[i].set(in_buffers_.back());
    }
    out_buffer_ = wrap(output, op_.def->output(), op_.def->name);
}

void JitKernel::run() {
    if (fp16_free_) {
        std::vector<halide_buffer_t *> buffers;
        for (Halide::Buffer<> &b : in_buffers_) buffers.push_back(b.raw_buffer());
        buffers.push_back(out_buffer_.raw_buffer());
        fp16_free_->call(buffers);
        return;
    }
    pipeline_.realize(Halide::Realization(out_buffer_), target_);
}

Timing JitKernel::time(double min_total_ms, int min_runs, int max_runs, const std::function<void()> &before_call) {
    using clock = std::chrono::steady_clock;
    run();  // warm-up: page faults, thread pool start, caches
    std::vector<double> samples;
    double total = 0;
    while ((total < min_total_ms || int(samples.size()) < min_runs) && int(samples.size()) < max_runs) {
        if (before_call) before_call();
        auto t0 = clock::now();
        run();
        double ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
        samples.push_back(ms);
        total += ms;
    }
    return summarize_samples(std::move(samples));
}

Timing summarize_samples(std::vector<double> samples) {
    Timing t;
    if (samples.empty()) return t;
    std::sort(samples.begin(), samples.end());
    size_t n = samples.size();
    t.runs = int(n);
    t.median_ms = samples[n / 2];
    t.min_ms = samples.front();
    t.max_ms = samples.back();
    t.spread = t.median_ms > 0 ? (samples[(3 * n) / 4] - samples[n / 4]) / t.median_ms : 0;
    return t;
}

}  // namespace opgen
