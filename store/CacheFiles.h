// Whole-file operations on kernel caches, behind `opgen db merge|export|stats`: merging the caches
// of several machines or Slurm shards into one, exporting a cache as JSON for other tools, and
// counting what a cache holds per target and op.
#ifndef OPGEN_STORE_CACHE_FILES_H
#define OPGEN_STORE_CACHE_FILES_H

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace opgen::db {

struct MergeReport {
    int64_t kernels_read = 0;  // kernel rows in all inputs
    int64_t kernels = 0;       // kernel rows in the output: the best per key
    int64_t measurements = 0;  // every measurement of every input
    int64_t models = 0;
    int64_t tuning_runs = 0;   // every run of every input
    int64_t variants = 0;      // kernel_variants rows: the best per key and contention level
    int64_t code = 0;          // kernel_code rows: compiled code of the merged winners
};

// Writes a new cache at `output` holding, per key, the fastest kernel of all `inputs` (and per key
// and contention level the fastest variant), and every tuning run, measurement and model of every
// input, each measurement still naming its run, and per winner the compiled code an input has for
// its schedule (KernelCode.h); ops and targets keep their source text and
// description from whichever input has them. The inputs are only read. Raises DbError, with nothing
// left at `output`, when: there is no input, `output` already exists (or is one of the inputs),
// an input is missing, corrupt or not a cache, the inputs' schema versions differ (naming each),
// or their common version is not the one this build writes (older files are upgraded by opening
// them read-write once; newer ones need a newer opgen). The output appears complete or not at all.
MergeReport merge_kernel_caches(const std::vector<std::string> &inputs, const std::string &output);

// Writes the cache at `path` as one JSON document: {"schema_version", "kernels", "ops" (with their
// source text), "targets", "tuning_runs" (options embedded as JSON), "variants"} and, when
// `with_measurements`, "measurements" (features as numbers, each with its run_id or null). Each kernel's schedule is
// embedded as JSON when it parses, else as a string, and its "code" (KernelCode.h's fields, the
// bytes as "bytes_base64") is null when it has none compiled from that schedule. Raises DbError as a read-only open does.
void export_kernel_cache(const std::string &path, bool with_measurements, std::ostream &out);

struct KernelCount {
    std::string target;
    std::string op_name;
    int64_t kernels = 0;
    int64_t measurements = 0;
    int64_t tuning_runs = 0;
};

// Kernels, measurements and tuning runs per (target, op), sorted by target then op.
std::vector<KernelCount> count_kernels(const std::string &path);

} // namespace opgen::db

#endif
