// Tuning the schedule variants of one cache key (docs/design.md §7.6): the winner on a
// quiet machine and, for each of a few memory-bandwidth contention levels, the candidate that is
// fastest while opgen's own streaming load (tuner/Contention.h) runs at that level.
//
// 1. The quiet tuning run is the ordinary one (tune(), which reuses measurements already recorded
//    under the key). Its best distinct measured candidates are the quiet finalists.
// 2. Under each level the variant search looks for itself: a model-guided search of the legal
//    space (tuner/Search.h) whose scores are those of the level, not the quiet machine's — the
//    contended roofline (tuner/Features.h: bytes from outside L2 are paid again as contention
//    grows, so the ranking trades tile sizes for reuse), blended with the default cost model fed
//    the level as its last feature, and, after the first batch, with an online model trained on
//    what this level's search measured. Each candidate is compiled with the load off and timed
//    under the load, paired call by call with the quiet winner; every such timing is recorded
//    under loaded_key(key, level) (tuner/Tuner.h), the winner's as the reference, so that it is
//    training data with its level.
// 3. The quiet finalists and each level's best searched candidates are then timed with the load
//    off and at every level, the levels interleaved round by round so that clock drift moves them
//    alike; each level's variant is the candidate whose time paired with the quiet winner's, round
//    by round, has the lowest median ratio, if that ratio is below 1 - margin, else the quiet
//    winner. Variant 0 is always the tuner's quiet winner. The variants go into the cache file
//    (store/VariantStore.h) with their time under their own level and on the quiet machine.
//
// Not done: contention is measured only as opgen's own streaming load on the other cores, not
// from hardware counters; the bundled cost model learns from the contention column only once
// measurements taken under load are part of its training data (costmodel/data holds none yet).
// The contended roofline counts bytes, not access patterns: on 2026-11-21 its shortlist held
// tilings that read the big operand once (8.7 MB for matmul 32x1024x2048's 8 MB B), and under the
// load those took 0.48-1.73 times the quiet winner's time, by packing and panel width, which only
// the timings under load (and the online model fitted to them) tell apart.
#ifndef OPGEN_TUNER_VARIANTS_H
#define OPGEN_TUNER_VARIANTS_H

#include "store/VariantStore.h"
#include "tuner/Tuner.h"

#include <functional>
#include <string>
#include <vector>

namespace opgen::tuner {

struct VariantOptions {
    std::vector<double> levels = {0.5, 1.0};  // contention levels above 0 (tuner/Contention.h)
    int finalists = 8;        // best distinct quiet candidates timed under each level
    int search = 16;          // candidates searched for under each level (0: finalists only)
    int search_batch = 8;     // of them, measured per batch between online-model updates
    int keep = 3;             // each level's best searched candidates that go on to the rounds
    int rounds = 5;           // interleaved rounds over (quiet, levels...)
    double min_time_ms = 40;  // calls timed per candidate per level per round
    size_t load_bytes = 64u << 20;  // arrays per load thread
    double margin = 0.05;     // a candidate must beat the quiet winner by this share at a level
    bool default_model = true;  // blend in the target's default cost model (TuneOptions too)
};

// One candidate of a level's search, timed under that level's load paired with the quiet winner.
struct SearchedCandidate {
    SchedulePoint point;
    std::string status = "ok";  // as MeasureResult
    double time_ms = 0;         // median under the load
    double ratio = 0;           // median of its per-call time over the quiet winner's, same load
    double dram_mb = 0;         // the roofline's bytes from outside L2, in MB
};

struct VariantRun {
    db::KernelRecord quiet;  // the quiet winner as stored in the kernel cache
    std::vector<db::VariantRecord> variants;  // level 0 first, then options.levels in order
    std::vector<std::string> finalists;       // schedule summaries: the quiet ones, then searched
    int quiet_finalists = 0;                  // how many of `finalists` came from the quiet run
    // searched[i]: what the search under options.levels[i] measured, in order.
    std::vector<std::vector<SearchedCandidate>> searched;
    // medians[l][f]: finalist f's median time at level l (l = 0 quiet, then options.levels).
    std::vector<std::vector<double>> medians;
    TuneResult tune;
};

// Parses "0.5,1" into increasing distinct levels. Raises UserError naming `flag` for an empty list,
// a value that is not a number, or one outside (0, 64].
std::vector<double> parse_contention_levels(const std::string &text, const std::string &flag);

// The index of one level's variant among its candidates, from their times at that level:
// samples[f][r] is candidate f's time in round r (candidate 0: the quiet winner). The candidate
// whose median over rounds of its time over the winner's in the same round is lowest, if that
// median is below 1 - margin and its median time is also below (1 - margin) x the winner's; else 0. A round missing for either side is skipped; a candidate
// with no paired round is never picked.
size_t pick_variant(const std::vector<std::vector<double>> &samples, double margin);

// Tunes (def, shape) on `target` with `options` into `cache` (the quiet winner) and then its
// contention variants into the same file at `cache_path`. Raises UserError when the target cannot
// be measured here or no candidate is correct; DbError from the cache.
VariantRun tune_variants(const ComputeDef &def, const BoundShape &shape, const Target &target,
                         const TuneOptions &options, const VariantOptions &variant_options,
                         db::KernelCache &cache, const std::string &cache_path);

}  // namespace opgen::tuner

#endif
