#include "tuner/GenericTiming.h"

#include "base/Error.h"
#include "tuner/StoredTimingJob.h"
#include "tuner/WorkerPool.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

extern char **environ;

namespace opgen::tuner {

namespace {

std::string describe(const db::KernelKey &key) {
    return "op '" + key.op_name + "' at " + key.shape + " on '" + key.target + "'";
}

// The thread count kernels of this process run at: HL_NUM_THREADS, else every core.
int process_threads() {
    if (const char *env = std::getenv("HL_NUM_THREADS"); env && std::atoi(env) > 0) return std::atoi(env);
    return int(std::max(1u, std::thread::hardware_concurrency()));
}

// A failure goes into the report and the log; the run goes on.
struct FailureLog {
    CodeFillReport &report;
    const std::function<void(const std::string &)> &log;
    void operator()(const std::string &what) const {
        report.failed++;
        report.errors.push_back(what);
        if (log) log("failed timing " + what);
    }
};

// The op's tuned kernels on `target` at the process's thread count: by target key, then family.
using TunedRowsByKey = std::map<std::string, std::map<std::string, std::vector<db::KernelRecord>>>;

TunedRowsByKey tuned_rows_of(db::KernelCache &cache, const std::string &op, const Target &target, int threads) {
    TunedRowsByKey rows;
    for (const db::KernelRecord &record : cache.kernels_of_op(op)) {
        if (!is_on_target(record.key, target) || key_threads(record.key.target) != threads) continue;
        rows[record.key.target][key_family(record.key)].push_back(record);
    }
    return rows;
}

// The job of one key family: every generic row of `rows` paired with each tuned shape of
// `family_rows` it has no timing at in `timed` ((digest, at_shape)).
StoredTimingJob family_job(db::KernelCache &cache, const db::KernelKey &key,
                           const std::vector<const db::GenericCodeRecord *> &rows,
                           const std::vector<db::KernelRecord> &family_rows,
                           const std::set<std::pair<std::string, std::string>> &timed, double min_ms) {
    StoredTimingJob job;
    job.db = cache.path();
    job.family = key;
    job.family.shape.clear();
    job.min_ms = min_ms;
    for (const db::GenericCodeRecord *row : rows) {
        for (const db::KernelRecord &r : family_rows) {
            if (!timed.count({row->code.digest, r.key.shape})) job.pairs.push_back({row->key.shape, row->code.digest, r.key.shape});
        }
    }
    return job;
}

// A folder of its own for one timer run, removed with it.
struct ScratchDir {
    std::filesystem::path path;
    ScratchDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "opgen-timing-XXXXXX").string();
        if (!mkdtemp(pattern.data())) throw UserError(std::string("cannot make a folder for the timer: ") + std::strerror(errno));
        path = pattern;
    }
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

// Runs the stored-code timer on `job` and reads its results, one per pair taken. UserError when
// the timer cannot be started or fails as a whole.
std::vector<StoredTimingResult> run_timer(StoredTimingJob job) {
    ScratchDir dir;
    const std::string request = (dir.path / "job.json").string(), log = (dir.path / "timer.log").string();
    job.results = (dir.path / "results.jsonl").string();
    std::ofstream(request) << to_json(job).dump();
    const std::string exe = helper_executable("OPGEN_CODE_TIMER", "opgen-code-timer", OPGEN_CODE_TIMER_EXE);
    pid_t pid = -1;
    int rc = spawn_logged(exe, {request}, log, environ, pid);
    if (rc != 0) throw UserError("cannot start the stored-code timer '" + exe + "': " + std::strerror(rc));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    std::vector<StoredTimingResult> results;
    std::ifstream in(job.results);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty()) results.push_back(stored_timing_result(nlohmann::json::parse(line)));
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        throw UserError("the stored-code timer failed: " + last_line(log));
    }
    return results;
}

// The stored timing of `r` for generic row `row`.
db::GenericTimingRecord timing_record(const db::GenericCodeRecord &row, const StoredTimingResult &r) {
    db::GenericTimingRecord t;
    t.key = row.key;
    t.digest = row.code.digest;
    t.at_shape = r.pair.at_shape;
    t.time_ms = r.time_ms;
    t.tuned_ms = r.tuned_ms;
    t.ratio = r.ratio;
    return t;
}

// The timings of every generic kernel of `op` on `target_key` at the tuned shapes of its family
// (`families`) that it has none at yet, one timer run per family.
std::vector<db::GenericTimingRecord> time_target_key(
    db::KernelCache &cache, const std::string &op, const std::string &target_key,
    const std::map<std::string, std::vector<db::KernelRecord>> &families,
    const std::vector<std::string> &trusted_keys, double min_ms, const FailureLog &fail,
    const std::function<void(const std::string &)> &log) {
    std::set<std::pair<std::string, std::string>> timed;  // (digest, at_shape)
    for (const db::GenericTimingRecord &t : cache.generic_timings_for(op, target_key)) {
        timed.insert({t.digest, t.at_shape});
    }
    std::vector<db::GenericCodeRecord> generic = cache.generic_code_for(op, target_key);
    std::vector<db::GenericTimingRecord> stored;
    for (const auto &[name, family_rows] : families) {
        std::map<std::string, const db::GenericCodeRecord *> rows;  // by "shape\ndigest"
        std::vector<const db::GenericCodeRecord *> ordered;
        for (const db::GenericCodeRecord &row : generic) {
            if (key_family(row.key) != name) continue;
            rows[row.key.shape + '\n' + row.code.digest] = &row;
            ordered.push_back(&row);
        }
        StoredTimingJob job = family_job(cache, family_rows.front().key, ordered, family_rows, timed, min_ms);
        if (job.pairs.empty()) continue;
        job.trusted_keys = trusted_keys;
        std::map<std::string, int> per_row;  // timings stored, by generic shape
        for (const StoredTimingResult &r : run_timer(job)) {
            auto row = rows.find(r.pair.generic_shape + '\n' + r.pair.digest);
            if (row == rows.end()) continue;
            if (!r.error.empty()) {
                fail("generic " + describe(row->second->key) + ": " + r.error);
                continue;
            }
            stored.push_back(timing_record(*row->second, r));
            per_row[r.pair.generic_shape]++;
        }
        for (const db::GenericCodeRecord *row : ordered) {
            if (log && per_row.count(row->key.shape)) {
                log("timed generic " + describe(row->key) + " at " + std::to_string(per_row[row->key.shape]) +
                    " tuned shape(s), its stored code against theirs");
            }
        }
    }
    return stored;
}

}  // namespace

int key_threads(const std::string &target_key) {
    size_t at = target_key.rfind(":t");
    if (at == std::string::npos) return 0;
    int n = std::atoi(target_key.c_str() + at + 2);
    return n > 0 ? n : 0;
}

CodeFillReport time_generic_code(db::KernelCache &cache, const OpLibrary &library, const Target &target,
                                 const std::vector<std::string> &ops,
                                 const std::vector<std::string> &trusted_keys, double min_ms,
                                 const std::function<void(const std::string &)> &log) {
    CodeFillReport report;
    const FailureLog fail{report, log};
    const int threads = process_threads();
    for (const std::string &op : ops.empty() ? library.list() : ops) {
        for (const auto &[target_key, families] : tuned_rows_of(cache, op, target, threads)) {
            std::vector<db::GenericTimingRecord> stored = time_target_key(cache, op, target_key, families, trusted_keys, min_ms, fail, log);
            cache.put_generic_timings(stored);
            report.compiled += int(stored.size());
        }
    }
    return report;
}

}  // namespace opgen::tuner
