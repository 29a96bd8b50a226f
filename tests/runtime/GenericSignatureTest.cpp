// Generic code rows without a compiler: the size expressions of a generic signature, binding a
// generic kernel to a shape (symbols given, fixed values checked, defaults filled), the storage of
// generic code (digest checked, generic fields covered by it), the timings of generic code at
// tuned shapes (version 6: stored only for stored code, carried by merge) and the migrations from
// versions 4 and 5.
#include <cmath>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "store/CacheFiles.h"
#include "store/GenericCodeRows.h"
#include "runtime/GenericSignature.h"
#include "store/Sqlite.h"
#include "store/KernelCache.h"
#include "tests/store/DbTestSupport.h"

namespace opgen::db {
namespace {

using test::RawDb;
using test::ScratchDir;

// A conv-like generic code whose output's dims are lets inlined as the opgen side prints them.
KernelCode conv_code() {
    KernelCode code;
    code.halide_target = "x86-64-linux-avx2-no_runtime";
    code.halide_version = "14.0.0";
    code.function = "opgen_conv2d_nchw";
    code.generic = true;
    code.symbols = "N,C,H,W,F";
    code.fixed = "KH=3,KW=3,pad=1,stride=1";
    code.defaults = "KH=3,KW=3,pad=1,stride=1";
    code.signature = "X:in:f32:N,C,H,W;Wt:in:f32:F,C,3,3;"
                     "Y:out:f32:N,F,((((H+2)-2)-1)/1)+1,max((W-1)/1+1,1)";
    code.schedule_json = "{}";
    code.bytes = {1, 2, 3};
    code.size = 3;
    code.digest = code_digest(code);
    return code;
}

TEST(GenericSignature, EvaluatesSizeExpressionsLikeHalide) {
    std::map<std::string, int64_t> v{{"H", 7}, {"W", 5}};
    EXPECT_EQ(eval_size_expression("((((H+2)-2)-1)/1)+1", v), 7);
    EXPECT_EQ(eval_size_expression("(H-10)/4", v), -1);  // rounds down, as Halide's division
    EXPECT_EQ(eval_size_expression("max(H,W)*min(H,W)-(0-3)", v), 38);
    EXPECT_EQ(eval_size_expression("H/(W-5)", v), std::nullopt);   // division by zero
    EXPECT_EQ(eval_size_expression("H+Q", v), std::nullopt);       // unknown name
    EXPECT_EQ(eval_size_expression("(H+1", v), std::nullopt);      // unbalanced
    EXPECT_EQ(eval_size_expression("99999999999*99999999999", v), std::nullopt);  // overflow
}

TEST(GenericSignature, BindsAShapeFillingDefaultsAndCheckingFixedValues) {
    KernelCode code = conv_code();
    std::string why;
    std::optional<GenericBinding> b = bind_generic(code, "N=2,C=3,H=9,W=4,F=5", &why);
    ASSERT_TRUE(b) << why;
    EXPECT_EQ(b->canonical, "C=3,F=5,H=9,KH=3,KW=3,N=2,W=4,pad=1,stride=1");
    ASSERT_EQ(b->arguments.size(), 3u);
    EXPECT_EQ(b->arguments[1].dims, (std::vector<int64_t>{5, 3, 3, 3}));
    EXPECT_EQ(b->arguments[2].dims, (std::vector<int64_t>{2, 5, 9, 4}));
    EXPECT_TRUE(b->arguments[2].is_output);

    EXPECT_FALSE(bind_generic(code, "N=2,C=3,H=9,W=4,F=5,KH=5", &why));
    EXPECT_NE(why.find("compiled for KH=3, not 5"), std::string::npos) << why;
    EXPECT_FALSE(bind_generic(code, "N=2,C=3,H=9,W=4", &why));
    EXPECT_NE(why.find("must give 'F'"), std::string::npos) << why;
    EXPECT_FALSE(bind_generic(code, "N=2,C=3,H=9,W=4,F=5,Z=1", &why));
    EXPECT_NE(why.find("no size 'Z'"), std::string::npos) << why;
    EXPECT_FALSE(bind_generic(code, "N=2,C=3,H=9,W=4,F=0", &why));
    EXPECT_FALSE(bind_generic(code, "N=65536,C=65536,H=9,W=4,F=5", &why));
    EXPECT_NE(why.find("2^31"), std::string::npos) << why;
}

TEST(GenericSignature, RefusesSignaturesNamingUnknownSymbols) {
    EXPECT_TRUE(parse_generic_signature("A:in:f32:M,K;C:out:f32:M,3", {"M", "K"}));
    EXPECT_FALSE(parse_generic_signature("A:in:f32:M,K;C:out:f32:M,N", {"M", "K"}));
    EXPECT_FALSE(parse_generic_signature("A:in:f32:M,K", {"M", "K"}));  // no output
    EXPECT_FALSE(parse_generic_signature("A:in:f64:M;C:out:f32:M", {"M"}));
    EXPECT_FALSE(parse_generic_signature("A:in:f32:M+;C:out:f32:M", {"M"}));
}

TEST(GenericSignature, CacheStoresGenericCodeAndRefusesAMismatchedDigest) {
    ScratchDir dir;
    auto cache = open_kernel_cache(dir.file("g.db"));
    GenericCodeRecord row{test::make_key("C=3,F=5,H=9,KH=3,KW=3,N=1,W=9,pad=1,stride=1"), conv_code(),
                          "C=1,F=1,H=1,KH=3,KW=3,N=1,W=1,pad=1,stride=1"};
    row.key.op_name = "conv2d_nchw";
    cache->put_generic_code(row);
    std::vector<GenericCodeRecord> rows = cache->generic_code_for("conv2d_nchw", row.key.target);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_TRUE(rows[0].code.generic);
    EXPECT_EQ(rows[0].code.fixed, row.code.fixed);
    EXPECT_EQ(rows[0].code.digest, code_digest(rows[0].code));
    EXPECT_EQ(rows[0].checked_shapes, row.checked_shapes);
    EXPECT_EQ(cache->stats().generic_code, 1);

    // The generic fields are under the digest: a changed fixed value no longer matches it.
    GenericCodeRecord tampered = row;
    tampered.code.fixed = "KH=5,KW=3,pad=1,stride=1";
    EXPECT_THROW(cache->put_generic_code(tampered), DbError);
    GenericCodeRecord exact = row;
    exact.code.generic = false;
    exact.code.digest = code_digest(exact.code);
    EXPECT_THROW(cache->put_generic_code(exact), DbError);
}

// The lookup reads an op's generic rows without their code (megabytes for conv) and fetches the
// bytes of the one it checks and loads, by key and stored digest; a digest no row has gives none.
TEST(GenericSignature, RowsReadWithoutTheirBytesFetchOneRowsBytesByDigest) {
    ScratchDir dir;
    GenericCodeRecord row{test::make_key("C=3,F=5,H=9,KH=3,KW=3,N=1,W=9,pad=1,stride=1"), conv_code(), "x"};
    row.key.op_name = "conv2d_nchw";
    open_kernel_cache(dir.file("g.db"))->put_generic_code(row);
    SqliteConnection connection(dir.file("g.db"), SQLITE_OPEN_READONLY, 1000);
    std::vector<GenericCodeRecord> headers =
        read_generic_code(connection, row.key.target, "conv2d_nchw", row.key.dtype, "", "", "", CodeBytes::Leave);
    ASSERT_EQ(headers.size(), 1u);
    EXPECT_TRUE(headers[0].code.bytes.empty());
    EXPECT_EQ(headers[0].code.size, row.code.size);
    EXPECT_EQ(headers[0].code.digest, row.code.digest);
    std::vector<uint8_t> bytes = read_generic_code_bytes(connection, headers[0].key, headers[0].code.digest);
    EXPECT_EQ(bytes, row.code.bytes);
    EXPECT_FALSE(bytes.empty());
    EXPECT_TRUE(read_generic_code_bytes(connection, headers[0].key, std::string(64, '0')).empty());
    std::vector<GenericCodeRecord> full = read_generic_code(connection, row.key.target, "conv2d_nchw", row.key.dtype);
    ASSERT_EQ(full.size(), 1u);
    EXPECT_EQ(full[0].code.bytes, row.code.bytes);
}

TEST(GenericSignature, MergeCarriesGenericCode) {
    ScratchDir dir;
    GenericCodeRecord row{test::make_key("C=3,F=5,H=9,KH=3,KW=3,N=1,W=9,pad=1,stride=1"), conv_code(), "x"};
    row.key.op_name = "conv2d_nchw";
    open_kernel_cache(dir.file("a.db"))->put_generic_code(row);
    open_kernel_cache(dir.file("b.db"))->put_kernel(test::make_kernel(test::make_key(), 1.0));
    merge_kernel_caches({dir.file("a.db"), dir.file("b.db")}, dir.file("merged.db"));
    std::vector<GenericCodeRecord> rows =
        open_kernel_cache(dir.file("merged.db"))->generic_code_for("conv2d_nchw", row.key.target);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].code.digest, row.code.digest);
    EXPECT_EQ(rows[0].code.bytes, row.code.bytes);
    EXPECT_EQ(rows[0].code.symbols, row.code.symbols);

    std::ostringstream out;
    export_kernel_cache(dir.file("merged.db"), false, out);
    nlohmann::json doc = nlohmann::json::parse(out.str());
    ASSERT_EQ(doc["generic_code"].size(), 1u);
    EXPECT_EQ(doc["generic_code"][0]["fixed"], row.code.fixed);
    EXPECT_EQ(doc["generic_code"][0]["code"]["digest"], row.code.digest);
    EXPECT_EQ(doc["generic_code"][0]["code"]["bytes_base64"], "AQID");
}

TEST(GenericSignature, UpgradesVersion4AddingTheGenericTableKeepingKernelCode) {
    ScratchDir dir;
    std::string path = dir.file("v4.db");
    KernelKey key = test::make_key();
    KernelCode exact = conv_code();
    exact.generic = false;
    exact.signature = "A:in:f32:512,512;B:in:f32:512,512;C:out:f32:512,512";
    exact.schedule_json = test::make_kernel(key, 1.0).schedule_json;
    exact.digest = code_digest(exact);
    {
        auto cache = open_kernel_cache(path);
        cache->put_kernel(test::make_kernel(key, 1.0));
        ASSERT_TRUE(cache->put_code(key, exact));
    }
    {
        // The file as the version-4 build left it: the same tables but generic_code.
        RawDb raw(path);
        raw.exec("DROP TABLE generic_code; DROP TABLE generic_timings; ALTER TABLE kernel_code DROP COLUMN "
                 "signed_by; ALTER TABLE kernel_code DROP COLUMN ed25519_signature; PRAGMA user_version = 4;");
    }
    auto cache = open_kernel_cache(path);
    EXPECT_EQ(cache->stats().schema_version, kernel_cache_schema_version());
    EXPECT_EQ(cache->stats().kernels_with_code, 1);
    EXPECT_EQ(cache->code_for(key)->digest, exact.digest);  // digest of exact code unchanged
    EXPECT_EQ(cache->stats().generic_code, 0);
    RawDb raw(path);
    EXPECT_EQ(raw.integer("SELECT count(*) FROM sqlite_master WHERE name = 'generic_code'"), 1);
}

GenericTimingRecord timing_of(const GenericCodeRecord &row, const std::string &at, double ratio) {
    GenericTimingRecord t;
    t.key = row.key;
    t.digest = row.code.digest;
    t.at_shape = at;
    t.time_ms = 2 * ratio;
    t.tuned_ms = 2;
    t.ratio = ratio;
    return t;
}

TEST(GenericSignature, CacheStoresGenericTimingsOnlyOfStoredCode) {
    ScratchDir dir;
    auto cache = open_kernel_cache(dir.file("g.db"));
    GenericCodeRecord row{test::make_key("C=3,F=5,H=9,KH=3,KW=3,N=1,W=9,pad=1,stride=1"), conv_code(), "x"};
    row.key.op_name = "conv2d_nchw";
    cache->put_generic_code(row);
    const std::string at = "C=8,F=8,H=20,KH=3,KW=3,N=1,W=20,dilation=1,pad=1,stride=1";
    cache->put_generic_timings({timing_of(row, at, 1.5), timing_of(row, row.key.shape, 1.25)});
    cache->put_generic_timings({timing_of(row, at, 1.125)});  // replaces the timing at `at`
    std::vector<GenericTimingRecord> rows = cache->generic_timings_for("conv2d_nchw", row.key.target);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].at_shape, row.key.shape);  // at_shape order
    EXPECT_DOUBLE_EQ(rows[0].ratio, 1.25);
    EXPECT_EQ(rows[1].at_shape, at);
    EXPECT_DOUBLE_EQ(rows[1].ratio, 1.125);
    EXPECT_EQ(rows[1].digest, row.code.digest);
    EXPECT_FALSE(rows[1].created_at.empty());
    EXPECT_EQ(cache->stats().generic_timings, 2);

    // A timing of code that is not stored (another digest), or with a ratio that is no ratio,
    // is refused, and nothing of its batch is stored.
    GenericTimingRecord foreign = timing_of(row, "C=9,F=8,H=20,KH=3,KW=3,N=1,W=20,dilation=1,pad=1,stride=1", 1.0);
    foreign.digest = std::string(64, 'a');
    try {
        cache->put_generic_timings({timing_of(row, "C=4,F=4,H=4,KH=3,KW=3,N=1,W=4,dilation=1,pad=1,stride=1", 1.0),
                                    foreign});
        ADD_FAILURE() << "a timing of code not stored was taken";
    } catch (const DbError &e) {
        EXPECT_NE(std::string(e.what()).find("no generic code of digest aaaa"), std::string::npos) << e.what();
    }
    EXPECT_THROW(cache->put_generic_timings({timing_of(row, at, 0.0)}), DbError);
    GenericTimingRecord nan = timing_of(row, at, 1.0);
    nan.tuned_ms = std::nan("");
    EXPECT_THROW(cache->put_generic_timings({nan}), DbError);
    EXPECT_EQ(cache->stats().generic_timings, 2);
}

TEST(GenericSignature, MergeCarriesGenericTimingsOfTheCodeKept) {
    ScratchDir dir;
    GenericCodeRecord row{test::make_key("C=3,F=5,H=9,KH=3,KW=3,N=1,W=9,pad=1,stride=1"), conv_code(), "x"};
    row.key.op_name = "conv2d_nchw";
    {
        auto a = open_kernel_cache(dir.file("a.db"));
        a->put_generic_code(row);
        a->put_generic_timings({timing_of(row, row.key.shape, 1.25)});
    }
    // b.db: code of the same key from another schedule, timed too; merged after a.db it replaces
    // a's code, and a's timing, of other code, is dropped.
    GenericCodeRecord other = row;
    other.code.schedule_json = R"({"other":1})";
    other.code.digest = code_digest(other.code);
    {
        auto b = open_kernel_cache(dir.file("b.db"));
        b->put_generic_code(other);
        b->put_generic_timings({timing_of(other, "C=8,F=8,H=20,KH=3,KW=3,N=1,W=20,dilation=1,pad=1,stride=1", 0.75)});
    }
    merge_kernel_caches({dir.file("a.db")}, dir.file("only-a.db"));
    std::vector<GenericTimingRecord> kept =
        open_kernel_cache(dir.file("only-a.db"))->generic_timings_for("conv2d_nchw", row.key.target);
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_DOUBLE_EQ(kept[0].ratio, 1.25);
    merge_kernel_caches({dir.file("a.db"), dir.file("b.db")}, dir.file("merged.db"));
    std::vector<GenericTimingRecord> merged =
        open_kernel_cache(dir.file("merged.db"))->generic_timings_for("conv2d_nchw", row.key.target);
    ASSERT_EQ(merged.size(), 1u);
    EXPECT_EQ(merged[0].digest, other.code.digest);
    EXPECT_DOUBLE_EQ(merged[0].ratio, 0.75);

    std::ostringstream out;
    export_kernel_cache(dir.file("merged.db"), false, out);
    nlohmann::json doc = nlohmann::json::parse(out.str());
    ASSERT_EQ(doc["generic_timings"].size(), 1u);
    EXPECT_EQ(doc["generic_timings"][0]["digest"], other.code.digest);
    EXPECT_EQ(doc["generic_timings"][0]["ratio"], 0.75);
}

TEST(GenericSignature, UpgradesVersion5AddingTheTimingsTableKeepingGenericCode) {
    ScratchDir dir;
    std::string path = dir.file("v5.db");
    GenericCodeRecord row{test::make_key("C=3,F=5,H=9,KH=3,KW=3,N=1,W=9,pad=1,stride=1"), conv_code(), "x"};
    row.key.op_name = "conv2d_nchw";
    open_kernel_cache(path)->put_generic_code(row);
    {
        // The file as the version-5 build left it: the same tables but generic_timings.
        RawDb raw(path);
        raw.exec("DROP TABLE generic_timings; PRAGMA user_version = 5;");
        for (const char *table : {"kernel_code", "generic_code"}) {
            for (const char *column : {"signed_by", "ed25519_signature"}) {
                raw.exec(std::string("ALTER TABLE ") + table + " DROP COLUMN " + column);
            }
        }
    }
    auto cache = open_kernel_cache(path);
    EXPECT_EQ(cache->stats().schema_version, kernel_cache_schema_version());
    std::vector<GenericCodeRecord> rows = cache->generic_code_for("conv2d_nchw", row.key.target);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].code.digest, row.code.digest);
    EXPECT_EQ(rows[0].code.bytes, row.code.bytes);
    EXPECT_EQ(cache->stats().generic_timings, 0);
    cache->put_generic_timings({timing_of(row, row.key.shape, 1.0)});
    EXPECT_EQ(cache->stats().generic_timings, 1);
}

} // namespace
} // namespace opgen::db
