// A network as the bench sees it (`--network FILE`): the shapes of an `opgen batch` manifest whose
// entries say how often each shape occurs (`counts`, one positive integer per shape), and the
// network's total time, each entry's median weighted by its count, for opgen and for oneDNN at
// every thread count. This is the figure a user who runs the whole network pays: ResNet-50 v1.5's
// 53 convolutions over its 23 distinct shapes (manifests/resnet50-bert.json) weigh the 1×1 at
// 14²×256→1024, which runs six times, six times as much as the stem, which runs once.
//
// Entries without `counts` (the BERT matmuls of the same manifest) are left out: the total is
// over the counted part of the network only, and says so.
#ifndef OPGEN_BENCH_NETWORK_H
#define OPGEN_BENCH_NETWORK_H

#include "tests/bench/Suite.h"

#include <string>
#include <vector>

namespace opgen::bench {

struct BenchRun;

struct Network {
    std::string path;
    std::string name;                // the manifest's "name", or its path
    int trials = 0;                  // the manifest's defaults.trials (0 when it sets none)
    std::vector<SuiteEntry> entries; // one per counted shape, `count` set, manifest order
};

// Reads the counted entries of the manifest at `path`. UserError naming the file and entry when
// it cannot be read, when `counts` is not an array of positive integers as long as `shapes`, when
// a counted entry's shape is not a string (ranges stand for many shapes: count them one by one),
// or when no entry has counts.
Network load_network(const std::string &path);

// One thread count's totals: Σ count × median ms over the entries where both ran.
struct NetworkTotal {
    int threads = 1;
    double opgen_ms = 0, onednn_ms = 0;
    int shapes = 0, layers = 0; // entries and occurrences summed
    int missing = 0;            // entries left out: opgen or oneDNN did not run
};

// Totals per thread count of the run's entries that carry a count (run.network set).
std::vector<NetworkTotal> network_totals(const BenchRun &run);

// The report's section: the totals, then every entry's weighted time and share, per thread count.
std::string network_markdown(const BenchRun &run);

} // namespace opgen::bench

#endif
