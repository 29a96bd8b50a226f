// Benchmark of the lookup's answers for never-tuned shapes against full tunes (run by
// scripts/generic-bench.sh). For one op and shape:
//
//   opgen_choice_bench --db L --tuned-db T --target TGT --op OP --shape S [--rounds 7] [--min-ms 40]
//
// L is a cache without S (no kernel, no generic code of S): its lookup, with the tuner's
// extension attached (one thread, L's measurements), answers S. T holds a full tune of exactly S
// with its code. Three kernels are timed against each other in interleaved rounds (per round:
// calls of each until --min-ms have passed):
//   generic  L's kernel() for S: the generic kernel the cost model ranks fastest, no compiler;
//   chosen   the answer find() chooses among the neighbours' refits, the model's pick and the
//            generic kernels; a Derived or Predicted answer (needs_compile) is compiled here
//            ahead of time like `opgen db compile` and loaded through the same loader;
//   model    the answer find() gives when no measurement may decide (set_measured_good_enough(0):
//            the cost model ranks every candidate), compiled the same way;
//   tuned    T's exact kernel.
// All four outputs must agree with each other (relative 1e-3). Prints one line: the medians of
// the rounds' per-call times, the ratios over tuned, the chosen answer's kind, the best measured
// estimate of a generic kernel (`best_measured`, NaN when none was timed), the candidates as
// ranked, and the first find()'s time (ranking included) and a repeated one's. Since find()
// answers with the generic kernel exactly when best_measured is at most the lookup's threshold,
// and with the model's answer otherwise, any threshold's choice follows from one line (what
// scripts/generic-bench.sh's threshold sweep reads). With
// --all-generic 1 it then times every generic kernel that serves S against the tuned one (3
// rounds each) and prints a line per kernel with its model score: whether the ranking or the set
// of kernels limits the generic answer. With --as-is 1 as well, each of those kernels' source
// schedules is also compiled for exactly S as it stands (constant sizes, no re-fit) and timed:
// what the symbolic sizes cost beside what the source's tiles cost at S.
#include "runtime/CodeLoader.h"
#include "runtime/Lookup.h"
#include "codegen/CompiledCode.h"
#include "base/Error.h"
#include "core/OpLibrary.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"
#include "tests/bench/BenchArgs.h"
#include "tests/bench/KernelTiming.h"
#include "tuner/Predict.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Args : opgen::bench::ShapeBenchArgs {
    std::string db;
    bool all_generic = false;
    bool as_is = false;
    std::string only_from;  // --all-generic: only the generic kernel from this tuned shape
};

Args parse(int argc, char **argv) {
    const opgen::bench::BenchArgs f(
        argc, argv, opgen::bench::shape_bench_names({"db", "all-generic", "as-is", "only-from"}),
        "opgen_choice_bench --db L --tuned-db T --target TGT --op OP --shape S [--rounds 7] [--min-ms 40] "
        "[--all-generic 0|1] [--as-is 0|1] [--only-from SHAPE]");
    Args a;
    a.db = f.required("db");
    opgen::bench::read_shape_bench_args(f, a);
    a.all_generic = f.flag("all-generic");
    a.as_is = f.flag("as-is");
    a.only_from = f.text("only-from");
    return a;
}

[[noreturn]] void fail(const std::string &message) {
    std::fprintf(stderr, "error: %s\n", message.c_str());
    std::exit(1);
}

using opgen::bench::median;
using opgen::bench::time_calls;
using Tensors = opgen::bench::KernelTensors;

double micros_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// The kernel of a find() answer: the generic kernel kernel() serves for a generic answer, else
// the answer's schedule compiled for exactly its shape, as `opgen db compile` would, and loaded.
std::shared_ptr<const opgen::db::LoadedKernel> answer_kernel(const opgen::db::LookupAnswer &answer,
                                                             const std::string &op, const opgen::OpLibrary &library,
                                                             const opgen::Target &target,
                                                             std::shared_ptr<const opgen::db::LoadedKernel> generic,
                                                             const std::string &what) {
    if (answer.needs_compile) {
        const opgen::ComputeDef def = library.load(op);
        opgen::BoundShape shape = opgen::bind_shape(def, answer.kernel.key.shape);
        opgen::SchedulePoint point = opgen::SchedulePoint::from_json(nlohmann::json::parse(answer.kernel.schedule_json));
        opgen::db::KernelCode code = opgen::compile_kernel_code(def, shape, point, target, answer.kernel.schedule_json);
        return opgen::db::load_kernel_code(code, what);
    }
    if (answer.kind != opgen::db::AnswerKind::Generic) fail("unexpected answer kind");
    if (answer.from_shape.empty()) fail("a generic answer without its source shape");
    return generic;
}

// The lowest measured estimate among the ranked generic candidates; NaN when none has one.
double best_measured(const opgen::db::LookupAnswer &answer) {
    double best = NAN;
    for (const opgen::db::RankedCandidate &r : answer.ranked) {
        if (r.kind == opgen::db::AnswerKind::Generic && !std::isnan(r.measured_ratio) &&
            (std::isnan(best) || r.measured_ratio < best)) {
            best = r.measured_ratio;
        }
    }
    return best;
}

// "kind(from)=score[/m<estimate>] ..." for the candidates as ranked.
std::string ranked_text(const opgen::db::LookupAnswer &answer) {
    std::string ranked;
    for (const opgen::db::RankedCandidate &r : answer.ranked) {
        char score[48];
        if (std::isnan(r.measured_ratio)) std::snprintf(score, sizeof score, "%.3g", r.score);
        else std::snprintf(score, sizeof score, "%.3g/m%.3f", r.score, r.measured_ratio);
        ranked += std::string(ranked.empty() ? "" : " ") + opgen::db::answer_kind_name(r.kind) + "(" +
                  (r.from_shape.empty() ? "model" : r.from_shape) + ")=" + score;
    }
    return ranked;
}

// The source shape of the first generic candidate ranked (the one kernel() serves), or "-".
std::string generic_source(const opgen::db::LookupAnswer &answer) {
    for (const opgen::db::RankedCandidate &r : answer.ranked) {
        if (r.kind == opgen::db::AnswerKind::Generic) return r.from_shape;
    }
    return "-";
}

// The kernels timed against each other, in this order: generic, chosen, model, tuned.
struct Timed {
    std::vector<std::shared_ptr<const opgen::db::LoadedKernel>> kernels;
    std::vector<double> medians;
};

// Checks every output against the last kernel's (the tuned one), then times the kernels in
// interleaved rounds.
Timed time_interleaved(std::vector<std::shared_ptr<const opgen::db::LoadedKernel>> kernels, const Args &a,
                       const std::vector<std::string> &names) {
    std::vector<Tensors> tensors;
    tensors.reserve(kernels.size());
    for (const auto &k : kernels) {
        tensors.emplace_back(*k);
        time_calls(*k, tensors.back(), 1);
    }
    for (size_t i = 0; i + 1 < kernels.size(); i++) {
        double d = opgen::tuner::worst_output_difference(tensors[i], tensors.back());
        if (!(d < 1e-3)) fail(a.op + " " + a.shape + ": the " + names[i] + " output differs from the tuned kernel's by " + std::to_string(d));
    }
    std::vector<std::vector<double>> times(kernels.size());
    for (int r = 0; r < a.rounds; r++) {
        for (size_t i = 0; i < kernels.size(); i++) times[i].push_back(time_calls(*kernels[i], tensors[i], a.min_ms));
    }
    Timed timed{std::move(kernels), {}};
    for (const auto &t : times) timed.medians.push_back(median(t));
    return timed;
}

// --all-generic: every generic kernel that serves the shape, timed against the tuned one (3 rounds
// each), with its model score; --as-is: its source schedule also compiled for exactly the shape.
void time_all_generic(const Args &a, const opgen::OpLibrary &library, const opgen::Target &target,
                      const opgen::db::LookupAnswer &answer, const std::string &canonical,
                      const opgen::db::LoadedKernel &tuned) {
    Tensors tt(tuned);
    time_calls(tuned, tt, 1);
    std::map<std::string, double> scores, measured;
    for (const opgen::db::RankedCandidate &r : answer.ranked) {
        if (r.kind == opgen::db::AnswerKind::Generic) scores[r.from_shape] = r.score;
        if (r.kind == opgen::db::AnswerKind::Generic) measured[r.from_shape] = r.measured_ratio;
    }
    for (const opgen::db::GenericCodeRecord &row : opgen::db::open_kernel_cache(a.db, opgen::db::OpenMode::ReadOnly)
                                                       ->generic_code_for(a.op, a.target)) {
        if (!a.only_from.empty() && row.key.shape != a.only_from) continue;
        auto loaded = opgen::db::load_kernel_code(row.code, "generic code from " + row.key.shape);
        auto bound = opgen::db::bind_generic_kernel(loaded, row.code, canonical);
        if (!bound) continue;
        Tensors tb(*bound);
        time_calls(*bound, tb, 1);
        if (!(opgen::tuner::worst_output_difference(tb, tt) < 1e-3)) fail("generic code from " + row.key.shape + " differs");
        std::vector<double> b, t2;
        for (int r = 0; r < 3; r++) {
            b.push_back(time_calls(*bound, tb, a.min_ms));
            t2.push_back(time_calls(tuned, tt, a.min_ms));
        }
        double as_is = NAN;
        if (a.as_is) try {
            const opgen::ComputeDef def = library.load(a.op);
            opgen::BoundShape shape = opgen::bind_shape(def, canonical);
            opgen::SchedulePoint point = opgen::SchedulePoint::from_json(nlohmann::json::parse(row.code.schedule_json));
            auto exact = opgen::db::load_kernel_code(
                opgen::compile_kernel_code(def, shape, point, target, row.code.schedule_json), "as-is");
            Tensors te(*exact);
            time_calls(*exact, te, 1);
            std::vector<double> e, t3;
            for (int r = 0; r < 3; r++) {
                e.push_back(time_calls(*exact, te, a.min_ms));
                t3.push_back(time_calls(tuned, tt, a.min_ms));
            }
            as_is = median(e) / median(t3);
        } catch (const opgen::UserError &) {
            // a tile above the shape's extent: no exact kernel of that schedule at S
        }
        std::printf("  %s %s generic-from %s ratio %.3f as-is-exact %.3f score %.3g measured %.3f\n", a.op.c_str(),
                    canonical.c_str(), row.key.shape.c_str(), median(b) / median(t2), as_is,
                    scores.count(row.key.shape) ? scores[row.key.shape] : NAN,
                    measured.count(row.key.shape) ? measured[row.key.shape] : NAN);
    }
}

// What find() costs: the first call (ranking included), a repeated one, and the parts of the
// first, the model loaded: its pick over a sample of the legal space, the ranking of every
// candidate.
struct FindCosts {
    double first_us = 0, again_us = 0, predict_us = 0, rank_us = 0;
};

opgen::db::LookupAnswer timed_find(opgen::db::KernelLookup &lookup, opgen::db::LookupExtension &extension,
                                   const opgen::db::LookupRequest &request, FindCosts &costs) {
    Clock::time_point t0 = Clock::now();
    opgen::db::LookupAnswer answer = lookup.find(request);
    costs.first_us = micros_since(t0);
    t0 = Clock::now();
    lookup.find(request);
    costs.again_us = micros_since(t0);
    if (answer.kind == opgen::db::AnswerKind::None) fail("no answer for " + request.shape + ": " + answer.reason);
    if (answer.kind == opgen::db::AnswerKind::Exact) fail("the cache has a kernel of " + request.shape + ": not a never-tuned shape");
    std::optional<opgen::db::ShapeInfo> info = extension.resolve(request.op_name, request.shape);
    if (!info) fail("the extension does not resolve " + request.shape);
    t0 = Clock::now();
    extension.predict(request, *info);
    costs.predict_us = micros_since(t0);
    std::vector<std::string> schedules;
    for (const opgen::db::RankedCandidate &r : answer.ranked) schedules.push_back(r.schedule_json);
    t0 = Clock::now();
    extension.rank(request, *info, schedules);
    costs.rank_us = micros_since(t0);
    return answer;
}

}  // namespace

int main(int argc, char **argv) {
    Args a = parse(argc, argv);
    opgen::OpLibrary library = opgen::OpLibrary::standard();
    opgen::Target target = opgen::host_target();
    if (a.target != target.name + ":t1") fail("the cache's target '" + a.target + "' is not this host's at one thread");
    auto lookup = opgen::db::open_kernel_lookup(a.db);
    std::shared_ptr<opgen::db::LookupExtension> extension = opgen::tuner::make_lookup_extension(library, target, 1, a.db);
    lookup->set_extension(extension);
    opgen::db::LookupRequest request;
    request.op_name = a.op;
    request.shape = a.shape;
    request.target = a.target;
    FindCosts costs;
    opgen::db::LookupAnswer answer = timed_find(*lookup, *extension, request, costs);
    lookup->set_measured_good_enough(0);
    opgen::db::LookupAnswer model_answer = lookup->find(request);

    std::string why;
    std::shared_ptr<const opgen::db::LoadedKernel> generic = lookup->kernel(request, &why);
    if (!generic || !generic->generic()) fail("no generic kernel for " + a.shape + ": " + why);
    request.shape = generic->shape();  // canonical, as the tuned cache keys it
    auto tuned_lookup = opgen::db::open_kernel_lookup(a.tuned_db);
    std::shared_ptr<const opgen::db::LoadedKernel> tuned = tuned_lookup->kernel(request, &why);
    if (!tuned || tuned->generic()) fail("no exact kernel of " + a.shape + " in " + a.tuned_db + ": " + why);
    auto chosen = answer_kernel(answer, a.op, library, target, generic, "the chosen answer for " + a.shape);
    auto model = answer_kernel(model_answer, a.op, library, target, generic, "the model's answer for " + a.shape);

    Timed t = time_interleaved({generic, chosen, model, tuned}, a, {"generic", "chosen", "model", "tuned"});
    double mg = t.medians[0], mc = t.medians[1], mm = t.medians[2], mt = t.medians[3];
    std::printf("%s %s generic_ms %.4f chosen_ms %.4f model_ms %.4f tuned_ms %.4f generic_ratio %.3f chosen_ratio %.3f "
                "model_ratio %.3f chosen %s model %s best_measured %.3f generic_from %s find_first_us %.0f "
                "find_again_us %.1f predict_us %.0f rank_us %.0f candidates %zu ranked [%s]\n",
                a.op.c_str(), generic->shape().c_str(), mg, mc, mm, mt, mg / mt, mc / mt, mm / mt,
                opgen::db::answer_kind_name(answer.kind), opgen::db::answer_kind_name(model_answer.kind),
                best_measured(model_answer), generic_source(model_answer).c_str(), costs.first_us, costs.again_us,
                costs.predict_us, costs.rank_us, model_answer.ranked.size(), ranked_text(model_answer).c_str());
    if (a.all_generic) time_all_generic(a, library, target, model_answer, request.shape, *tuned);
    return 0;
}
