// The tuner's side of the kernel-cache lookup (library opgen_cache_predict): a LookupExtension
// that knows op definitions and the legal space, so the lookup library (runtime/Lookup.h), which knows
// neither, can give `derived` and `predicted` answers for shapes nobody tuned.
//
// resolve: the op file (from an OpLibrary) bound to the shape gives the canonical shape text the
// cache keys by, and the extent of every loop variable the schedule tiles.
// predict: the cost model's pick over the shape's legal space (docs/design.md §2.6): a
// seeded uniform sample of the space, drawn without enumerating it (core/TilingRules.h), ranked
// by the roofline estimate, and the roofline's best share re-ranked by an XGBoost model trained on
// the cache's measurements of the same op on the same target (the model is trained once per op,
// on first use). With too few measurements the roofline's pick answers.
// refit: the neighbour's schedule made a legal point of the new shape by repair_point, again
// without enumerating the space.
#ifndef OPGEN_TUNER_PREDICT_H
#define OPGEN_TUNER_PREDICT_H

#include "runtime/Lookup.h"
#include "runtime/opgen_cache.h"
#include "core/OpLibrary.h"
#include "core/Target.h"

#include <cstdint>
#include <memory>
#include <string>

namespace opgen::tuner {

struct PredictOptions {
    int max_pool = 2000;      // legal points scored per prediction (a seeded sample)
    int max_draws_per_point = 64;  // candidates drawn per point of the pool before giving up
    uint64_t seed = 1;
    int min_train_rows = 8;   // measured candidates needed before the model is trusted
};

// The extension for kernels of `target` run with `threads` cores (the cache's target key
// "<name>:t<threads>"); requests for any other target get no prediction. `cache_path` is the
// cache whose measurements train the model (may be empty: roofline only).
std::shared_ptr<db::LookupExtension> make_lookup_extension(const OpLibrary &library,
                                                           const Target &target, int threads,
                                                           const std::string &cache_path,
                                                           const PredictOptions &options = {});

}  // namespace opgen::tuner

extern "C" {
// The C API's way to attach the extension to a handle from opgen_cache_open. `ops_dirs`: extra
// op folders, colon-separated, or NULL; `target`: a target name or JSON path, NULL for the host;
// `threads` <= 0: every core of the target. Returns 0, or -1 with *error_out set (free it with
// opgen_cache_free_string) for an unknown target or a bad argument.
int opgen_cache_attach_tuner(opgen_cache *cache, const char *ops_dirs, const char *target,
                             int threads, char **error_out);
}

#endif
