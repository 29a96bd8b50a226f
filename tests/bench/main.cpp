// opgen_bench: opgen's cached winners against the anchors, in one run. For every suite
// entry and thread count, in a straight line: build the problem (inputs and reference), make every
// contender (opgen's winner, tuned first when the cache lacks it; oneDNN; OpenBLAS; Halide's
// autoschedulers; the naive loop), check each against the reference, time them interleaved, and
// report, with the machine's FMA peak and memory bandwidth measured before and after.
#include "tests/bench/Anchors.h"
#include "tests/bench/Autoschedulers.h"
#include "tests/bench/Machine.h"
#include "tests/bench/Naive.h"
#include "tests/bench/Network.h"
#include "tests/bench/OpgenKernel.h"
#include "tests/bench/Report.h"
#include "tests/bench/Rounds.h"
#include "tests/bench/SearchProbe.h"
#include "tests/bench/Suite.h"
#include "tests/bench/Threads.h"

#include "core/OpLibrary.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace {

using namespace opgen;
using namespace opgen::bench;

struct Args {
    std::string suite = OPGEN_BENCH_SUITE;
    std::string network; // a manifest with "counts": its counted shapes instead of the suite
    bool quick = false;
    std::vector<std::string> only;
    std::string db_path = "opgen.db";
    std::string out_dir = "bench-out";
    std::vector<int> threads;
    int rounds = 0;     // 0: 5, or 3 with --quick
    double turn_ms = 0; // 0: 100, or 50 with --quick
    bool no_tune = false;
    bool no_naive = false;
    bool verbose = false;
    std::vector<std::string> ops_dirs;
    OpgenOptions opgen;
    AutoscheduleOptions as;
    std::string points_file;   // hand-picked points, run next to the cache's winner
    bool trials_given = false; // --trials on the command line
};

// A hand-picked point for one op, shape and thread count (`--points FILE`).
struct GivenPoint {
    std::string op, shape, name;
    int threads = 1;
    SchedulePoint point;
};

// {"points": [{"op": "matmul", "shape": "M=..", "threads": 1, "name": "...", "point": {..}}]}
std::vector<GivenPoint> load_points(const std::string &path) {
    std::vector<GivenPoint> out;
    if (path.empty())
        return out;
    std::ifstream in(path);
    user_check(in.good()) << "cannot read points file '" << path << "'";
    try {
        nlohmann::json j = nlohmann::json::parse(in);
        for (const auto &e : j.at("points")) {
            GivenPoint g;
            g.op = e.at("op").get<std::string>();
            g.shape = e.at("shape").get<std::string>();
            g.threads = e.value("threads", 1);
            g.name = e.value("name", "opgen hand point");
            g.point = SchedulePoint::from_json(e.at("point"));
            out.push_back(g);
        }
    } catch (const nlohmann::json::exception &e) {
        user_check(false) << "points file '" << path << "': " << e.what();
    }
    return out;
}

std::string now_utc() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

void write_file(const std::filesystem::path &path, const std::string &text) {
    std::filesystem::path tmp = path;
    tmp += ".tmp";
    {
        std::ofstream out(tmp);
        user_check(out.good()) << "cannot write '" << tmp.string() << "'";
        out << text;
        user_check(out.good()) << "cannot write '" << tmp.string() << "'";
    }
    std::filesystem::rename(tmp, path);
}

// The first three fields of /proc/loadavg.
std::string load_average() {
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    if (!(in >> a >> b >> c))
        return "unknown";
    return a + " " + b + " " + c;
}

void log_line(const std::string &line) {
    std::cerr << line << std::endl;
}

// Every contender of one problem at one thread count, in the order of the report's columns.
std::vector<Entrant> make_entrants(const Problem &p, int threads, db::KernelCache *cache,
                                   const Args &a) {
    std::vector<Entrant> all;
    all.push_back(make_opgen(p, threads, cache, a.opgen));
    static const std::vector<GivenPoint> given = load_points(a.points_file);
    for (const auto &g : given) {
        if (g.op == p.def->name && g.threads == threads &&
            bind_shape(*p.def, g.shape).canonical == p.shape.canonical)
            all.push_back(make_opgen_point(p, g.point, g.name));
    }
    for (auto &e : make_onednn(p))
        all.push_back(std::move(e));
    for (auto &e : make_openblas(p))
        all.push_back(std::move(e));
    for (auto &e : make_autoscheduled(p, threads, a.as))
        all.push_back(std::move(e));
    if (threads == 1 && !a.no_naive)
        all.push_back(make_naive(p));
    return all;
}

// Loads the entry's op, or says why it cannot (the other helper's op files may not exist yet).
std::optional<ComputeDef> load_op(const OpLibrary &lib, const SuiteEntry &s, EntryResult &proto) {
    try {
        lib.find(s.op);
    } catch (const UserError &e) {
        proto.status = "no op file";
        proto.detail = e.what();
        return std::nullopt;
    }
    try {
        return lib.load(s.op);
    } catch (const UserError &e) {
        proto.status = "bad op file";
        proto.detail = e.what();
        return std::nullopt;
    }
}

void bench_entry(const SuiteEntry &s, const OpLibrary &lib, const Target &host,
                 db::KernelCache *cache, const Args &a, const RoundOptions &ro, BenchRun &run) {
    EntryResult proto;
    proto.label = s.label;
    proto.count = s.count;
    proto.op = s.op;
    proto.shape = s.shape;
    std::optional<ComputeDef> def = load_op(lib, s, proto);
    std::optional<BoundShape> shape;
    if (def) {
        try {
            shape = bind_shape(*def, s.shape);
            proto.shape = shape->canonical;
            proto.flops = flop_count(*def, *shape);
            proto.bytes = min_bytes_moved(*def, *shape);
        } catch (const UserError &e) {
            proto.status = "bad shape";
            proto.detail = e.what();
        }
    }
    if (proto.status != "ok") {
        log_line(s.label + ": " + proto.status + ": " + proto.detail);
        for (int t : a.threads) {
            EntryResult r = proto;
            r.threads = t;
            run.entries.push_back(r);
        }
        return;
    }
    log_line("== " + s.label + " (" + proto.shape + ")");
    Problem problem(s.label, *def, *shape, host);
    for (int t : a.threads) {
        set_threads(t);
        log_line("  " + std::to_string(t) + " thread(s): preparing contenders");
        std::vector<Entrant> entrants = make_entrants(problem, t, cache, a);
        for (const auto &e : entrants) {
            if (e.setup_s > 1 || e.tune_s > 0) {
                log_line("    " + e.name + ": setup " + std::to_string(e.setup_s).substr(0, 5) +
                         " s" +
                         (e.tune_s > 0 ? ", tuning " + std::to_string(int(e.tune_s)) + " s" : ""));
            }
        }
        EntryResult r = proto;
        r.threads = t;
        if (t > 1) {
            // Whether the other cores are free right now: what the column's figures rest on.
            MachineFigures probe = measure_machine({1, t}, 3);
            r.fma_scaling = probe.at(t).peak_gflops / probe.at(1).peak_gflops;
            run.machine.push_back(probe);
        }
        r.contenders =
            run_rounds(problem, entrants, ro, [](const std::string &l) { log_line("    " + l); });
        for (const auto &c : r.contenders) {
            if (c.ok())
                log_line("    " + c.name + ": " + std::to_string(r.gflops(c)).substr(0, 6) +
                         " GFLOP/s");
        }
        run.entries.push_back(std::move(r));
    }
}

int bench_main(const Args &a_in, const std::string &command) {
    Args a = a_in;
    auto t0 = std::chrono::steady_clock::now();
    Target host = host_target();
    if (a.threads.empty())
        a.threads = host.cores > 1 ? std::vector<int>{1, host.cores} : std::vector<int>{1};
    RoundOptions ro;
    ro.rounds = a.rounds > 0 ? a.rounds : (a.quick ? 3 : 5);
    ro.min_turn_ms = a.turn_ms > 0 ? a.turn_ms : (a.quick ? 50 : 100);
    a.opgen.tune_missing = !a.no_tune;

    std::optional<Network> net;
    if (!a.network.empty()) {
        net = load_network(a.network);
        // The network's own trial budget, unless --trials says otherwise.
        if (!a.trials_given && net->trials > 0)
            a.opgen.trials = net->trials;
    }
    std::vector<SuiteEntry> entries =
        select_entries(net ? net->entries : load_suite(a.suite), a.quick, a.only);
    user_check(!entries.empty()) << "no entry selected from '" << (net ? a.network : a.suite)
                                 << "'";
    OpLibrary lib = OpLibrary::standard(a.ops_dirs);
    std::unique_ptr<db::KernelCache> cache;
    try {
        cache = db::open_kernel_cache(a.db_path,
                                      a.no_tune ? db::OpenMode::ReadOnly : db::OpenMode::ReadWrite);
    } catch (const db::DbError &e) {
        log_line(std::string("warning: no kernel cache, opgen's column stays empty: ") + e.what());
    }

    BenchRun run;
    run.started_at = now_utc();
    run.command = command;
    run.network = net ? net->name + " (" + a.network + ")" : "";
    run.opgen_target = host.name;
    run.halide_target = host.halide_target;
    run.onednn = onednn_description();
    run.openblas = openblas_description();
    run.cache_path = cache ? cache->path() : a.db_path + " (not opened)";
    run.threads = a.threads;
    run.rounds = ro.rounds;
    run.min_turn_ms = ro.min_turn_ms;

    run.load_start = load_average();
    for (const char *name : {"OMP_WAIT_POLICY", "OPENBLAS_THREAD_TIMEOUT"}) {
        const char *value = std::getenv(name);
        run.environment += std::string(run.environment.empty() ? "" : " ") + name + "=" +
                           (value ? value : "(unset)");
    }
    log_line("measuring FMA peak and triad bandwidth");
    run.machine.push_back(measure_machine(a.threads));
    run.cpu = run.machine.front().cpu;
    std::filesystem::create_directories(a.out_dir);
    // The report is rewritten after every entry, so a long run that is stopped still leaves one.
    auto write_reports = [&] {
        run.load_end = load_average();
        run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::filesystem::path dir(a.out_dir);
        write_file(dir / "bench.md", markdown_report(run));
        write_file(dir / "bench.html", html_report(run));
        write_file(dir / "bench.json", json_report(run).dump(2) + "\n");
    };
    for (size_t i = 0; i < entries.size(); i++) {
        bench_entry(entries[i], lib, host, cache.get(), a, ro, run);
        run.machine.push_back(measure_machine(a.threads, 3));
        run.progress = "partial: " + std::to_string(i + 1) + " of " +
                       std::to_string(entries.size()) + " entries so far";
        write_reports();
    }
    log_line("measuring FMA peak and triad bandwidth again");
    run.machine.push_back(measure_machine(a.threads));
    run.progress.clear();
    write_reports();
    std::cout << markdown_report(run);
    log_line("wrote " + a.out_dir + "/bench.md, bench.html, bench.json");
    return 0;
}

} // namespace

// OpenMP (oneDNN's threads) and OpenBLAS read their environment once, when they load, so it is set
// here and the process started again. Spinning idle workers (GOMP's default, OpenBLAS's 2^28-cycle
// timeout) take a core from whichever contender runs next; on this two-core, shared machine that
// made oneDNN's two-thread calls 10-100x slower. A value the user set is kept.
void settle_environment(char **argv) {
    bool changed = false;
    for (const auto &[name, value] :
         {std::pair<const char *, const char *>{"OMP_WAIT_POLICY", "passive"},
          {"OPENBLAS_THREAD_TIMEOUT", "4"}}) {
        if (std::getenv(name))
            continue;
        setenv(name, value, 1);
        changed = true;
    }
    if (!changed)
        return;
    execv("/proc/self/exe", argv);
    std::cerr
        << "warning: could not restart with OMP_WAIT_POLICY and OPENBLAS_THREAD_TIMEOUT set\n";
}

int main(int argc, char **argv) {
    if (int probe = opgen::bench::probe_search_main(argc, argv); probe >= 0)
        return probe;
    settle_environment(argv);
    CLI::App app{"opgen_bench: opgen's cached winners against oneDNN, OpenBLAS, Halide's "
                 "autoschedulers and a naive "
                 "loop, with the machine's FMA peak and memory bandwidth, in one run"};
    Args a;
    app.add_option("--suite", a.suite, "suite manifest (default: tests/bench/suite.json)");
    app.add_flag("--quick", a.quick, "only the suite's quick entries, 3 rounds of 50 ms turns");
    app.add_option("--only", a.only,
                   "only entries whose label contains this text or whose op is this (repeatable)");
    app.add_option("--db", a.db_path, "kernel cache file (default: opgen.db)");
    app.add_option("--out", a.out_dir, "report folder (default: bench-out)");
    app.add_option("--threads", a.threads,
                   "thread counts, one column each (default: 1 and all cores)")
        ->delimiter(',')
        ->check(CLI::Range(1, 1024));
    app.add_option("--rounds", a.rounds, "interleaved rounds (default 5; 3 with --quick)")
        ->check(CLI::Range(1, 1000));
    app.add_option(
           "--turn-ms", a.turn_ms,
           "minimum time of each contender's turn in a round (default 100; 50 with --quick)")
        ->check(CLI::Range(1.0, 100000.0));
    auto *trials =
        app.add_option("--trials", a.opgen.trials,
                       "candidates the tuner measures for a key the cache lacks (default 32; "
                       "with --network, the manifest's defaults.trials)")
            ->check(CLI::Range(1, 100000));
    app.add_option("--network", a.network,
                   "run the shapes of this manifest that carry \"counts\" instead of the suite, "
                   "and report the network's total time weighted by the counts (e.g. "
                   "manifests/resnet50-bert.json)")
        ->excludes("--suite");
    app.add_option("--seed", a.opgen.seed, "tuner seed");
    auto *retune =
        app.add_flag("--retune", a.opgen.retune,
                     "tune every entry again, cached or not (the cache keeps the faster winner)");
    app.add_flag("--no-tune", a.no_tune,
                 "do not tune keys the cache lacks (opens the cache read-only)")
        ->excludes(retune);
    app.add_option("--autoschedulers", a.as.names,
                   "Halide autoschedulers to run (default: Adams2019,Mullapudi2016,Li2018; 'none' "
                   "for none)")
        ->delimiter(',');
    app.add_option("--adams-beam", a.as.adams_beam,
                   "Adams2019 beam size (HL_BEAM_SIZE; default: Halide's 32, 1 = greedy)")
        ->check(CLI::Range(0, 1024));
    app.add_option("--adams-max-gflop", a.as.adams_max_gflop,
                   "skip Adams2019 for problems above this many GFLOP (default: no limit)")
        ->check(CLI::Range(0.0, 1e9));
    app.add_option("--search-memory-gib", a.as.search_memory_gib,
                   "GiB of memory Adams2019's search may take, probed in a child process "
                   "(default: 10; 0: unbounded)")
        ->check(CLI::Range(0.0, 1e6));
    app.add_option("--search-seconds", a.as.search_seconds,
                   "seconds Adams2019's search may take, probed in a child process (default: "
                   "300; 0: unbounded)")
        ->check(CLI::Range(0.0, 1e6));
    app.add_flag("--no-naive", a.no_naive, "leave out the naive loop");
    app.add_option("--points", a.points_file,
                   "JSON file of hand-picked schedule points to run next to the cache's winner: "
                   "{\"points\": [{\"op\", \"shape\", \"threads\", \"name\", \"point\"}]}");
    app.add_option("--ops-dir", a.ops_dirs, "extra folder of .op files (also OPGEN_OPS_PATH)");
    app.add_flag("--verbose", a.opgen.verbose, "the tuner's progress lines");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        return app.exit(e);
    }
    a.trials_given = trials->count() > 0;
    a.as.names.erase(std::remove(a.as.names.begin(), a.as.names.end(), "none"), a.as.names.end());
    for (const auto &n : a.as.names) {
        if (n != "Adams2019" && n != "Mullapudi2016" && n != "Li2018") {
            std::cerr << "error: unknown autoscheduler '" << n
                      << "' (known: Adams2019, Mullapudi2016, Li2018)\n";
            return 2;
        }
    }
    std::string command;
    for (int i = 0; i < argc; i++)
        command += (i ? " " : "") + std::string(argv[i]);
    try {
        return bench_main(a, command);
    } catch (const UserError &e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    } catch (const db::DbError &e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "error: internal: " << e.what() << "\n";
        return 3;
    }
}
