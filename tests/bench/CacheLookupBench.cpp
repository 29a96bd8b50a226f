// The kernel-cache lookup benchmark (scripts/cache-bench.sh, scripts/cache-compare.sh).
//
//   opgen_cache_bench lookup --db FILE [--lookups N]
//       Fills FILE (when empty) with 100,000 kernel rows of matmul and conv2d_nchw on target
//       x86-64-avx512:t1, plus 5,000 on x86-64-avx2:t1 that no query may see, and times answers
//       through the library: exact (no extension, and with the tuner's extension), derived and
//       predicted for matmul and conv2d_nchw. Prints p50/p99 in microseconds.
//       Then, for the issue's shapes (matmul 1024^3 and 384x768x512, conv2d_nchw 56^2 x 64 -> 64
//       and 28^2 x 128 -> 128), `derived` and `predicted` answers computed afresh each time
//       (remembered answers forgotten), p50/p99; and how those answers compare with the ones the
//       enumerated legal space gives (the nearest legal tiling; the roofline's best of a
//       same-sized uniform sample), with the time the enumeration takes.
//   opgen_cache_bench compare --db FILE [--trials N]
//       Tunes a few base shapes per op into FILE, then for 10 shapes never tuned: a full tuning of
//       the shape (same trial budget), the library's derived answer and the model's predicted
//       answer, measured interleaved in 3 rounds; prints each one's median over the tuned
//       winner's.
#include "store/KernelCache.h"
#include "runtime/Lookup.h"
#include "core/OpLibrary.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "tuner/Features.h"
#include "tuner/Measurer.h"
#include "tuner/Predict.h"
#include "core/TilingRules.h"
#include "core/TilingSpace.h"
#include "tuner/Tuner.h"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace opgen;

namespace {

const char *const kTarget = "x86-64-avx512";

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

void check(int rc, sqlite3 *db, const char *what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        throw std::runtime_error(std::string(what) + ": " + sqlite3_errmsg(db));
    }
}

struct Grid {
    std::string op;
    std::string base_shape;  // the shape whose legal points fill the rows
    std::vector<std::string> shapes;
};

std::vector<int> sizes(int first, int step, int count) {
    std::vector<int> v;
    for (int i = 0; i < count; i++) v.push_back(first + i * step);
    return v;
}

// 64,000 matmul shapes and 36,000 conv2d_nchw shapes.
std::vector<Grid> grids() {
    Grid mm{"matmul", "M=256,N=256,K=256", {}};
    for (int m : sizes(16, 32, 40))
        for (int n : sizes(16, 32, 40))
            for (int k : sizes(16, 32, 40))
                mm.shapes.push_back("M=" + std::to_string(m) + ",N=" + std::to_string(n) + ",K=" + std::to_string(k));
    Grid conv{"conv2d_nchw", "N=1,C=64,H=28,W=28,F=64", {}};
    for (int c : sizes(8, 8, 30))
        for (int hw : sizes(7, 2, 30))
            for (int f : sizes(8, 8, 40))
                conv.shapes.push_back("N=1,C=" + std::to_string(c) + ",H=" + std::to_string(hw) + ",W=" +
                                      std::to_string(hw) + ",F=" + std::to_string(f));
    return {mm, conv};
}

// Bulk-inserts kernel rows with SQLite directly, in one transaction (put_kernel commits per row).
void fill(const std::string &path, const OpLibrary &lib) {
    db::open_kernel_cache(path);  // creates the schema
    sqlite3 *db = nullptr;
    check(sqlite3_open(path.c_str(), &db), db, "open");
    check(sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr), db, "begin");
    sqlite3_stmt *insert = nullptr;
    check(sqlite3_prepare_v2(db,
                             "INSERT INTO kernels VALUES (?1, ?2, ?3, 'f32', ?4, ?5, ?6, ?7, '// source', ?8, 100, "
                             "1, 1, 24, '2026-01-01T00:00:00Z')",
                             -1, &insert, nullptr),
          db, "prepare");
    Target target = load_target(kTarget);
    std::mt19937_64 rng(7);
    for (const Grid &g : grids()) {
        ComputeDef def = lib.load(g.op);
        BoundShape base = bind_shape(def, g.base_shape);
        opgen::TilingSpace space = opgen::make_tiling_space(def, base, target, 1);
        std::vector<std::string> points;
        for (size_t i = 0; i < std::min<size_t>(64, space.legal.size()); i++) {
            points.push_back(space.legal[(i * 7919) % space.legal.size()].to_json().dump());
        }
        std::string hash = definition_hash(def.source);
        size_t n = 0;
        for (const std::string &shape_text : g.shapes) {
            BoundShape shape = bind_shape(def, shape_text);
            // Every 20th row also on a second target, which no query below may return.
            for (const char *t : {"x86-64-avx512:t1", "x86-64-avx2:t1"}) {
                if (std::strcmp(t, "x86-64-avx2:t1") == 0 && n % 20 != 0) continue;
                sqlite3_reset(insert);
                sqlite3_bind_text(insert, 1, def.name.c_str(), -1, SQLITE_TRANSIENT);
                sqlite3_bind_text(insert, 2, hash.c_str(), -1, SQLITE_TRANSIENT);
                sqlite3_bind_text(insert, 3, shape.canonical.c_str(), -1, SQLITE_TRANSIENT);
                sqlite3_bind_text(insert, 4, t, -1, SQLITE_STATIC);
                sqlite3_bind_text(insert, 5, opgen::halide_version().c_str(), -1, SQLITE_TRANSIENT);
                sqlite3_bind_text(insert, 6, opgen::tuner_version(), -1, SQLITE_STATIC);
                sqlite3_bind_text(insert, 7, points[rng() % points.size()].c_str(), -1, SQLITE_TRANSIENT);
                sqlite3_bind_double(insert, 8, 0.01 + double(rng() % 1000) / 100.0);
                check(sqlite3_step(insert), db, "insert");
            }
            n++;
        }
    }
    sqlite3_finalize(insert);
    check(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), db, "commit");
    sqlite3_close(db);
}

db::LookupRequest request(const std::string &op, const std::string &shape, const std::string &target) {
    db::LookupRequest r;
    r.op_name = op;
    r.shape = shape;
    r.target = target;
    return r;
}

// Times find() on each request; checks every answer is of `kind`.
void time_answers(const char *label, db::KernelLookup &lookup, const std::vector<db::LookupRequest> &requests,
                  db::AnswerKind kind) {
    std::vector<double> us;
    for (const auto &r : requests) {
        auto start = std::chrono::steady_clock::now();
        db::LookupAnswer a = lookup.find(r);
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
        if (a.kind != kind) {
            throw std::runtime_error(std::string(label) + ": " + r.shape + " answered " + db::answer_kind_name(a.kind) +
                                     " (" + a.reason + "), expected " + db::answer_kind_name(kind));
        }
    }
    std::printf("%-34s n=%-6zu p50 %9.1f us   p99 %9.1f us   max %9.1f us\n", label, us.size(), percentile(us, 0.5),
                percentile(us, 0.99), percentile(us, 1.0));
    std::fflush(stdout);
}

// Measurements with real features and roofline-derived labels (times a seeded noise) on the
// target key `target_key`, so that predict() has a trained model to run, as it would on a cache
// filled by tuning. Only the prediction's latency is measured with it, never its quality.
void add_training_rows(const std::string &path, const OpLibrary &lib, int threads) {
    auto cache = db::open_kernel_cache(path);
    Target target = load_target(kTarget);
    std::mt19937_64 rng(5);
    std::lognormal_distribution<double> noise(0.0, 0.2);
    for (const auto &[op, shape_text] : std::vector<std::pair<std::string, std::string>>{
             {"matmul", "M=256,N=256,K=256"}, {"matmul", "M=512,N=128,K=384"},
             {"conv2d_nchw", "N=1,C=64,H=28,W=28,F=64"}, {"conv2d_nchw", "N=1,C=32,H=56,W=56,F=32"}}) {
        ComputeDef def = lib.load(op);
        BoundShape shape = bind_shape(def, shape_text);
        opgen::TilingSpace space = opgen::make_tiling_space(def, shape, target, threads);
        db::KernelKey key = opgen::kernel_key(def, shape, target, threads);
        std::vector<db::MeasurementRecord> rows;
        for (const SchedulePoint &p : space.sample(60, 3)) {
            db::MeasurementRecord m;
            m.key = key;
            m.schedule_json = p.to_json().dump();
            m.feature_rows = tuner::group_features(def, shape, target, space, p, threads, m.features);
            double seconds = tuner::roofline_seconds(def, shape, target, space, p, threads) * noise(rng);
            m.time_ms = seconds * 1e3;
            m.gflops = flop_count(def, shape) / seconds / 1e9;
            rows.push_back(std::move(m));
        }
        cache->record_measurements(rows);
    }
}

double median(std::vector<double> v) {
    if (v.empty()) return std::nan("");
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The issue's shapes: every answer for them computed afresh `repeats` times.
const std::vector<std::pair<std::string, std::string>> kIssueShapes = {
    {"matmul", "M=1024,N=1024,K=1024"},
    {"matmul", "M=384,N=768,K=512"},
    {"conv2d_nchw", "N=1,C=64,H=56,W=56,F=64"},
    {"conv2d_nchw", "N=1,C=128,H=28,W=28,F=128"}};

void time_fresh_answers(db::KernelLookup &lookup, const std::shared_ptr<db::LookupExtension> &extension,
                        const std::string &target_key, db::AnswerKind kind, int repeats) {
    for (const auto &[op, shape] : kIssueShapes) {
        std::vector<double> us;
        lookup.set_extension(extension);
        lookup.find(request(op, shape, target_key));  // the op's first call reads its tuned shapes or trains its model
        for (int i = 0; i < repeats; i++) {
            lookup.set_extension(extension);  // forgets the remembered answers, keeps the tuned shapes read
            auto start = std::chrono::steady_clock::now();
            db::LookupAnswer a = lookup.find(request(op, shape, target_key));
            us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
            if (a.kind != kind) {
                throw std::runtime_error(op + " " + shape + " answered " + db::answer_kind_name(a.kind) + " (" +
                                         a.reason + ")");
            }
        }
        std::printf("  %-9s %-12s %-26s n=%-4d p50 %9.1f us   p99 %9.1f us   max %9.1f us\n",
                    db::answer_kind_name(kind), op.c_str(), shape.c_str(), repeats, percentile(us, 0.5),
                    percentile(us, 0.99), percentile(us, 1.0));
        std::fflush(stdout);
    }
}

double log_distance(const SchedulePoint &a, const SchedulePoint &b) {
    auto gap = [](int64_t x, int64_t y) { return std::fabs(std::log(double(x) / double(y))); };
    double d = a.vector_width == b.vector_width ? 0 : 1;
    for (size_t i = 0; i < a.axes.size(); i++) d += gap(a.axes[i].tile, b.axes[i].tile) + gap(a.axes[i].reg, b.axes[i].reg);
    for (size_t j = 0; j < a.reduce.size(); j++) d += gap(a.reduce[j].block, b.reduce[j].block);
    return d;
}

// The answers without enumeration against the enumerated space's, per issue shape: for `derived`,
// the neighbour's re-fitted point repaired (repair_point) against the nearest legal tiling of the
// whole space, by log-distance and roofline estimate; for `predicted` (roofline ranking only, as
// the model is the same in both), the best of a uniform sample of `pool` points drawn from the
// rules against the best of one drawn from the enumerated space, over `seeds` seeds.
void compare_with_enumeration(const OpLibrary &lib, const Target &target, const std::string &path, int threads,
                              int pool, int seeds) {
    auto lookup = db::open_kernel_lookup(path);
    lookup->set_extension(tuner::make_lookup_extension(lib, target, 1, path));
    std::printf("%-12s %-26s %10s %10s %9s %9s %9s %11s\n", "op", "shape", "enum ms", "rules ms", "der dist",
                "enum dist", "der roof", "pred roof");
    for (const auto &[op, shape_text] : kIssueShapes) {
        ComputeDef def = lib.load(op);
        BoundShape shape = bind_shape(def, shape_text);
        auto start = std::chrono::steady_clock::now();
        opgen::TilingSpace space = opgen::make_tiling_space(def, shape, target, threads);
        double enum_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        start = std::chrono::steady_clock::now();
        opgen::TilingRules rules = opgen::make_tiling_rules(def, shape, target, threads);
        double rules_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        // Derived (on the 1-thread target the neighbours were tuned for): the answer against the one the
        // enumerated space gave, the legal tiling nearest to the neighbour's re-fitted point (the first of
        // equals) with that point's knobs where they are valid.
        db::LookupAnswer derived = lookup->find(request(op, shape_text, "x86-64-avx512:t1"));
        if (derived.kind != db::AnswerKind::Derived) throw std::runtime_error(op + " " + shape_text + ": not derived");
        opgen::TilingSpace space1 = opgen::make_tiling_space(def, shape, target, 1);
        std::optional<db::ShapeInfo> info = tuner::make_lookup_extension(lib, target, 1, "")->resolve(op, shape_text);
        db::KernelKey from = derived.kernel.key;
        from.shape = derived.from_shape;
        std::string neighbour = db::open_kernel_cache(path, db::OpenMode::ReadOnly)->lookup(from).value().schedule_json;
        SchedulePoint fitted =
            SchedulePoint::from_json(nlohmann::json::parse(*db::refit_schedule(neighbour, info->extents)));
        SchedulePoint answer = SchedulePoint::from_json(nlohmann::json::parse(derived.kernel.schedule_json));
        SchedulePoint enumerated = fitted;
        if (!space1.contains(fitted)) {
            double nearest = std::numeric_limits<double>::infinity();
            for (const SchedulePoint &t : space1.legal.tilings()) {
                double d = log_distance(t, fitted);
                if (d < nearest) {
                    nearest = d;
                    enumerated = t;
                }
            }
            SchedulePoint with_knobs = enumerated;
            with_knobs.outer_order = fitted.outer_order;
            with_knobs.tile_order = fitted.tile_order;
            with_knobs.parallel_loops = fitted.parallel_loops;
            with_knobs.packed = fitted.packed;
            with_knobs.prefetch = fitted.prefetch;
            with_knobs.unroll = fitted.unroll;
            if (space1.contains(with_knobs)) enumerated = with_knobs;
        }
        double der_roof = tuner::roofline_seconds(def, shape, target, space1, answer, 1) /
                          tuner::roofline_seconds(def, shape, target, space1, enumerated, 1);
        // Predicted: the roofline's best of a uniform sample, drawn both ways.
        std::vector<double> ratios;
        for (int seed = 1; seed <= seeds; seed++) {
            auto best = [&](const std::vector<SchedulePoint> &points) {
                double b = std::numeric_limits<double>::infinity();
                for (const SchedulePoint &p : points) b = std::min(b, tuner::roofline_seconds(def, shape, target, space, p, threads));
                return b;
            };
            double from_rules = best(opgen::sample_legal_points(rules, def, shape, target, size_t(pool), uint64_t(seed),
                                                                size_t(pool) * 64));
            double from_space = best(space.sample(size_t(pool), uint64_t(seed)));
            ratios.push_back(from_rules / from_space);
        }
        std::printf("%-12s %-26s %10.1f %10.3f %9.3f %9.3f %9.3f %11.3f\n", op.c_str(), shape_text.c_str(), enum_ms,
                    rules_ms, log_distance(answer, fitted), log_distance(enumerated, fitted), der_roof, median(ratios));
        std::fflush(stdout);
    }
    std::printf("  der dist: the derived answer's log-distance from the neighbour's re-fitted point; enum dist: the\n"
                "  answer the enumerated space gave (the nearest legal tiling); der roof: roofline estimate of the\n"
                "  answer over the enumerated one's; pred roof: median over %d seeds of the roofline-best of %d\n"
                "  points sampled from the rules over the same sampled from the enumerated space (< 1: better)\n",
                seeds, pool);
}

int run_lookup(const std::string &path, int lookups) {
    OpLibrary lib = OpLibrary::standard();
    Target target = load_target(kTarget);
    {
        db::CacheStats stats = db::open_kernel_cache(path)->stats();
        if (stats.kernels == 0) {
            auto start = std::chrono::steady_clock::now();
            fill(path, lib);
            add_training_rows(path, lib, 2);
            std::printf("filled %s in %.1f s\n", path.c_str(),
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
        stats = db::open_kernel_cache(path)->stats();
        std::printf("%s: %lld kernel rows (100,000 on x86-64-avx512:t1), %lld measurements\n", path.c_str(),
                    static_cast<long long>(stats.kernels), static_cast<long long>(stats.measurements));
    }
    std::mt19937_64 rng(11);
    std::vector<Grid> g = grids();
    std::vector<ComputeDef> defs{lib.load("matmul"), lib.load("conv2d_nchw")};
    // Exact without the extension: the full canonical shape, names in reverse order (the library
    // sorts them). Exact with it: the short form a runtime writes (defaults filled in by the op),
    // each shape bound by the op the first time it is asked.
    std::vector<db::LookupRequest> exact_full, exact_short;
    for (int i = 0; i < lookups; i++) {
        const Grid &grid = g[i % 2];
        std::string shape = grid.shapes[rng() % grid.shapes.size()];
        exact_short.push_back(request(grid.op, shape, "x86-64-avx512:t1"));
        std::vector<std::string> parts;
        std::string canonical = bind_shape(defs[i % 2], shape).canonical;
        for (size_t at = 0, comma; at <= canonical.size(); at = comma + 1) {
            comma = std::min(canonical.find(',', at), canonical.size());
            parts.push_back(canonical.substr(at, comma - at));
        }
        std::string reversed;
        for (auto it = parts.rbegin(); it != parts.rend(); ++it) reversed += (reversed.empty() ? "" : ",") + *it;
        exact_full.push_back(request(grid.op, reversed, "x86-64-avx512:t1"));
    }
    // Derived: off the grid (the grid's sizes are 16 + 32i, 8 + 8i, 7 + 2i). Reduction extents
    // (K, C) keep a divisor that is a multiple of 16: with none, the legal space of a large shape
    // is empty (the whole reduction panel must fit L1) and no answer can be derived.
    std::vector<db::LookupRequest> derived_mm, derived_conv, predicted_mm, predicted_conv;
    // New shapes, then the same ones again (remembered answers).
    for (int i = 0; i < 100; i++) {
        auto odd = [&](int lo, int hi) { return std::to_string(lo + 2 * int(rng() % size_t((hi - lo) / 2)) + 1); };
        derived_mm.push_back(request("matmul",
                                     "M=" + odd(20, 1200) + ",N=" + odd(20, 1200) +
                                         ",K=" + std::to_string(32 * (1 + int(rng() % 37))),
                                     "x86-64-avx512:t1"));
        std::string hw = std::to_string(8 + 2 * int(rng() % 29));
        derived_conv.push_back(request("conv2d_nchw",
                                       "N=1,C=" + std::to_string(16 * (1 + int(rng() % 14))) + ",H=" + hw + ",W=" + hw +
                                           ",F=" + std::to_string(12 + 8 * int(rng() % 38)),
                                       "x86-64-avx512:t1"));
    }
    for (int i = 0; i < 20; i++) {
        predicted_mm.push_back(request("matmul", derived_mm[i].shape, "x86-64-avx512:t2"));
        predicted_conv.push_back(request("conv2d_nchw", derived_conv[i].shape, "x86-64-avx512:t2"));
    }

    auto plain = db::open_kernel_lookup(path);
    time_answers("warm-up", *plain, std::vector<db::LookupRequest>(exact_full.begin(), exact_full.begin() + 200),
                 db::AnswerKind::Exact);
    time_answers("exact, library alone", *plain, exact_full, db::AnswerKind::Exact);
    auto with = db::open_kernel_lookup(path);
    with->set_extension(tuner::make_lookup_extension(lib, target, 1, path));
    time_answers("exact, with the tuner's extension", *with, exact_short, db::AnswerKind::Exact);
    // A runtime asks for the same shapes again: their binding is remembered.
    time_answers("exact, with it, shapes asked before", *with, exact_short, db::AnswerKind::Exact);
    // The first derived call of an op reads its tuned shapes once; later ones reuse them.
    time_answers("derived matmul (first call)", *with, {derived_mm[0]}, db::AnswerKind::Derived);
    time_answers("derived matmul, new shapes", *with, derived_mm, db::AnswerKind::Derived);
    time_answers("derived matmul, asked again", *with, derived_mm, db::AnswerKind::Derived);
    time_answers("derived conv2d_nchw (first call)", *with, {derived_conv[0]}, db::AnswerKind::Derived);
    time_answers("derived conv2d_nchw, new shapes", *with, derived_conv, db::AnswerKind::Derived);
    time_answers("derived conv2d_nchw, asked again", *with, derived_conv, db::AnswerKind::Derived);
    auto predicting = db::open_kernel_lookup(path);
    std::shared_ptr<db::LookupExtension> predictor = tuner::make_lookup_extension(lib, target, 2, path);
    predicting->set_extension(predictor);
    // The first predicted call of an op trains its model on the cache's measurements.
    time_answers("predicted matmul (first: trains)", *predicting, {predicted_mm[0]}, db::AnswerKind::Predicted);
    time_answers("predicted matmul", *predicting, predicted_mm, db::AnswerKind::Predicted);
    time_answers("predicted conv2d (first: trains)", *predicting, {predicted_conv[0]}, db::AnswerKind::Predicted);
    time_answers("predicted conv2d_nchw", *predicting, predicted_conv, db::AnswerKind::Predicted);

    const int repeats = 50;
    std::printf("the issue's shapes, each answer computed afresh (the op's tuned shapes and model already read):\n");
    auto deriving = db::open_kernel_lookup(path);
    time_fresh_answers(*deriving, tuner::make_lookup_extension(lib, target, 1, path), "x86-64-avx512:t1",
                       db::AnswerKind::Derived, repeats);
    time_fresh_answers(*predicting, predictor, "x86-64-avx512:t2", db::AnswerKind::Predicted, repeats);
    std::printf("the same answers against the enumerated legal space's (2 threads for predicted):\n");
    compare_with_enumeration(lib, target, path, 2, tuner::PredictOptions{}.max_pool, 5);
    return 0;
}

// The 10-shape experiment: how good are derived and predicted answers against tuning the shape?
int run_compare(const std::string &path, int trials) {
    OpLibrary lib = OpLibrary::standard();
    Target target = load_target("host");
    const int threads = 1;
    tuner::TuneOptions o;
    o.trials = trials;
    o.threads = threads;
    o.seed = 1;
    o.jobs = 1;
    const std::vector<std::pair<std::string, std::string>> base = {
        {"matmul", "M=128,N=128,K=128"},          {"matmul", "M=256,N=256,K=256"},
        {"matmul", "M=512,N=512,K=512"},          {"conv2d_nchw", "N=1,C=32,H=56,W=56,F=32"},
        {"conv2d_nchw", "N=1,C=64,H=28,W=28,F=64"}, {"conv2d_nchw", "N=1,C=128,H=14,W=14,F=128"}};
    const std::vector<std::pair<std::string, std::string>> fresh = {
        {"matmul", "M=192,N=192,K=192"},          {"matmul", "M=384,N=256,K=320"},
        {"matmul", "M=100,N=300,K=200"},          {"matmul", "M=640,N=512,K=128"},
        {"matmul", "M=64,N=512,K=256"},           {"conv2d_nchw", "N=1,C=48,H=28,W=28,F=48"},
        {"conv2d_nchw", "N=1,C=64,H=56,W=56,F=64"}, {"conv2d_nchw", "N=1,C=96,H=14,W=14,F=128"},
        {"conv2d_nchw", "N=1,C=32,H=28,W=28,F=64"}, {"conv2d_nchw", "N=1,C=128,H=7,W=7,F=256"}};
    {
        auto cache = db::open_kernel_cache(path);
        for (const auto &[op, shape] : base) {
            ComputeDef def = lib.load(op);
            bool cached = false;
            auto start = std::chrono::steady_clock::now();
            db::KernelRecord r = tuner::tune_into_cache(def, bind_shape(def, shape), target, o, *cache, false, &cached);
            std::printf("base %-12s %-28s %8.3f ms%s (%.0f s)\n", op.c_str(), r.key.shape.c_str(), r.time_ms,
                        cached ? " (cached)" : "",
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
            std::fflush(stdout);
        }
    }
    auto lookup = db::open_kernel_lookup(path);
    auto extension = tuner::make_lookup_extension(lib, target, threads, path);
    lookup->set_extension(extension);
    std::printf("%-12s %-30s %10s %10s %10s %9s %9s  %s\n", "op", "shape", "tuned_ms", "derived", "predicted",
                "der/tuned", "pred/tun", "derived from");
    std::vector<double> der_ratios, pred_ratios;
    for (const auto &[op, shape_text] : fresh) {
        ComputeDef def = lib.load(op);
        BoundShape shape = bind_shape(def, shape_text);
        db::KernelKey key = opgen::kernel_key(def, shape, target, threads);
        db::LookupRequest r = request(op, shape_text, key.target);
        db::LookupAnswer derived = lookup->find(r);
        std::optional<db::ShapeInfo> info = extension->resolve(op, shape_text);
        std::optional<db::LookupAnswer> predicted = extension->predict(r, *info);
        tuner::TuneResult tuned = tuner::tune(def, shape, target, o);
        if (derived.kind != db::AnswerKind::Derived || !predicted || !tuned.found) {
            std::printf("%-12s %-30s skipped: derived %s, predicted %s, tuned %s\n", op.c_str(), shape.canonical.c_str(),
                        db::answer_kind_name(derived.kind), predicted ? "yes" : "no", tuned.found ? "yes" : "no");
            continue;
        }
        std::vector<SchedulePoint> points = {
            tuned.best, SchedulePoint::from_json(nlohmann::json::parse(derived.kernel.schedule_json)),
            SchedulePoint::from_json(nlohmann::json::parse(predicted->kernel.schedule_json))};
        // Interleaved rounds (tuned, derived, predicted, tuned, ...): the clock wanders.
        tuner::TaskContext task(def, shape, target, 1);
        std::vector<std::vector<double>> ms(3);
        for (int round = 0; round < 3; round++) {
            for (size_t c = 0; c < 3; c++) {
                tuner::MeasureResult m = tuner::measure(task, points[c], 60);
                if (m.ok()) ms[c].push_back(m.timing.median_ms);
            }
        }
        double t = median(ms[0]), d = median(ms[1]), p = median(ms[2]);
        der_ratios.push_back(d / t);
        pred_ratios.push_back(p / t);
        std::printf("%-12s %-30s %10.3f %10.3f %10.3f %9.2f %9.2f  %s\n", op.c_str(), shape.canonical.c_str(), t, d, p,
                    d / t, p / t, derived.from_shape.c_str());
        std::fflush(stdout);
    }
    if (!der_ratios.empty()) {
        std::printf("median over %zu shapes: derived/tuned %.2f, predicted/tuned %.2f (goal <= 1.2); "
                    "worst derived %.2f, worst predicted %.2f\n",
                    der_ratios.size(), median(der_ratios), median(pred_ratios),
                    *std::max_element(der_ratios.begin(), der_ratios.end()),
                    *std::max_element(pred_ratios.begin(), pred_ratios.end()));
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    try {
        if (argc < 4 || std::strcmp(argv[2], "--db") != 0) {
            std::fprintf(stderr, "usage: opgen_cache_bench lookup|compare --db FILE [--lookups N] [--trials N]\n");
            return 2;
        }
        std::string mode = argv[1], path = argv[3];
        int n = argc >= 6 ? std::atoi(argv[5]) : 0;
        if (mode == "lookup") return run_lookup(path, n > 0 ? n : 20000);
        if (mode == "compare") return run_compare(path, n > 0 ? n : 24);
        std::fprintf(stderr, "error: unknown mode '%s'\n", mode.c_str());
        return 2;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
