// Tuning the schedule variants of one cache key (issue 11, seed 003 step S1): the winner on a
// quiet machine and, for each of a few memory-bandwidth contention levels, the candidate that is
// fastest while opgen's own streaming load (tuner/Contention.h) runs at that level.
//
// The quiet tuning run is the ordinary one (tune(), which reuses measurements already recorded
// under the key). Its best distinct measured candidates, the finalists, are then compiled in this
// process and timed with the load off and at every level, the levels interleaved round by round
// so that clock drift moves them alike; each level's variant is the finalist whose time paired
// with the quiet winner's, round by round, has the lowest median ratio, if that ratio is below
// 1 - margin, else the quiet winner. Variant 0 is always the tuner's quiet winner. The variants go into the cache file
// (db/VariantStore.h) with their time under their own level and on the quiet machine.
//
// Not done: the cost model does not take the contention level as a feature; the search under
// load only re-ranks what the quiet search measured.
#ifndef OPGEN_TUNER_VARIANTS_H
#define OPGEN_TUNER_VARIANTS_H

#include "db/VariantStore.h"
#include "tuner/Tuner.h"

#include <functional>
#include <string>
#include <vector>

namespace opgen::tuner {

struct VariantOptions {
    std::vector<double> levels = {0.5, 1.0};  // contention levels above 0 (tuner/Contention.h)
    int finalists = 8;        // best distinct quiet candidates timed under each level
    int rounds = 5;           // interleaved rounds over (quiet, levels...)
    double min_time_ms = 40;  // calls timed per candidate per level per round
    size_t load_bytes = 64u << 20;  // arrays per load thread
    double margin = 0.05;     // a finalist must beat the quiet winner by this share at a level
};

struct VariantRun {
    db::KernelRecord quiet;  // the quiet winner as stored in the kernel cache
    std::vector<db::VariantRecord> variants;  // level 0 first, then options.levels in order
    std::vector<std::string> finalists;       // schedule summaries
    // medians[l][f]: finalist f's median time at level l (l = 0 quiet, then options.levels).
    std::vector<std::vector<double>> medians;
    TuneResult tune;
};

// Parses "0.5,1" into increasing distinct levels. Raises UserError naming `flag` for an empty list,
// a value that is not a number, or one outside (0, 64].
std::vector<double> parse_contention_levels(const std::string &text, const std::string &flag);

// Tunes (def, shape) on `target` with `options` into `cache` (the quiet winner) and then its
// contention variants into the same file at `cache_path`. Raises UserError when the target cannot
// be measured here or no candidate is correct; DbError from the cache.
VariantRun tune_variants(const ComputeDef &def, const BoundShape &shape, const Target &target,
                         const TuneOptions &options, const VariantOptions &variant_options,
                         db::KernelCache &cache, const std::string &cache_path);

}  // namespace opgen::tuner

#endif
