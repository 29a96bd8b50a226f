// Running the real opgen command (or any shell command) from a test, in a folder, capturing its
// exit status, stdout and stderr.
#ifndef OPGEN_TESTS_BATCH_COMMAND_RUN_H
#define OPGEN_TESTS_BATCH_COMMAND_RUN_H

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace opgen::test {

struct CommandRun {
    int status = -1;
    std::string out, err;
};

inline std::string slurp(const std::filesystem::path &p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Runs the shell command `cmd` in `dir`.
inline CommandRun run_in(const std::filesystem::path &dir, const std::string &cmd) {
    std::string full = "cd '" + dir.string() + "' && " + cmd + " >stdout.txt 2>stderr.txt";
    int rc = std::system(full.c_str());
    return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(dir / "stdout.txt"), slurp(dir / "stderr.txt")};
}

// An empty folder for the running test: <tmp>/<prefix>-<pid>-<test name>.
inline std::filesystem::path fresh_test_dir(const std::string &prefix) {
    auto dir = std::filesystem::temp_directory_path() /
               (prefix + "-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

// Runs `opgen ARGS` (a shell-quoted string) in `dir`.
inline CommandRun run_opgen(const std::string &args, const std::filesystem::path &dir) {
    return run_in(dir, "'" + std::string(OPGEN_EXE) + "' " + args);
}

}  // namespace opgen::test

#endif
