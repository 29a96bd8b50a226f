#include "cli/Cli.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <sstream>

namespace opgen::cli {

void add_variant_tuning_options(CLI::App *cmd, tuner::VariantOptions &vo) {
    cmd->add_option("--variant-rounds", vo.rounds,
                    "interleaved timing rounds per contention level (default " + std::to_string(vo.rounds) + ")")
        ->check(CLI::Range(1, 1000));
    cmd->add_option("--variant-finalists", vo.finalists,
                    "best quiet candidates timed under each contention level (default " + std::to_string(vo.finalists) + ")")
        ->check(CLI::Range(1, 1000));
    cmd->add_option("--variant-search", vo.search,
                    "candidates searched for and timed under each contention level, beyond the quiet finalists "
                    "(default " + std::to_string(vo.search) + "; 0: only the quiet finalists)")
        ->check(CLI::Range(0, 10000));
    cmd->add_option("--variant-keep", vo.keep,
                    "best searched candidates per level that go on to the interleaved rounds (default " +
                        std::to_string(vo.keep) + ")")
        ->check(CLI::Range(1, 1000));
}

void add_common_options(CLI::App *cmd, Common &c, bool with_db) {
    cmd->add_option("--ops-dir", c.ops_dirs, "extra folder of .op files (also OPGEN_OPS_PATH)");
    cmd->add_option("--target", c.target, "target name or JSON file (default: host)");
    cmd->add_option("--threads", c.threads, "cores a kernel may use (default: all)")->check(CLI::Range(1, 1024));
    if (with_db) cmd->add_option("--db", c.db_path, "kernel cache file (default: opgen.db)");
}

int threads_of(const Common &c, const Target &t) { return c.threads > 0 ? c.threads : t.cores; }

void set_threads(int threads) { setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1); }

nlohmann::json record_json(const db::KernelRecord &r, const std::string &answer) {
    nlohmann::json j;
    j["answer"] = answer;
    j["op"] = r.key.op_name;
    j["shape"] = r.key.shape;
    j["dtype"] = r.key.dtype;
    j["target"] = r.key.target;
    j["op_hash"] = r.key.op_hash;
    j["halide_version"] = r.key.halide_version;
    j["tuner_version"] = r.key.tuner_version;
    j["schedule"] = nlohmann::json::parse(r.schedule_json);
    j["schedule_source"] = r.schedule_source;
    j["time_ms"] = r.time_ms;
    j["gflops"] = r.gflops;
    j["default_time_ms"] = r.default_time_ms;
    j["speedup_over_default"] = r.time_ms > 0 ? r.default_time_ms / r.time_ms : 0.0;
    j["verified"] = r.verified;
    j["trials"] = r.trials;
    j["created_at"] = r.created_at;
    return j;
}

std::string fixed(double v, int precision) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(precision) << v;
    return s.str();
}

void print_table(const std::vector<db::KernelRecord> &rows) {
    std::printf("%-16s %-28s %10s %9s %11s %9s %7s\n", "op", "shape", "time_ms", "GFLOP/s", "default_ms",
                "speedup", "trials");
    for (const auto &r : rows) {
        std::printf("%-16s %-28s %10s %9s %11s %8sx %7lld\n", r.key.op_name.c_str(), r.key.shape.c_str(),
                    fixed(r.time_ms, 3).c_str(), fixed(r.gflops, 1).c_str(), fixed(r.default_time_ms, 2).c_str(),
                    fixed(r.time_ms > 0 ? r.default_time_ms / r.time_ms : 0, 1).c_str(),
                    static_cast<long long>(r.trials));
    }
}

void write_file_whole(const std::string &path, const std::string &text, const std::string &what) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp);
        user_check(f.good()) << "cannot write " << what << " '" << path << "'";
        f << text;
        user_check(f.good()) << "cannot write " << what << " '" << path << "'";
    }
    user_check(std::rename(tmp.c_str(), path.c_str()) == 0) << "cannot write " << what << " '" << path << "'";
}

}  // namespace opgen::cli
