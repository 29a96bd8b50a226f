// The bench's report: everything one run measured, as a markdown document (printed and written to
// bench.md), a self-contained HTML page (bench.html: the same tables plus a bar chart in inline
// SVG, no external assets) and raw JSON (bench.json). Speeds are GFLOP/s by opgen's FLOP count for
// the op, shown as ratios to oneDNN and to the best Halide autoscheduler measured in the same
// window, and as a fraction of the roofline bound (Machine.h) for the shape and thread count.
#ifndef OPGEN_BENCH_REPORT_H
#define OPGEN_BENCH_REPORT_H

#include "tests/bench/Contender.h"
#include "tests/bench/Machine.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace opgen::bench {

// One suite entry at one thread count.
struct EntryResult {
    std::string label; // "sgemm 256³"
    int count = 1;     // occurrences in the network (`--network`), the weight of its time
    std::string op;
    std::string shape; // canonical
    int threads = 1;
    double flops = 0;
    double bytes = 0;
    // "ok", or why nothing ran: "no op file", "bad shape".
    std::string status = "ok";
    std::string detail;
    std::vector<ContenderResult> contenders;
    // threads > 1: FMA peak on `threads` threads over that on one, measured just before the
    // column's rounds; near 1 means another process held the other cores.
    double fma_scaling = 0;

    double gflops(const ContenderResult &c) const;
    // The faster oneDNN variant that takes and returns the op's own layout; null when none ran.
    const ContenderResult *onednn() const;
    // The fastest Halide autoscheduler that ran; null when none did.
    const ContenderResult *best_autoscheduler() const;
    const ContenderResult *find(const std::string &name) const;
};

struct BenchRun {
    std::string started_at; // ISO-8601 UTC
    std::string command;    // the command line
    std::string cpu;
    std::string opgen_target;     // opgen's host target name
    std::string halide_target;    // Halide's host target string
    std::string onednn, openblas; // what the anchors are (versions, ISA)
    std::string cache_path;
    std::string load_start, load_end; // /proc/loadavg: other processes share these cores
    std::string environment;          // the threading variables the anchors ran under
    std::string progress;             // empty when the run is complete
    std::string network;              // `--network`: the manifest's name; empty otherwise
    std::vector<int> threads;
    int rounds = 0;
    double min_turn_ms = 0;
    // Machine ceilings: measured at the start, briefly after each entry, and at the end.
    std::vector<MachineFigures> machine;
    std::vector<EntryResult> entries;
    double wall_s = 0;

    // The ceiling for `threads`: the best of every machine measurement of the run.
    MachineFigure ceiling(int threads) const;
    double roofline_ms(const EntryResult &e) const;
};

std::string markdown_report(const BenchRun &run);
std::string html_report(const BenchRun &run);
nlohmann::json json_report(const BenchRun &run);

} // namespace opgen::bench

#endif
