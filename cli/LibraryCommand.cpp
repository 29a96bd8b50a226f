// library: one static library and header of a manifest's cached winners (codegen/KernelLibrary.h).
#include "core/OpLibrary.h"
#include "cli/Cli.h"
#include "codegen/KernelLibrary.h"
#include "core/Manifest.h"

#include <cstdio>
#include <fstream>
#include <memory>

namespace opgen::cli {

void add_library_command(CLI::App &app) {
    struct Args {
        Common common;
        std::string manifest, out;
    };
    auto a = std::make_shared<Args>();
    auto *cmd = app.add_subcommand(
        "library", "build one static library + header (a CMake package) of a manifest's cached winners");
    cmd->add_option("manifest", a->manifest, "batch manifest (JSON)")->required();
    cmd->add_option("-o,--out", a->out, "output folder: include/, lib/, lib/cmake/opgen_library/")->required();
    add_common_options(cmd, a->common, true);
    cmd->callback([a] {
        OpLibrary lib = OpLibrary::standard(a->common.ops_dirs);
        opgen::ManifestDefaults defaults;
        defaults.target = a->common.target;
        opgen::Manifest manifest = opgen::load_manifest(a->manifest, lib, defaults);
        user_check(std::ifstream(a->common.db_path).good()) << "no cache file '" << a->common.db_path << "'";
        auto cache = db::open_kernel_cache(a->common.db_path, db::OpenMode::ReadOnly);
        opgen::KernelLibraryReport r = opgen::build_kernel_library(
            manifest, lib, *cache, a->common.threads, a->out,
            [](const std::string &line) { std::printf("%s\n", line.c_str()); });
        for (const std::string &task : r.untuned) std::printf("not tuned, left to the op's generic kernel: %s\n", task.c_str());
        for (const std::string &f : r.files) std::printf("%s\n", f.c_str());
        std::printf("%s: %d kernel(s), %zu task(s) without a tuned kernel, %d generic kernel(s)\n", a->out.c_str(),
                    r.kernels, r.untuned.size(), r.generic);
    });
}

}  // namespace opgen::cli
