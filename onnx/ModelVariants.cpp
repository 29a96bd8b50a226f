#include "onnx/ModelVariants.h"

#include "base/Error.h"
#include "codegen/KernelKeys.h"
#include "core/Target.h"
#include "onnx/ModelProgram.h"
#include "store/KernelCache.h"
#include "store/VariantStore.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

namespace opgen::onnx_import {

namespace {

using nlohmann::json;

void say(const VariantTuneContext &ctx, const std::string &line) {
    if (ctx.log) ctx.log(line);
}

// The stored variant at `level` among `stored`, if any.
const db::VariantRecord *at_level(const std::vector<db::VariantRecord> &stored, double level) {
    for (const db::VariantRecord &v : stored)
        if (std::fabs(v.level - level) < 1e-9) return &v;
    return nullptr;
}

bool covers(const std::vector<db::VariantRecord> &stored, const std::vector<double> &levels) {
    for (double l : levels)
        if (!at_level(stored, l)) return false;
    return at_level(stored, 0) != nullptr;
}

// The variants of one distinct kernel from the cache, tuned into it first when a level is missing.
std::vector<db::VariantRecord> kernel_variants(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                               const ModelVariantOptions &o, const VariantTuneContext &ctx) {
    const db::KernelKey key = opgen::kernel_key(def, shape, target, ctx.threads);
    std::vector<db::VariantRecord> stored;
    if (std::filesystem::exists(ctx.db_path)) stored = db::variants_for(ctx.db_path, key);
    if (covers(stored, o.levels) || !o.tune) return stored;
    say(ctx, "variants: tuning " + def.name + " at " + shape.canonical + " under contention levels " +
                 json(o.levels).dump());
    tuner::VariantOptions vo = o.tuning;
    vo.levels = o.levels;
    tuner::TuneOptions to = ctx.tune_options;
    to.threads = ctx.threads;
    auto cache = db::open_kernel_cache(ctx.db_path, db::OpenMode::ReadWrite);
    cache->set_signing_key(ctx.signing_key);
    tuner::tune_variants(def, shape, target, to, vo, *cache, ctx.db_path);
    return db::variants_for(ctx.db_path, key);
}

// One kernel's entries from its stored variants: level 0 is the library's own kernel; a level
// whose variant differs from the quiet winner gets its own entry point.
std::vector<LevelEntry> level_entries(const std::vector<db::VariantRecord> &stored, const std::vector<double> &levels,
                                      const std::string &function) {
    const db::VariantRecord *quiet = at_level(stored, 0);
    std::vector<LevelEntry> out(levels.size());
    for (size_t l = 1; l < levels.size() && quiet; l++) {
        const db::VariantRecord *v = at_level(stored, levels[l]);
        if (!v || !(v->quiet_time_ms > 0) || !(quiet->quiet_time_ms > 0)) continue;
        out[l].drift = v->time_ms / v->quiet_time_ms;
        if (v->schedule_json == quiet->schedule_json) continue;
        out[l].function = function + "_l" + std::to_string(l);
        out[l].point_json = v->schedule_json;
        out[l].rel_quiet = v->quiet_time_ms / quiet->quiet_time_ms;
    }
    return out;
}

// The expected drift at each level, weighted by each kernel's quiet time in the tuning and its uses.
std::vector<double> expected_drift(const ModelVariants &mv, const std::vector<double> &quiet_ms) {
    std::vector<double> drift(mv.levels.size(), 1.0);
    for (size_t l = 1; l < mv.levels.size(); l++) {
        double slow = 0, quiet = 0;
        for (size_t k = 0; k < mv.kernels.size(); k++) {
            if (mv.kernels[k].empty()) continue;
            const LevelEntry &e = mv.kernels[k][l];
            slow += quiet_ms[k] * e.rel_quiet * e.drift;
            quiet += quiet_ms[k] * e.rel_quiet;
        }
        if (quiet > 0) drift[l] = slow / quiet;
    }
    return drift;
}

std::string numbers(const std::vector<double> &values) {
    std::ostringstream s;
    s.precision(17);
    for (size_t i = 0; i < values.size(); i++) s << (i ? ", " : "") << values[i];
    return s.str();
}

// The policy over the tables (docs/design.md §7.6); @M@ is the model's name.
const char *policy_source = R"C(
/* Bandwidth variants (docs/design.md §7.6): the pipeline runs one level's set; after each run the
 * memory-bound kernels' time, each divided by its variant's quiet time over the quiet winner's, is
 * the run's quiet-equivalent time, and that over the least such time of any run is the drift (the
 * least of whole runs, not a sum of each kernel's least: summed minima of a few microseconds each
 * lie below every real run). Level l's contention starts at boundary(l); the level moves up when
 * the drift reaches the next level's boundary, down when it falls below the current level's
 * boundary less half the quiet ratio's margin, on `window_runs` runs in a row. */
static char error_text[512]; /* the program's, defined again below (a tentative definition) */
static int level, pinned_level = -1, window_runs = 3, streak, streak_dir;
static double quiet_ratio = 1.1, last_drift, run_seconds_of[@M@_KERNELS], quiet_run;
static int64_t switches, runs_at[LEVELS];

static int (*kernel_entry(int k))(void **) {
    return level_entry[k][level] ? level_entry[k][level] : kernels[k].entry[variant];
}

static int kernel_timed(int k) { return LEVELS > 1 && bound_kernel[k]; }

static void variant_kernel_done(int k, double seconds) { run_seconds_of[k] = seconds; }

static double boundary(int l) {
    double b = quiet_ratio;
    for (int j = 2; j <= l; j++) {
        double e = quiet_ratio * level_drift[j - 1];
        b = e > b * quiet_ratio ? e : b * quiet_ratio;
    }
    return b;
}

static void variant_run_done(void) {
    if (LEVELS < 2) return;
    double run = 0;
    for (int k = 0; k < @M@_KERNELS; k++)
        if (bound_kernel[k]) run += run_seconds_of[k] / rel_quiet[k][level];
    runs_at[level]++;
    if (!(run > 0)) return;
    int known = quiet_run > 0;
    if (!known || run < quiet_run) quiet_run = run;
    if (!known) return;
    last_drift = run / quiet_run;
    if (pinned_level >= 0) return;
    int dir = level + 1 < LEVELS && last_drift >= boundary(level + 1) ? 1
              : level > 0 && last_drift < boundary(level) / (1 + (quiet_ratio - 1) / 2) ? -1 : 0;
    if (dir != streak_dir) {
        streak_dir = dir;
        streak = 0;
    }
    if (dir == 0 || ++streak < window_runs) return;
    level += dir;
    switches++;
    streak = streak_dir = 0;
}

int @M@_variant_level(void) { return level; }
double @M@_variant_drift(void) { return last_drift; }
int64_t @M@_variant_switches(void) { return switches; }
int64_t @M@_variant_runs(int l) { return l >= 0 && l < LEVELS ? runs_at[l] : 0; }

int @M@_set_variant_level(int l) {
    if (l < -1 || l >= LEVELS) {
        snprintf(error_text, sizeof error_text, "variant level %d: the library has levels 0..%d (-1: automatic)", l,
                 LEVELS - 1);
        return -1;
    }
    pinned_level = l;
    if (l >= 0) level = l;
    streak = streak_dir = 0;
    return 0;
}

int @M@_set_variant_quiet_ratio(double ratio) {
    if (!(ratio > 1 && ratio < 100)) {
        snprintf(error_text, sizeof error_text, "variant quiet ratio %g: expected a ratio above 1 (e.g. 1.1)", ratio);
        return -1;
    }
    quiet_ratio = ratio;
    return 0;
}

int @M@_set_variant_window(int runs) {
    if (runs < 1) {
        snprintf(error_text, sizeof error_text, "variant window %d: expected at least 1 run", runs);
        return -1;
    }
    window_runs = runs;
    return 0;
}
)C";

}  // namespace

bool bandwidth_bound(const ComputeDef &def, const BoundShape &shape, double max_intensity) {
    const double bytes = min_bytes_moved(def, shape);
    return bytes > 0 && flop_count(def, shape) / bytes < max_intensity;
}

ModelVariants plan_model_variants(const CompiledModel &m, const std::vector<std::string> &functions,
                                  const ModelVariantOptions &o, const VariantTuneContext &ctx) {
    ModelVariants mv;
    mv.levels = {0};
    mv.levels.insert(mv.levels.end(), o.levels.begin(), o.levels.end());
    mv.kernels.resize(m.partition.kernels.size());
    const Target target = load_target(ctx.target);
    std::map<std::string, std::vector<LevelEntry>> by_function;
    std::map<std::string, double> quiet_of_function;
    std::vector<double> quiet_ms(m.partition.kernels.size(), 0);
    json kernels = json::array();
    for (size_t k = 0; k < m.partition.kernels.size(); k++) {
        if (!bandwidth_bound(m.defs[k], m.bounds[k], o.max_intensity)) continue;
        auto [it, fresh] = by_function.emplace(functions[k], std::vector<LevelEntry>{});
        if (fresh) {
            std::vector<db::VariantRecord> stored = kernel_variants(m.defs[k], m.bounds[k], target, o, ctx);
            it->second = level_entries(stored, mv.levels, functions[k]);
            const db::VariantRecord *quiet = at_level(stored, 0);
            quiet_of_function[functions[k]] = quiet ? quiet->quiet_time_ms : 0;
            json levels = json::array();
            for (const LevelEntry &e : it->second)
                levels.push_back({{"function", e.function.empty() ? functions[k] : e.function},
                                  {"rel_quiet", e.rel_quiet}, {"drift", e.drift}});
            kernels.push_back({{"function", functions[k]}, {"op", m.partition.kernels[k].op},
                               {"shape", m.canonical[k]}, {"levels", levels}});
        }
        mv.kernels[k] = it->second;
        quiet_ms[k] = quiet_of_function[functions[k]];
    }
    mv.level_drift = expected_drift(mv, quiet_ms);
    size_t entries = 0;
    for (const auto &[f, levels] : by_function)
        for (const LevelEntry &e : levels) entries += !e.function.empty();
    say(ctx, "variants: " + std::to_string(by_function.size()) + " memory-bound distinct kernel(s), " +
                 std::to_string(entries) + " extra entry point(s); expected drift by level " +
                 json(mv.level_drift).dump());
    mv.report = {{"levels", mv.levels}, {"max_intensity", o.max_intensity}, {"level_drift", mv.level_drift},
                 {"entry_points", entries}, {"kernels", kernels}};
    return mv;
}

std::string variant_declarations(const std::string &name) {
    std::ostringstream h;
    h << "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
      << "/* Bandwidth variants (`opgen compile --variants`): @M@_LEVELS variant sets, one per contention\n"
      << " * level (@M@_variant_levels: load threads x intensity; 0 the quiet machine). The library\n"
      << " * switches sets by the drift of its memory-bound kernels' times from their quiet times unless a\n"
      << " * level is pinned. Setters return 0, or -1 with @M@_last_error(). */\n"
      << "extern const double @M@_variant_levels[];\n"
      << "/* The level the next run uses; the last run's drift; switches so far; runs at level l. */\n"
      << "int @M@_variant_level(void);\ndouble @M@_variant_drift(void);\nint64_t @M@_variant_switches(void);\n"
      << "int64_t @M@_variant_runs(int level);\n"
      << "/* Pins a level (0..@M@_LEVELS-1) for the runs that follow; -1 lets the library choose. */\n"
      << "int @M@_set_variant_level(int level);\n"
      << "/* The drift above which the machine counts as contended (default 1.1: 10% above the quiet\n"
      << " * time); the next levels' boundaries follow from it and the tuning's expected drifts. */\n"
      << "int @M@_set_variant_quiet_ratio(double ratio);\n"
      << "/* Runs in a row a condition must hold before the level moves (default 3). */\n"
      << "int @M@_set_variant_window(int runs);\n"
      << "#ifdef __cplusplus\n}\n#endif\n";
    return with_model_name(h.str(), name);
}

std::string variant_source(const std::string &name, const ModelVariants *variants, size_t kernels) {
    const size_t levels = variants ? variants->levels.size() : 1;
    std::ostringstream c, entries, bound, rel;
    for (size_t k = 0; k < kernels; k++) {
        const std::vector<LevelEntry> *e = variants && !variants->kernels[k].empty() ? &variants->kernels[k] : nullptr;
        entries << "    {";
        rel << "    {";
        for (size_t l = 0; l < levels; l++) {
            const bool own = e && !(*e)[l].function.empty();
            entries << (l ? ", " : "") << (own ? (*e)[l].function + "_argv" : "0");
            rel << (l ? ", " : "") << (own ? (*e)[l].rel_quiet : 1.0);
            if (own && l > 0) c << "int " << (*e)[l].function << "_argv(void **args);\n";
        }
        entries << "},\n";
        rel << "},\n";
        bound << (k ? ", " : "") << (e ? 1 : 0);
    }
    c << "#define LEVELS " << levels << "\n"
      << "const double " << name << "_variant_levels[LEVELS] = {"
      << numbers(variants ? variants->levels : std::vector<double>{0}) << "};\n"
      << "static const double level_drift[LEVELS] = {"
      << numbers(variants ? variants->level_drift : std::vector<double>{1}) << "};\n"
      << "static int (*const level_entry[][LEVELS])(void **) = {\n" << entries.str() << "};\n"
      << "static const double rel_quiet[][LEVELS] = {\n" << rel.str() << "};\n"
      << "static const unsigned char bound_kernel[] = {" << bound.str() << "};\n"
      << with_model_name(policy_source, name);
    return c.str();
}

}  // namespace opgen::onnx_import
