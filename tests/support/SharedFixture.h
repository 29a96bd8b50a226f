// A fixture folder made once per test run and shared by every test process that asks for it.
//
// CTest runs each GoogleTest case in a process of its own, so a fixture kept in a function-local
// static (a cache with tuned kernels) was made again for every case. shared_fixture() keeps it in
// the build tree instead: the first process to ask makes it under an exclusive lock, the others
// wait for the lock and reuse it. A fixture is made again when its stamp changes (the stamp names
// what made it: the opgen executable's size and modification time), so a rebuilt opgen never
// serves a fixture an older one made. Callers must treat the folder as read-only: copy out what a
// test edits.
#ifndef OPGEN_TESTS_SUPPORT_SHARED_FIXTURE_H
#define OPGEN_TESTS_SUPPORT_SHARED_FIXTURE_H

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <string>

namespace opgen::test {

// "size:mtime" of the file at `path`; raises when it cannot be read.
inline std::string file_stamp(const std::string &path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) throw std::runtime_error("shared fixture: cannot stat " + path);
    return std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
}

// The folder OPGEN_BINARY_DIR/test-fixtures/`name`, made by `make` (which fills the empty folder
// it is given and raises on failure) unless a complete one with the same `stamp` is there.
inline std::filesystem::path shared_fixture(const std::string &name, const std::string &stamp,
                                            const std::function<void(const std::filesystem::path &)> &make) {
    namespace fs = std::filesystem;
    const fs::path root = fs::path(OPGEN_BINARY_DIR) / "test-fixtures";
    fs::create_directories(root);
    const fs::path dir = root / name;
    const fs::path lock_path = root / (name + ".lock");
    int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("shared fixture: cannot open " + lock_path.string());
    if (::flock(fd, LOCK_EX) != 0) {
        ::close(fd);
        throw std::runtime_error("shared fixture: cannot lock " + lock_path.string());
    }
    struct Unlock {
        int fd;
        ~Unlock() { ::close(fd); }  // closing releases the lock
    } unlock{fd};
    const fs::path ready = dir / ".ready";
    {
        std::ifstream in(ready);
        std::string have((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (in && have == stamp) return dir;
    }
    fs::remove_all(dir);
    fs::create_directories(dir);
    make(dir);  // raises: the folder stays without .ready, and the next caller makes it again
    std::ofstream(ready) << stamp;
    return dir;
}

}  // namespace opgen::test

#endif
