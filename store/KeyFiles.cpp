#include "store/KeyFiles.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace opgen::db {

namespace {

// The most a key or trust file may hold: a trust file of many thousands of keys.
constexpr off_t kMaxKeyFileBytes = 1 << 20;

std::string quoted(const std::string &path) {
    return "'" + path + "'";
}

// Writes `text` to a new file at `path` with `mode`; fails when it exists.
void write_new_file(const std::string &path, const std::string &text, mode_t mode) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) {
        throw KeyFileError("key file " + quoted(path) + ": cannot create it: " + std::strerror(errno));
    }
    ssize_t written = ::write(fd, text.data(), text.size());
    bool ok = written == ssize_t(text.size()) && ::fsync(fd) == 0;
    ::close(fd);
    if (!ok) {
        ::unlink(path.c_str());
        throw KeyFileError("key file " + quoted(path) + ": cannot write it");
    }
}

// The text of a regular file of at most kMaxKeyFileBytes, with its mode in `mode`.
std::string read_small_file(const std::string &path, const std::string &what, mode_t *mode) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        throw KeyFileError(what + " " + quoted(path) + ": cannot open it: " + std::strerror(errno));
    }
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size > kMaxKeyFileBytes) {
        ::close(fd);
        throw KeyFileError(what + " " + quoted(path) + " is not a regular file of at most 1 MiB");
    }
    std::string text(size_t(info.st_size), '\0');
    ssize_t got = text.empty() ? 0 : ::read(fd, text.data(), text.size());
    ::close(fd);
    if (got != ssize_t(text.size())) {
        throw KeyFileError(what + " " + quoted(path) + ": cannot read it");
    }
    if (mode) {
        *mode = info.st_mode;
    }
    return text;
}

}  // namespace

SigningKey write_new_key_files(const std::string &path) {
    SigningKey key = new_signing_key();
    write_new_file(path, signing_key_text(key), 0600);
    try {
        write_new_file(path + ".pub", public_key_text(key.public_key) + "\n", 0644);
    } catch (...) {
        ::unlink(path.c_str());
        throw;
    }
    return key;
}

SigningKey read_signing_key_file(const std::string &path) {
    mode_t mode = 0;
    std::string text = read_small_file(path, "signing key", &mode);
    if (mode & (S_IRWXG | S_IRWXO)) {
        std::ostringstream octal;
        octal << std::oct << (mode & 0777);
        throw KeyFileError("signing key " + quoted(path) + " is open to others (mode 0" + octal.str() +
                           "); make it private with 'chmod 600 " + path + "'");
    }
    std::optional<SigningKey> key = parse_signing_key(text);
    if (!key) {
        throw KeyFileError("signing key " + quoted(path) + " does not hold an opgen Ed25519 private key");
    }
    return *key;
}

std::vector<PublicKey> read_trust_file(const std::string &path) {
    std::istringstream lines(read_small_file(path, "trust file", nullptr));
    std::vector<PublicKey> keys;
    std::string line;
    for (int number = 1; std::getline(lines, line); number++) {
        size_t first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos || line[first] == '#') {
            continue;
        }
        std::optional<PublicKey> key = parse_public_key(line);
        if (!key) {
            throw KeyFileError("trust file " + quoted(path) + ":" + std::to_string(number) +
                               ": not a public key (expected ed25519:<64 hex digits>)");
        }
        keys.push_back(*key);
    }
    return keys;
}

std::vector<PublicKey> read_trusted_keys(const std::vector<std::string> &keys_or_files) {
    std::vector<PublicKey> keys;
    for (const std::string &item : keys_or_files) {
        if (std::optional<PublicKey> key = parse_public_key(item)) {
            keys.push_back(*key);
            continue;
        }
        if (item.rfind("ed25519:", 0) == 0) {
            throw KeyFileError("trusted key '" + item + "' is not a public key (expected ed25519:<64 hex digits>)");
        }
        std::vector<PublicKey> listed = read_trust_file(item);
        keys.insert(keys.end(), listed.begin(), listed.end());
    }
    return keys;
}

}  // namespace opgen::db
