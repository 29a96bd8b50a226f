// Batch manifests: a JSON file listing operators × shapes to tune, expanded into one task per
// (op, concrete shape, target). A shape is a string ("M=512,N=512,K=512") or an object whose
// values are an integer, a list of integers, or a range ({"from": 64, "to": 512, "step": 64} or
// {"from": 64, "to": 1024, "times": 2}); an object stands for the product of its values. Each
// entry may set "dtype", "target", "trials" and "seed"; the manifest's "defaults" object sets
// them for every entry, and the command line fills what neither sets. The format is in
// docs/batch.md.
//
// Every entry is checked before anything is tuned: the op exists, the dtype is the op's, the
// target loads, every shape binds. A problem raises UserError
// `manifest '<file>' entry N field "<field>": <what>`.
#ifndef OPGEN_CORE_MANIFEST_H
#define OPGEN_CORE_MANIFEST_H

#include "core/OpLibrary.h"

#include <cstdint>
#include <string>
#include <vector>

namespace opgen {

// What the command line gives; manifest "defaults" and entry fields override it.
struct ManifestDefaults {
    std::string dtype;  // empty: the op's own dtype
    std::string target = "host";
    int trials = 24;
    uint64_t seed = 1;
    // Inputs timed cold (TuneOptions::cold_inputs), set by `opgen compile` for a model's weights;
    // manifests leave it empty.
    std::vector<std::string> cold_inputs;
};

// One tuning task of a batch.
struct BatchTask {
    size_t entry = 0;    // index of the manifest entry it came from
    std::string op;
    std::string shape;   // canonical, as in the cache key
    std::string dtype;
    std::string target;  // name or path, as written
    int trials = 24;
    uint64_t seed = 1;
    // Inputs timed cold (TuneOptions::cold_inputs), set by `opgen compile` for a model's weights;
    // manifests leave it empty.
    std::vector<std::string> cold_inputs;
};

struct Manifest {
    std::string path;
    size_t entries = 0;
    std::vector<BatchTask> tasks;  // manifest order; a task repeated by a later entry is dropped
    size_t duplicates = 0;         // tasks dropped as repeats
};

// Reads, validates and expands the manifest at `path`; UserError on any problem (see above).
Manifest load_manifest(const std::string &path, const OpLibrary &lib, const ManifestDefaults &defaults);
// The same from text; `path` only names the file in messages.
Manifest parse_manifest(const std::string &text, const std::string &path, const OpLibrary &lib,
                        const ManifestDefaults &defaults);

// `--shard i/N`: index i (0-based) of N shards.
struct Shard {
    int index = 0;
    int count = 1;
};
// Parses "i/N" with 0 <= i < N; UserError naming the text otherwise.
Shard parse_shard(const std::string &text);
// The tasks of one shard: task j of the manifest goes to shard j mod N. Deterministic: the same
// manifest gives every shard the same tasks on every machine, and the shards together hold every
// task exactly once.
std::vector<BatchTask> shard_tasks(const std::vector<BatchTask> &tasks, const Shard &shard);

}  // namespace opgen

#endif
