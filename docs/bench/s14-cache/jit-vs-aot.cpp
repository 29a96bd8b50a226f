// Session 14's experiment (issue 20): the generic softmax of one schedule, compiled both ways in
// one process: JIT (what tuner/GenericTiming.cpp times) and AOT (what compile_generic_code stores
// and the cache serves), timed in alternating rounds at one shape; and the lowered statements of
// both pipelines written out for a diff.
//   jit-vs-aot SCHEDULE_JSON FROM_SHAPE AT_SHAPE OUT_PREFIX [ROUNDS] [OP] [TARGET]
// Built (shared gate lock) from the worktree root, after `ninja -C build`:
//   c++ -DHALIDE_ENABLE_RTTI -DHALIDE_WITH_EXCEPTIONS -I. -isystem /usr/include/halide14 -O2 \
//       -std=c++17 docs/bench/s14-cache/jit-vs-aot.cpp -o /tmp/s14-jit-vs-aot \
//       build/opgen/libopgen_core.a build/db/libopgen_db.a build/runtime/halide_runtime.o \
//       /usr/lib/x86_64-linux-gnu/libHalide14.so.0 -lsqlite3 -ldl -lpthread -rdynamic
// (the runtime object, exported with -rdynamic, is what the loaded code's halide_* calls bind to).
#include "db/CodeLoader.h"
#include "opgen/GenericCode.h"
#include "opgen/Kernel.h"
#include "opgen/OpLibrary.h"
#include "opgen/Reference.h"
#include "opgen/Target.h"

#include <HalideRuntime.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

using namespace opgen;
using Clock = std::chrono::steady_clock;

static double per_call_ms(const std::function<void()> &f, double min_ms) {
    int calls = 0;
    auto t0 = Clock::now();
    double ms = 0;
    while (ms < min_ms || calls < 3) {
        f();
        calls++;
        ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    }
    return ms / calls;
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: jit-vs-aot SCHEDULE_JSON FROM_SHAPE AT_SHAPE OUT_PREFIX [ROUNDS] [OP] [TARGET]\n");
        return 2;
    }
    int rounds = argc > 5 ? std::atoi(argv[5]) : 7;
    std::string op_name = argc > 6 ? argv[6] : "softmax";
    ComputeDef def = OpLibrary::standard().load(op_name);
    BoundShape from = bind_shape(def, argv[2]), at = bind_shape(def, argv[3]);
    Target target = argc > 7 ? load_target(argv[7]) : host_target();
    SchedulePoint point = SchedulePoint::from_json(nlohmann::json::parse(argv[1]));
    std::string prefix = argv[4];

    // The AOT code, as `db compile --generic` builds it.
    std::string checked;
    db::KernelCode code = compile_generic_code(def, from, point, target, argv[1], checked);
    std::string why;
    auto loaded = db::load_kernel_code(code, "generic softmax");
    auto bound = db::bind_generic_kernel(loaded, code, at.canonical, &why);
    if (!bound) { std::fprintf(stderr, "error: %s\n", why.c_str()); return 1; }

    // The JIT kernel, as tuner/GenericTiming.cpp compiles it.
    LoweredOp lowered = lower_generic(def, from, point, target);
    JitKernel jit(lowered, target);

    // Lowered statements: the JIT's target and the AOT's.
    {
        std::vector<Halide::Argument> args(lowered.params.begin(), lowered.params.end());
        Halide::Pipeline p(lowered.output);
        Halide::Target ht = halide_target_of(target);
        p.compile_to_lowered_stmt(prefix + "-jit.stmt", args, Halide::Text, ht.with_feature(Halide::Target::JIT));
        p.compile_to_lowered_stmt(prefix + "-aot.stmt", args, Halide::Text, ht.with_feature(Halide::Target::NoRuntime));
    }

    std::map<std::string, HostTensor> inputs = random_inputs(def, at, 11);
    HostTensor out_jit, out_aot;
    out_jit.dims = out_aot.dims = at.dims.at(def.output().name);
    out_jit.data.assign(size_t(at.elements(def.output().name)), 0.f);
    out_aot.data = out_jit.data;
    jit.bind(inputs, out_jit);
    std::vector<void *> pointers;
    for (const TensorDecl *t : def.inputs()) pointers.push_back(inputs.at(t->name).data.data());
    pointers.push_back(out_aot.data.data());
    auto aot_call = [&] {
        if (bound->call(pointers.data(), pointers.size()) != 0) { std::fprintf(stderr, "error: call failed\n"); std::exit(1); }
    };
    jit.run();
    aot_call();
    Verification vj = verify_output(def, at, inputs, out_jit), va = verify_output(def, at, inputs, out_aot);
    std::printf("check at %s: jit %s, aot %s\n", at.canonical.c_str(), vj.ok ? "ok" : vj.first_mismatch.c_str(),
                va.ok ? "ok" : va.first_mismatch.c_str());
    std::vector<double> tj, ta;
    for (int r = 0; r < rounds; r++) {
        tj.push_back(per_call_ms([&] { jit.run(); }, 40));
        ta.push_back(per_call_ms(aot_call, 40));
    }
    double mj = median(tj), ma = median(ta);
    std::printf("%s from %s at %s: jit %.4f ms  aot %.4f ms  aot/jit %.3f  (%d rounds)\n", op_name.c_str(),
                from.canonical.c_str(), at.canonical.c_str(), mj, ma, ma / mj, rounds);
    return 0;
}
