#include "codegen/HelperProcess.h"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

extern char **environ;

namespace opgen {

std::string helper_executable(const char *env_var, const std::string &name, const std::string &built) {
    if (const char *env = std::getenv(env_var)) return env;
    std::error_code ec;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        auto beside = self.parent_path() / name;
        if (access(beside.c_str(), X_OK) == 0) return beside.string();
    }
    return built;
}

std::string worker_executable() { return helper_executable("OPGEN_WORKER", "opgen-worker", OPGEN_WORKER_EXE); }

int spawn_logged(const std::string &exe, const std::vector<std::string> &args, const std::string &log,
                 char *const *env, pid_t &pid) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    std::vector<char *> argv = {const_cast<char *>(exe.c_str())};
    for (const std::string &a : args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), env);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

std::string last_line(const std::string &path) {
    std::ifstream in(path);
    std::string line, last = "(no output)";
    while (std::getline(in, line)) {
        if (!line.empty()) last = line;
    }
    return last;
}

}  // namespace opgen
