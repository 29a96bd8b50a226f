// Only trusted code runs (runtime/CodeTrust.h): the cache tuned by the real opgen command is signed
// with the tests' key (OPGEN_SIGNING_KEY), and a lookup that trusts that key runs its code. An
// attacker who can write the file makes the moves below; each is refused with its reason, counted,
// and nothing is mapped. This binary links only the lookup library opgen_cache.
#include <sys/stat.h>

#include <map>

#include <gtest/gtest.h>

#include "runtime/CodeTrust.h"
#include "runtime/Lookup.h"
#include "runtime/opgen_cache.h"
#include "tests/code/CodeTestSupport.h"

namespace opgen::test {
namespace {

class CodeTrustTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("opgen-trust-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                "-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        path_ = copy_tuned_cache((dir_ / "k.db").string());
        trusted_.keys = {test_signing_key().public_key};
    }
    void TearDown() override { fs::remove_all(dir_); }

    db::LookupRequest request(const std::string &op = "matmul", const std::string &shape = kMatmulShape) const {
        db::LookupRequest r;
        r.op_name = op;
        r.shape = shape;
        r.target = tuned_target(path_);
        return r;
    }

    // The refusal of the matmul's code by a lookup trusting `trust`: its message, after checking
    // that it was counted and that nothing was mapped. Fails the test when the code loads.
    std::string refusal(const db::TrustPolicy &trust) const {
        int mapped = mapped_kernel_files();
        auto lookup = db::open_kernel_lookup(path_, trust);
        try {
            lookup->kernel(request());
        } catch (const db::DbError &e) {
            EXPECT_EQ(mapped_kernel_files(), mapped) << "refused code was mapped";
            EXPECT_EQ(lookup->refused_code(), 1);
            return e.what();
        }
        ADD_FAILURE() << "the kernel loaded";
        return "";
    }
    std::string refusal() const { return refusal(trusted_); }

    // The matmul's and the softmax's code rows as stored.
    db::KernelCode code_of(const std::string &op) const {
        auto cache = db::open_kernel_cache(path_, db::OpenMode::ReadOnly);
        return *cache->code_for(cache->kernels_for(op, tuned_target(path_)).at(0).key);
    }

    fs::path dir_;
    std::string path_;
    db::TrustPolicy trusted_;
};

TEST_F(CodeTrustTest, CodeSignedByATrustedKeyRuns) {
    db::KernelCode code = code_of("matmul");
    EXPECT_EQ(code.signed_by, test_public_key());
    EXPECT_EQ(code.ed25519_signature.size(), 128u);
    auto lookup = db::open_kernel_lookup(path_, trusted_);
    std::shared_ptr<const db::LoadedKernel> kernel = lookup->kernel(request());
    ASSERT_TRUE(kernel);
    MatmulData data;
    void *pointers[] = {data.a.data(), data.b.data(), data.c.data()};
    ASSERT_EQ(kernel->call(pointers, 3), 0);
    EXPECT_EQ(data.max_error(), 0.0);
    EXPECT_EQ(lookup->refused_code(), 0);
}

TEST_F(CodeTrustTest, NoTrustedKeyRunsNothing) {
    std::string why = refusal(db::TrustPolicy{});
    EXPECT_NE(why.find("its signer " + test_public_key() + " is not a trusted key"), std::string::npos) << why;
}

TEST_F(CodeTrustTest, UnsignedCodeIsRefusedUnlessTheDevelopmentOptOutIsGiven) {
    raw_sql(path_, "UPDATE kernel_code SET signed_by = '', ed25519_signature = ''");
    std::string why = refusal();
    EXPECT_NE(why.find("it is unsigned, and only code signed by a trusted key runs"), std::string::npos) << why;
    db::TrustPolicy opt_out;
    opt_out.allow_unsigned = true;
    EXPECT_TRUE(db::open_kernel_lookup(path_, opt_out)->kernel(request()));
}

// Attack 1: another valid kernel's bytes in the row, with the digest recomputed to match.
TEST_F(CodeTrustTest, RefusesAnotherKernelsBytesUnderARecomputedDigest) {
    db::KernelCode softmax = code_of("softmax");
    auto cache = db::open_kernel_cache(path_, db::OpenMode::ReadOnly);
    edit_code(path_, [&](db::KernelCode &c) {
        c.bytes = softmax.bytes;
        c.size = softmax.size;
        c.digest = db::code_digest(c);
    }, false);
    std::string why = refusal();
    EXPECT_NE(why.find("its signature does not verify for this row"), std::string::npos) << why;
    // The opt-out for unsigned code does not let a broken signature through.
    db::TrustPolicy opt_out = trusted_;
    opt_out.allow_unsigned = true;
    why = refusal(opt_out);
    EXPECT_NE(why.find("its signature does not verify for this row"), std::string::npos) << why;
}

// Attack 2: a signature copied from another row of the same signer.
TEST_F(CodeTrustTest, RefusesASignatureCopiedFromAnotherRow) {
    db::KernelCode softmax = code_of("softmax");
    raw_sql(path_, "UPDATE kernel_code SET ed25519_signature = '" + softmax.ed25519_signature +
                       "' WHERE op_name = 'matmul'");
    std::string why = refusal();
    EXPECT_NE(why.find("its signature does not verify for this row"), std::string::npos) << why;
}

// Attack 2b: another row's whole code, digest and signature: each valid, but signed for the other
// row's key.
TEST_F(CodeTrustTest, RefusesAnotherRowsWholeSignedCode) {
    db::KernelCode softmax = code_of("softmax");
    edit_code(path_, [&](db::KernelCode &c) {
        c.bytes = softmax.bytes;
        c.size = softmax.size;
        c.digest = softmax.digest;
        c.ed25519_signature = softmax.ed25519_signature;
    }, false);
    raw_sql(path_, "UPDATE kernel_code SET function = 'opgen_softmax', signature = (SELECT signature FROM "
                   "kernel_code WHERE op_name = 'softmax') WHERE op_name = 'matmul'");
    std::string why = refusal();
    EXPECT_NE(why.find("its signature does not verify for this row"), std::string::npos) << why;
}

// Attack 3: every row signed again by the attacker's own key.
TEST_F(CodeTrustTest, RefusesCodeSignedByAnUntrustedKey) {
    db::SigningKey attacker = db::new_signing_key();
    db::CodeSigningReport r = db::open_kernel_cache(path_, db::OpenMode::ReadWrite)->sign_code_rows(attacker, false);
    EXPECT_EQ(r.signed_rows, 2);
    std::string why = refusal();
    EXPECT_NE(why.find("its signer " + db::public_key_text(attacker.public_key) + " is not a trusted key"),
              std::string::npos)
        << why;
}

// Attack 4: a truncated signature.
TEST_F(CodeTrustTest, RefusesATruncatedSignature) {
    raw_sql(path_, "UPDATE kernel_code SET ed25519_signature = substr(ed25519_signature, 1, 126) "
                   "WHERE op_name = 'matmul'");
    std::string why = refusal();
    EXPECT_NE(why.find("its signature does not verify for this row"), std::string::npos) << why;
}

// Attack 5: a private key file others can read is refused before it signs anything.
TEST_F(CodeTrustTest, RefusesAKeyFileOpenToOthers) {
    std::string key = (dir_ / "loose.key").string();
    db::write_new_key_files(key);
    EXPECT_EQ(fs::status(key).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_NO_THROW(db::read_signing_key_file(key));
    ::chmod(key.c_str(), 0644);
    try {
        db::read_signing_key_file(key);
        ADD_FAILURE() << "a key file of mode 0644 was read";
    } catch (const db::KeyFileError &e) {
        EXPECT_NE(std::string(e.what()).find("is open to others (mode 0644)"), std::string::npos) << e.what();
    }
    CommandRun run = run_opgen("db sign --db " + path_ + " --signing-key " + key, dir_);
    EXPECT_NE(run.status, 0);
    EXPECT_NE(run.err.find("error: signing key '" + key + "' is open to others"), std::string::npos) << run.err;
}

TEST_F(CodeTrustTest, CApiOpensWithTrustedKeysAndCountsRefusals) {
    std::string target = tuned_target(path_);
    std::string key = test_public_key();
    const char *keys[] = {key.c_str()};
    opgen_cache *cache = nullptr;
    char *error = nullptr;
    ASSERT_EQ(opgen_cache_open_trusted(path_.c_str(), keys, 1, &cache, &error), 0) << error;
    const opgen_cache_kernel *kernel = nullptr;
    EXPECT_EQ(opgen_cache_kernel_find(cache, "matmul", kMatmulShape, nullptr, target.c_str(), &kernel), 0)
        << opgen_cache_error(cache);
    EXPECT_EQ(opgen_cache_refused_code(cache), 0);
    opgen_cache_close(cache);

    const char *bad[] = {"ed25519:12"};
    EXPECT_EQ(opgen_cache_open_trusted(path_.c_str(), bad, 1, &cache, &error), -1);
    ASSERT_NE(error, nullptr);
    EXPECT_NE(std::string(error).find("is not ed25519:<64 hex digits>"), std::string::npos) << error;
    opgen_cache_free_string(error);

    raw_sql(path_, "UPDATE kernel_code SET signed_by = '', ed25519_signature = ''");
    opgen_cache_options options{};
    options.trusted_keys = keys;
    options.trusted_key_count = 1;
    ASSERT_EQ(opgen_cache_open_with(path_.c_str(), &options, &cache, &error), 0) << error;
    EXPECT_EQ(opgen_cache_kernel_find(cache, "matmul", kMatmulShape, nullptr, target.c_str(), &kernel), -1);
    EXPECT_NE(std::string(opgen_cache_error(cache)).find("it is unsigned"), std::string::npos);
    EXPECT_EQ(opgen_cache_refused_code(cache), 1);
    opgen_cache_close(cache);
}

TEST_F(CodeTrustTest, DbVerifyListsEachRowAndDbSignVouchesForIt) {
    std::string trust = "--trust " + test_public_key();
    CommandRun run = run_opgen("db verify --db " + path_ + " " + trust, dir_);
    EXPECT_EQ(run.status, 0) << run.out << run.err;
    EXPECT_NE(run.out.find("2 of 2 code row(s) signed by a trusted key"), std::string::npos) << run.out;

    std::string other = (dir_ / "other.key").string();
    ASSERT_EQ(run_opgen("key new " + other, dir_).status, 0);
    ASSERT_EQ(run_opgen("db sign --db " + path_ + " --signing-key " + other, dir_).status, 0);
    run = run_opgen("db verify --db " + path_ + " " + trust, dir_);
    EXPECT_EQ(run.status, 1);
    EXPECT_NE(run.out.find("unknown signer"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("0 of 2 code row(s) signed by a trusted key"), std::string::npos) << run.out;
    run = run_opgen("db verify --db " + path_ + " --trust " + other + ".pub", dir_);
    EXPECT_EQ(run.status, 0) << run.out;
}

// Generic code is held to the same rule: unsigned generic rows serve no shape, neither as an
// answer nor as a kernel, and each refused row is counted.
TEST_F(CodeTrustTest, UnsignedGenericCodeServesNoShape) {
    fs::copy_file(generic_cache_folder() / "g.db", path_, fs::copy_options::overwrite_existing);
    db::LookupRequest never_tuned = request("matmul", "M=20,N=50,K=30");
    EXPECT_TRUE(db::open_kernel_lookup(path_, trusted_)->kernel(never_tuned));
    raw_sql(path_, "UPDATE generic_code SET signed_by = '', ed25519_signature = ''");
    int mapped = mapped_kernel_files();
    auto lookup = db::open_kernel_lookup(path_, trusted_);
    // Each raises the refusal, as the lookup does when only refused code could have answered.
    for (bool as_kernel : {false, true}) {
        try {
            if (as_kernel) {
                EXPECT_FALSE(lookup->kernel(never_tuned)) << "unsigned generic code was served";
            } else {
                EXPECT_NE(lookup->find(never_tuned).kind, db::AnswerKind::Generic);
            }
        } catch (const db::DbError &e) {
            EXPECT_NE(std::string(e.what()).find("refused: it is unsigned"), std::string::npos) << e.what();
        }
    }
    EXPECT_GE(lookup->refused_code(), 1);
    EXPECT_EQ(mapped_kernel_files(), mapped) << "refused code was mapped";
}

// A file of schema version 6 (before signatures) upgrades with its code rows unsigned: refused
// until `opgen db sign` vouches for them.
TEST_F(CodeTrustTest, AnUpgradedFileHoldsUnsignedCodeUntilSigned) {
    raw_sql(path_, "ALTER TABLE kernel_code DROP COLUMN signed_by");
    raw_sql(path_, "ALTER TABLE kernel_code DROP COLUMN ed25519_signature");
    raw_sql(path_, "ALTER TABLE generic_code DROP COLUMN signed_by");
    raw_sql(path_, "ALTER TABLE generic_code DROP COLUMN ed25519_signature");
    raw_sql(path_, "PRAGMA user_version = 6");
    EXPECT_EQ(db::open_kernel_cache(path_, db::OpenMode::ReadWrite)->stats().schema_version, 7);
    EXPECT_EQ(code_of("matmul").signed_by, "");
    std::string why = refusal();
    EXPECT_NE(why.find("it is unsigned"), std::string::npos) << why;
    const char *key = std::getenv("OPGEN_SIGNING_KEY");
    ASSERT_NE(key, nullptr);
    ASSERT_EQ(run_opgen("db sign --db " + path_ + " --signing-key " + key, dir_).status, 0);
    EXPECT_TRUE(db::open_kernel_lookup(path_, trusted_)->kernel(request()));
}

// A merge given a key signs the rows that came in unsigned and keeps the others' signers.
TEST_F(CodeTrustTest, MergeWithAKeySignsOnlyWhatCameInUnsigned) {
    std::string unsigned_copy = (dir_ / "unsigned.db").string();
    fs::copy_file(path_, unsigned_copy);
    raw_sql(unsigned_copy, "UPDATE kernel_code SET signed_by = '', ed25519_signature = '' WHERE op_name = 'softmax'");
    std::string other = (dir_ / "other.key").string();
    ASSERT_EQ(run_opgen("key new " + other, dir_).status, 0);
    std::string merged = (dir_ / "merged.db").string();
    CommandRun run = run_opgen("db merge " + unsigned_copy + " -o " + merged + " --signing-key " + other, dir_);
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_NE(run.out.find("signed 1 unsigned code row(s), kept 1 signed ones"), std::string::npos) << run.out;
    std::map<std::string, std::string> signer;
    db::open_kernel_cache(merged, db::OpenMode::ReadOnly)->visit_code_rows(
        [&](const db::KernelKey &key, const db::KernelCode &code) { signer[key.op_name] = code.signed_by; });
    EXPECT_EQ(signer["matmul"], test_public_key());
    EXPECT_EQ(signer["softmax"], db::public_key_text(db::read_signing_key_file(other).public_key));
}

TEST_F(CodeTrustTest, MergeKeepsSignatures) {
    std::string merged = (dir_ / "merged.db").string();
    ASSERT_EQ(run_opgen("db merge " + path_ + " -o " + merged, dir_).status, 0);
    auto cache = db::open_kernel_cache(merged, db::OpenMode::ReadOnly);
    int rows = 0;
    cache->visit_code_rows([&](const db::KernelKey &key, const db::KernelCode &code) {
        rows++;
        EXPECT_EQ(db::signature_status(key, code, trusted_.keys), db::SignatureStatus::Trusted) << key.op_name;
    });
    EXPECT_EQ(rows, 2);
}

}  // namespace
}  // namespace opgen::test
