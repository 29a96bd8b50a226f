// The opgen command: parses arguments and connects the libraries (opgen_core, tuner, costmodel,
// db). Each command lives in cli/ and registers itself; this file only runs the parse and
// turns every user error into one `error: ...` line and a non-zero exit.
#include "costmodel/CostModel.h"
#include "store/KernelCache.h"
#include "base/Error.h"
#include "cli/Cli.h"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char **argv) {
    using namespace opgen;
    CLI::App app{"opgen: generates and tunes tensor-operator kernels and serves them from a shape-keyed cache"};
    app.require_subcommand(1);
    cli::add_tune_commands(app);
    cli::add_query_commands(app);
    cli::add_batch_commands(app);
    cli::add_emit_command(app);
    cli::add_info_commands(app);
    cli::add_db_commands(app);
    cli::add_key_commands(app);
    cli::add_model_commands(app);
    cli::add_extract_command(app);
    cli::add_library_command(app);
    cli::add_compile_command(app);
    cli::add_run_command(app);
    try {
        app.parse(argc, argv);  // the chosen command runs inside, as its callback
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
    } catch (const UserError &e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    } catch (const db::DbError &e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    } catch (const costmodel::ModelError &e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "error: internal: " << e.what() << "\n";
        return 3;
    }
    return 0;
}
