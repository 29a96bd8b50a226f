// The benchmark suite: which (op, shape) pairs the bench runs, read from a manifest in the format
// of `opgen batch` (tests/bench/suite.json) with two extra fields per entry: `labels` (one per
// shape, what the report calls it) and `quick` (the shapes of `--quick`). The same file can
// therefore be given to `opgen batch` to fill the cache ahead of a bench run.
#ifndef OPGEN_BENCH_SUITE_H
#define OPGEN_BENCH_SUITE_H

#include <string>
#include <vector>

namespace opgen::bench {

struct SuiteEntry {
    std::string op;    // op name, a file ops/<op>.op
    std::string shape; // shape text as given, e.g. "M=256,N=256,K=256"
    std::string label; // "sgemm 256³"
    bool quick = false;
    int count = 1; // occurrences in the network (`--network`); 1 for the suite's entries
};

// Reads the manifest at `path`. Raises UserError naming the file and entry when it cannot be read
// or an entry is malformed (labels and shapes of different lengths, a quick shape not among the
// shapes). Op names are not checked here: an op without a file is reported per entry by the bench.
std::vector<SuiteEntry> load_suite(const std::string &path);

// The entries to run: the quick ones when `quick`, then only those whose label or op contains one
// of `only` (all when `only` is empty). Order is the manifest's.
std::vector<SuiteEntry> select_entries(const std::vector<SuiteEntry> &all, bool quick,
                                       const std::vector<std::string> &only);

} // namespace opgen::bench

#endif
