// Shared by the compiled-code tests: one cache with a real kernel, tuned once per test run by
// the real opgen command (which stores the winner's code), copied per test; editing the code row
// behind the cache's back; and a naive matmul to check results against.
#ifndef OPGEN_TESTS_CODE_CODE_TEST_SUPPORT_H
#define OPGEN_TESTS_CODE_CODE_TEST_SUPPORT_H

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <sqlite3.h>
#include <unistd.h>

#include "store/CodeSignature.h"
#include "store/KernelCache.h"
#include "store/KernelCode.h"
#include "store/KeyFiles.h"
#include "tests/batch/CommandRun.h"
#include "tests/support/KernelFixtures.h"

namespace opgen::test {

namespace fs = std::filesystem;

// A fresh copy of the tuned cache at `path`.
inline std::string copy_tuned_cache(const std::string &path) {
    fs::copy_file(tuned_cache_folder() / "base.db", path, fs::copy_options::overwrite_existing);
    return path;
}

// Runs `sql` on the file directly; the first column of the first row as text ("" for none).
inline std::string raw_sql(const std::string &path, const std::string &sql) {
    sqlite3 *db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
        sqlite3_close_v2(db);
        throw std::runtime_error("cannot open " + path);
    }
    sqlite3_stmt *statement = nullptr;
    std::string result;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
        std::string why = sqlite3_errmsg(db);
        sqlite3_close_v2(db);
        throw std::runtime_error("bad sql: " + why);
    }
    if (sqlite3_step(statement) == SQLITE_ROW && sqlite3_column_text(statement, 0)) {
        result = reinterpret_cast<const char *>(sqlite3_column_text(statement, 0));
    }
    sqlite3_finalize(statement);
    sqlite3_close_v2(db);
    return result;
}

// The target key of the tuned kernel ("x86-64-avx512:t1" on an AVX-512 host).
inline std::string tuned_target(const std::string &path) {
    return raw_sql(path, "SELECT target FROM kernels LIMIT 1");
}

inline db::KernelKey tuned_key(const std::string &path) {
    auto cache = db::open_kernel_cache(path, db::OpenMode::ReadOnly);
    return cache->kernels_for("matmul", tuned_target(path)).at(0).key;
}

// The tests' signing key and trusted keys (OPGEN_SIGNING_KEY, OPGEN_TRUST_FILE: tests/CMakeLists.txt).
inline db::SigningKey test_signing_key() {
    const char *path = std::getenv("OPGEN_SIGNING_KEY");
    if (!path) throw std::runtime_error("OPGEN_SIGNING_KEY is not set: run the tests through ctest");
    return db::read_signing_key_file(path);
}
inline std::string test_public_key() { return db::public_key_text(test_signing_key().public_key); }

// The cache at `path` opened read-write, signing the code it stores with the tests' key, as the
// opgen command does under OPGEN_SIGNING_KEY.
inline std::unique_ptr<db::KernelCache> signing_cache(const std::string &path) {
    std::unique_ptr<db::KernelCache> cache = db::open_kernel_cache(path, db::OpenMode::ReadWrite);
    cache->set_signing_key(test_signing_key());
    return cache;
}

// Rewrites the tuned matmul's code row after `edit`; with `fix_digest` the digest is recomputed
// and the row signed again with the tests' key, so that the check under test, not the digest or
// the signature, is what must refuse it.
inline void edit_code(const std::string &path, const std::function<void(db::KernelCode &)> &edit,
                      bool fix_digest) {
    db::KernelKey key = tuned_key(path);
    db::KernelCode code = *db::open_kernel_cache(path, db::OpenMode::ReadOnly)->code_for(key);
    edit(code);
    if (fix_digest) {
        code.digest = db::code_digest(code);
        db::sign_code(key, code, test_signing_key());
    }
    sqlite3 *db = nullptr;
    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
    sqlite3_stmt *s = nullptr;
    sqlite3_prepare_v2(db,
                       "UPDATE kernel_code SET halide_target = ?1, cpu_features = ?2, abi_version = ?3, "
                       "format = ?4, size = ?5, digest = ?6, bytes = ?7, signed_by = ?8, "
                       "ed25519_signature = ?9 WHERE op_name = 'matmul'",
                       -1, &s, nullptr);
    sqlite3_bind_text(s, 1, code.halide_target.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, code.cpu_features.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 3, code.abi_version);
    sqlite3_bind_text(s, 4, code.format.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 5, code.size);
    sqlite3_bind_text(s, 6, code.digest.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_blob(s, 7, code.bytes.data(), int(code.bytes.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 8, code.signed_by.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 9, code.ed25519_signature.c_str(), -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    sqlite3_close_v2(db);
    if (rc != SQLITE_DONE) throw std::runtime_error("cannot rewrite the code row of " + path);
}

// Row-major inputs with small integer values (exact in float sums), and the naive product.
struct MatmulData {
    std::vector<float> a = std::vector<float>(kM * kK), b = std::vector<float>(kK * kN);
    std::vector<float> c = std::vector<float>(kM * kN, -1.0f), expected = std::vector<float>(kM * kN);
    MatmulData() {
        for (int i = 0; i < kM * kK; i++) a[i] = float(i % 7 - 3);
        for (int i = 0; i < kK * kN; i++) b[i] = float(i % 5 - 2);
        for (int m = 0; m < kM; m++)
            for (int n = 0; n < kN; n++) {
                double sum = 0;
                for (int k = 0; k < kK; k++) sum += double(a[m * kK + k]) * b[k * kN + n];
                expected[m * kN + n] = float(sum);
            }
    }
    // The largest |c - expected|.
    double max_error() const {
        double worst = 0;
        for (size_t i = 0; i < c.size(); i++) worst = std::max(worst, std::fabs(double(c[i]) - expected[i]));
        return worst;
    }
};

// How many memory files of loaded kernel code this process has mapped (each maps several
// segments; counted by inode): refused code adds none.
inline int mapped_kernel_files() {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    std::set<std::string> inodes;
    while (std::getline(maps, line)) {
        if (line.find("memfd:opgen-kernel") == std::string::npos) continue;
        std::istringstream fields(line);
        std::string range, perms, offset, device, inode;
        fields >> range >> perms >> offset >> device >> inode;
        inodes.insert(inode);
    }
    return int(inodes.size());
}

}  // namespace opgen::test

#endif
