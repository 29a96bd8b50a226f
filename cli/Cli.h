// The opgen command's parts: each file registers its subcommands on the CLI11 app, with a
// callback that does the work. Callbacks raise UserError (and db/costmodel errors) for bad input;
// main turns every such error into one `error: ...` line and a non-zero exit.
#ifndef OPGEN_CLI_CLI_H
#define OPGEN_CLI_CLI_H

#include "store/KernelCache.h"
#include "store/VariantStore.h"
#include "core/Target.h"
#include "tuner/Tuner.h"
#include "tuner/Variants.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace opgen::cli {

// Options most commands share.
struct Common {
    std::vector<std::string> ops_dirs;
    std::string target = "host";
    std::string db_path = "opgen.db";
    int threads = 0;
    std::string signing_key;  // commands that store code: --signing-key (add_signing_key_option)
};

void add_common_options(CLI::App *cmd, Common &c, bool with_db);

// Cores a kernel may use: --threads, else every core of the target.
int threads_of(const Common &c, const Target &t);

// The Halide runtime reads its thread count once, at its first parallel loop.
void set_threads(int threads);

// A cached kernel as the JSON answer of `query` and `tune --json`; `answer` says how it was found.
nlohmann::json record_json(const db::KernelRecord &r, const std::string &answer);

std::string fixed(double v, int precision = 2);

// Writes `text` to `path` whole or not at all (a temporary file, then a rename); `what` names the
// file in the error ("report", "manifest").
void write_file_whole(const std::string &path, const std::string &text, const std::string &what);

// Schedule variants under contention as the JSON list of `query` and `tune --variants --json`
// (TuneCommands.cpp).
nlohmann::json variants_json(const std::vector<db::VariantRecord> &variants);

// One line per kernel: op, shape, time, GFLOP/s, default time, speedup, trials.
void print_table(const std::vector<db::KernelRecord> &rows);

// The variant-tuning flags `tune --variants` and `compile --variants` share: --variant-rounds,
// --variant-finalists, --variant-search and --variant-keep, bound to `vo`'s fields (their
// defaults are VariantOptions'); CLI11 refuses a value out of range.
void add_variant_tuning_options(CLI::App *cmd, tuner::VariantOptions &vo);

// The tuning flags `tune` and `batch` share (TuneCommands.cpp).
struct TuneFlags {
    int trials = 24;
    uint64_t seed = 1;
    bool quiet = false;
    int jobs = 0;               // measurement workers; 0: the machine's cores
    double time_budget_s = 0;   // 0: none
    int patience = 0;           // rounds without improvement before stopping; 0: never
    double timeout_s = 60;      // per candidate step
    double min_time_ms = 60;    // timing per candidate
    bool no_default_model = false;  // start from the roofline, not the target's default cost model
    std::string test_fault;     // test-only: "crash:2,hang:5"
    explicit TuneFlags(CLI::App *cmd);
};
tuner::TuneOptions tune_options(const TuneFlags &f, const Common &c, const Target &t);

// Registration, one function per file.
void add_tune_commands(CLI::App &app);   // tune (TuneCommands.cpp)
void add_query_commands(CLI::App &app);  // query (QueryCommands.cpp)
void add_batch_commands(CLI::App &app);  // batch (BatchCommands.cpp)
void add_emit_command(CLI::App &app);   // emit (EmitCommand.cpp)
void add_info_commands(CLI::App &app);  // ops, space, target (InfoCommands.cpp)
void add_db_commands(CLI::App &app);    // db stats/merge/export (DbCommands.cpp)
void add_model_commands(CLI::App &app);  // model collect/train/eval (ModelCommands.cpp)
void add_extract_command(CLI::App &app);  // extract (ExtractCommand.cpp)
void add_library_command(CLI::App &app);  // library (LibraryCommand.cpp)
void add_compile_command(CLI::App &app);  // compile (CompileCommand.cpp)
void add_run_command(CLI::App &app);      // run (RunCommand.cpp)
void add_key_commands(CLI::App &app);     // key new/public (KeyCommands.cpp)
void add_signing_commands(CLI::App *db_cmd);  // db sign/verify (KeyCommands.cpp)

// --signing-key FILE on a command that stores code (KeyCommands.cpp), and the key it names, else
// OPGEN_SIGNING_KEY's; nullopt when neither names one. Raises KeyFileError for a key file that is
// open to others or holds no key.
void add_signing_key_option(CLI::App *cmd, std::string &path);
std::optional<db::SigningKey> signing_key_of(const std::string &path);

}  // namespace opgen::cli

#endif
