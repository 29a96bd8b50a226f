// opgen_test_fixture NAME: makes the shared kernel fixture NAME (tests/support/KernelFixtures.h)
// unless this run already made it, and prints its folder. For tests that are not GoogleTest
// binaries (tests/consumer/run.cmake), so that they share the code tests' tuned caches.
//
// opgen_test_fixture attack MOVE DB: makes one of an attacker's moves on the matmul code row of the
// cache DB, for the consumer project to show that the installed lookup library refuses it:
//   swap-bytes          the softmax row's bytes, the digest recomputed to match
//   copy-signature      the softmax row's signature
//   untrusted-key       every row signed again with a fresh key
//   truncate-signature  the signature cut short by one byte
//   unsigned            no signature
#include "tests/code/CodeTestSupport.h"

#include <cstdio>
#include <cstring>
#include <exception>

namespace {

using namespace opgen;

db::KernelCode code_of(const std::string &path, const std::string &op) {
    auto cache = db::open_kernel_cache(path, db::OpenMode::ReadOnly);
    return *cache->code_for(cache->kernels_for(op, test::tuned_target(path)).at(0).key);
}

int attack(const std::string &move, const std::string &path) {
    if (move == "swap-bytes") {
        db::KernelCode softmax = code_of(path, "softmax");
        test::edit_code(path, [&](db::KernelCode &c) {
            c.bytes = softmax.bytes;
            c.size = softmax.size;
            c.digest = db::code_digest(c);
        }, false);
    } else if (move == "copy-signature") {
        test::raw_sql(path, "UPDATE kernel_code SET ed25519_signature = '" + code_of(path, "softmax").ed25519_signature +
                                "' WHERE op_name = 'matmul'");
    } else if (move == "untrusted-key") {
        db::open_kernel_cache(path, db::OpenMode::ReadWrite)->sign_code_rows(db::new_signing_key(), false);
    } else if (move == "truncate-signature") {
        test::raw_sql(path, "UPDATE kernel_code SET ed25519_signature = substr(ed25519_signature, 1, 126) "
                            "WHERE op_name = 'matmul'");
    } else if (move == "unsigned") {
        test::raw_sql(path, "UPDATE kernel_code SET signed_by = '', ed25519_signature = '' WHERE op_name = 'matmul'");
    } else {
        std::fprintf(stderr, "error: no attack named '%s'\n", move.c_str());
        return 2;
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc == 4 && std::strcmp(argv[1], "attack") == 0) {
        try {
            return attack(argv[2], argv[3]);
        } catch (const std::exception &e) {
            std::fprintf(stderr, "error: %s\n", e.what());
            return 1;
        }
    }
    if (argc != 2) {
        std::fprintf(stderr, "usage: opgen_test_fixture code-tuned|code-generic | attack MOVE DB\n");
        return 2;
    }
    try {
        if (std::strcmp(argv[1], "code-tuned") == 0) {
            std::printf("%s\n", opgen::test::tuned_cache_folder().c_str());
        } else if (std::strcmp(argv[1], "code-generic") == 0) {
            std::printf("%s\n", opgen::test::generic_cache_folder().c_str());
        } else {
            std::fprintf(stderr, "error: no fixture named '%s'\n", argv[1]);
            return 2;
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
