// Compiled code in the cache (store/KernelCode.h), without a compiler: the digest (SHA-256 against
// FIPS 180-4's vectors), the signature text, storing code beside its kernel and never beside a
// faster winner's other schedule, merge and export carrying it, and the migration from a
// version-3 file. The blobs here are plain bytes: storing never runs them. Loading and running
// real code is tests/code/.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

#include "store/CacheFiles.h"
#include "store/KernelCache.h"
#include "store/KernelCode.h"
#include "store/Sha256.h"
#include "tests/store/DbTestSupport.h"

namespace opgen::db {
namespace {

using test::make_kernel;
using test::make_key;
using test::RawDb;
using test::ScratchDir;

KernelCode make_code(const std::string &schedule_json, const std::string &bytes = "\x7f" "ELF...") {
    KernelCode code;
    code.halide_target = "x86-64-linux-avx-avx2-fma-no_runtime";
    code.cpu_features = "avx,avx2,fma";
    code.halide_version = "14.0.0";
    code.function = "opgen_matmul";
    code.signature = "A:in:f32:512,512;B:in:f32:512,512;C:out:f32:512,512";
    code.schedule_json = schedule_json;
    code.bytes.assign(bytes.begin(), bytes.end());
    code.size = int64_t(code.bytes.size());
    code.digest = code_digest(code);
    return code;
}

TEST(Sha256, MatchesTheStandardsVectors) {
    EXPECT_EQ(sha256_hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256_hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    // No bytes at a null pointer (an empty vector's data()): the same digest, and no memcpy from
    // null (the loader fuzzer's UBSan finding on an empty code blob).
    EXPECT_EQ(sha256_hex(nullptr, 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    EXPECT_EQ(sha256_hex(two_blocks.data(), two_blocks.size()),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    // A million 'a', added in uneven pieces: the block boundary falls inside add().
    Sha256 hash;
    std::string piece(997, 'a');
    for (int added = 0; added < 1000000; added += 997) {
        hash.add(piece.data(), std::min<size_t>(997, size_t(1000000 - added)));
    }
    EXPECT_EQ(hash.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// The SHA extensions' code (where this CPU has them) and the portable code give the same digest
// at every length around the block and padding boundaries, added whole and in uneven pieces.
TEST(Sha256, ExtensionsAndPortableCodeAgree) {
    std::string data;
    for (int i = 0; i < 300000; i++) data += char((i * 2654435761u) >> 13);
    for (size_t size : {size_t(0), size_t(1), size_t(55), size_t(56), size_t(63), size_t(64), size_t(65),
                        size_t(119), size_t(128), size_t(4097), data.size()}) {
        Sha256 fastest, portable(Sha256::Code::Portable), pieces;
        fastest.add(data.data(), size);
        portable.add(data.data(), size);
        for (size_t at = 0; at < size; at += 77) pieces.add(data.data() + at, std::min<size_t>(77, size - at));
        std::string want = portable.hex();
        EXPECT_EQ(fastest.hex(), want) << size;
        EXPECT_EQ(pieces.hex(), want) << size;
    }
}

TEST(KernelCode, DigestCoversEveryFieldButItself) {
    KernelCode code = make_code("{}");
    std::string digest = code.digest;
    for (auto edit : std::vector<void (*)(KernelCode &)>{
             [](KernelCode &c) { c.bytes.back() ^= 1; },
             [](KernelCode &c) { c.cpu_features = "avx"; },
             [](KernelCode &c) { c.halide_target = "arm-64-linux"; },
             [](KernelCode &c) { c.abi_version = 2; },
             [](KernelCode &c) { c.size += 1; },
             [](KernelCode &c) { c.signature = "A:in:f32:1;C:out:f32:1"; },
             [](KernelCode &c) { c.schedule_json = "{ }"; }}) {
        KernelCode changed = code;
        edit(changed);
        EXPECT_NE(code_digest(changed), digest);
    }
    KernelCode same = code;
    same.created_at = "2030-01-01T00:00:00Z";
    EXPECT_EQ(code_digest(same), digest);
}

TEST(KernelCode, ParsesSignaturesAndRefusesOthers) {
    auto parsed = parse_signature("A:in:f32:3,4;s:in:i32:;C:out:f32:4");
    ASSERT_TRUE(parsed.has_value());
    ASSERT_EQ(parsed->size(), 3u);
    EXPECT_EQ((*parsed)[0].dims, (std::vector<int64_t>{3, 4}));
    EXPECT_EQ((*parsed)[0].elements(), 12);
    EXPECT_TRUE((*parsed)[1].dims.empty());
    EXPECT_TRUE((*parsed)[2].is_output);
    EXPECT_EQ(signature_text(*parsed), "A:in:f32:3,4;s:in:i32:;C:out:f32:4");
    for (const char *bad : {"", "A:in:f32:3", "C:out:f32:3;A:in:f32:3", "C:out:f64:3",
                            "C:out:f32:0", "C:out:f32:-1", "C:out:f32:3,,4", "C:out:f32:2147483648",
                            "C:out:f32:65536,65536", ":out:f32:1", "C:inout:f32:1", "C:out:f32",
                            "A:out:f32:1;C:out:f32:1", "C:out:f32:1;"}) {
        EXPECT_FALSE(parse_signature(bad).has_value()) << bad;
    }
}

TEST(KernelCode, StoredBesideItsKernelOnlyWhileItIsTheWinner) {
    ScratchDir dir;
    auto cache = open_kernel_cache(dir.file("cache.db"));
    KernelKey key = make_key();
    EXPECT_FALSE(cache->put_code(key, make_code("{\"s\":1}"))) << "no kernel yet";
    cache->put_kernel(make_kernel(key, 2.0, "{\"s\":1}"));
    EXPECT_EQ(cache->kernels_without_code().size(), 1u);
    EXPECT_FALSE(cache->put_code(key, make_code("{\"s\":2}"))) << "another schedule";
    ASSERT_TRUE(cache->put_code(key, make_code("{\"s\":1}", "first")));
    std::optional<KernelCode> code = cache->code_for(key);
    ASSERT_TRUE(code.has_value());
    EXPECT_EQ(std::string(code->bytes.begin(), code->bytes.end()), "first");
    EXPECT_EQ(code->digest, code_digest(*code));
    EXPECT_FALSE(code->created_at.empty());
    EXPECT_TRUE(cache->kernels_without_code().empty());
    EXPECT_EQ(cache->stats().kernels_with_code, 1);

    // A faster winner with another schedule: the old code is stale, never served.
    cache->put_kernel(make_kernel(key, 1.0, "{\"s\":3}"));
    EXPECT_FALSE(cache->code_for(key).has_value());
    ASSERT_EQ(cache->kernels_without_code().size(), 1u);
    EXPECT_EQ(cache->stats().kernels_with_code, 0);
    EXPECT_TRUE(cache->put_code(key, make_code("{\"s\":3}", "second")));
    EXPECT_EQ(cache->code_for(key)->bytes.size(), 6u);
}

TEST(KernelCode, RefusesToStoreCodeThatDoesNotMatchItsDigestOrSize) {
    ScratchDir dir;
    auto cache = open_kernel_cache(dir.file("cache.db"));
    KernelKey key = make_key();
    cache->put_kernel(make_kernel(key, 2.0, "{}"));
    KernelCode tampered = make_code("{}");
    tampered.bytes[1] ^= 0x20;
    EXPECT_NE(test::db_error_of([&] { cache->put_code(key, tampered); })
                  .find("does not match its own size or digest"),
              std::string::npos);
    KernelCode short_code = make_code("{}");
    short_code.bytes.pop_back();
    EXPECT_NE(test::db_error_of([&] { cache->put_code(key, short_code); }).find("size or digest"),
              std::string::npos);
    EXPECT_FALSE(cache->code_for(key).has_value());
}

TEST(KernelCode, MergeCarriesTheWinnersCodeAndDropsStaleCode) {
    ScratchDir dir;
    std::string a = dir.file("a.db"), b = dir.file("b.db"), out = dir.file("out.db");
    KernelKey shared = make_key("K=512,M=512,N=512"), only_a = make_key("K=64,M=64,N=64");
    {
        auto cache = open_kernel_cache(a);
        cache->put_kernel(make_kernel(shared, 2.0, "{\"from\":\"a\"}"));
        cache->put_code(shared, make_code("{\"from\":\"a\"}", "code-a"));
        cache->put_kernel(make_kernel(only_a, 0.1, "{}"));
        cache->put_code(only_a, make_code("{}", "code-only-a"));
    }
    {
        auto cache = open_kernel_cache(b);
        cache->put_kernel(make_kernel(shared, 1.5, "{\"from\":\"b\"}"));
        cache->put_code(shared, make_code("{\"from\":\"b\"}", "code-b"));
    }
    MergeReport report = merge_kernel_caches({a, b}, out);
    EXPECT_EQ(report.code, 2);
    auto merged = open_kernel_cache(out, OpenMode::ReadOnly);
    auto bytes = [&](const KernelKey &key) {
        std::optional<KernelCode> code = merged->code_for(key);
        return code ? std::string(code->bytes.begin(), code->bytes.end()) : std::string("none");
    };
    EXPECT_EQ(bytes(shared), "code-b");
    EXPECT_EQ(bytes(only_a), "code-only-a");
    EXPECT_EQ(RawDb(out).integer("SELECT count(*) FROM kernel_code"), 2);

    // The faster input without code: the slower one's code is stale and left out.
    std::string c = dir.file("c.db"), out2 = dir.file("out2.db");
    open_kernel_cache(c)->put_kernel(make_kernel(shared, 0.5, "{\"from\":\"c\"}"));
    MergeReport second = merge_kernel_caches({a, c}, out2);
    EXPECT_EQ(second.code, 1);
    EXPECT_FALSE(open_kernel_cache(out2, OpenMode::ReadOnly)->code_for(shared).has_value());
}

TEST(KernelCode, ExportCarriesTheCodeInBase64) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    KernelKey with = make_key("K=512,M=512,N=512"), without = make_key("K=64,M=64,N=64");
    {
        auto cache = open_kernel_cache(path);
        cache->put_kernel(make_kernel(with, 1.0, "{}"));
        cache->put_code(with, make_code("{}", "hello"));
        cache->put_kernel(make_kernel(without, 1.0, "{}"));
    }
    std::ostringstream out;
    export_kernel_cache(path, false, out);
    nlohmann::json doc = nlohmann::json::parse(out.str());
    ASSERT_EQ(doc["kernels"].size(), 2u);
    // Sorted by shape: K=512 before K=64.
    const nlohmann::json &code = doc["kernels"][0]["code"];
    EXPECT_EQ(code["bytes_base64"], "aGVsbG8=");
    EXPECT_EQ(code["size"], 5);
    EXPECT_EQ(code["digest"], make_code("{}", "hello").digest);
    EXPECT_EQ(code["cpu_features"], "avx,avx2,fma");
    EXPECT_EQ(code["abi_version"], kKernelCodeAbi);
    EXPECT_TRUE(doc["kernels"][1]["code"].is_null());
}

TEST(SchemaMigration, UpgradesVersion3AddingTheCodeTable) {
    ScratchDir dir;
    std::string path = dir.file("v3.db");
    KernelKey key = make_key();
    {
        auto cache = open_kernel_cache(path);
        cache->put_kernel(make_kernel(key, 0.5, "{\"v\":3}"));
    }
    {
        // Version 4 only added kernel_code (and 5 generic_code): without them, and marked 3, the
        // file is what version 3 wrote.
        RawDb raw(path);
        raw.exec("DROP TABLE kernel_code; DROP TABLE generic_code; DROP TABLE generic_timings; PRAGMA user_version = 3;");
    }
    EXPECT_NE(test::db_error_of([&] { open_kernel_cache(path, OpenMode::ReadOnly); })
                  .find("has schema version 3, older than version " +
                        std::to_string(kernel_cache_schema_version())),
              std::string::npos);
    auto cache = open_kernel_cache(path);
    EXPECT_EQ(cache->stats().schema_version, kernel_cache_schema_version());
    EXPECT_EQ(cache->lookup(key)->schedule_json, "{\"v\":3}");
    ASSERT_EQ(cache->kernels_without_code().size(), 1u);
    EXPECT_TRUE(cache->put_code(key, make_code("{\"v\":3}")));
    EXPECT_EQ(cache->stats().kernels_with_code, 1);
}

} // namespace
} // namespace opgen::db
