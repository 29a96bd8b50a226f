// Schedule variants in the kernel-cache file: stored per contention level, read back in order,
// replaced at the same level, absent from files that never had any.
#include "store/VariantStore.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/store/DbTestSupport.h"

namespace opgen::db {
namespace {

VariantRecord variant(double level, double time_ms) {
    VariantRecord r;
    r.key = test::make_key();
    r.level = level;
    r.load = "test load " + std::to_string(level);
    r.schedule_json = "{\"level\":" + std::to_string(level) + "}";
    r.schedule_source = "C.vectorize(n, 16);";
    r.time_ms = time_ms;
    r.quiet_time_ms = 1.5;
    r.trials = 8;
    return r;
}

TEST(VariantStore, StoresByLevelAndReplacesSameLevel) {
    test::ScratchDir dir;
    std::string path = dir.file("v.db");
    put_variant(path, variant(1.0, 3.0));
    put_variant(path, variant(0.0, 2.0));
    put_variant(path, variant(0.5, 2.5));
    put_variant(path, variant(0.5, 2.25));  // replaces the first 0.5
    std::vector<VariantRecord> got = variants_for(path, test::make_key());
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].level, 0.0);
    EXPECT_EQ(got[1].level, 0.5);
    EXPECT_EQ(got[2].level, 1.0);
    EXPECT_EQ(got[1].time_ms, 2.25);
    EXPECT_EQ(got[2].schedule_json, "{\"level\":1.000000}");
    EXPECT_EQ(got[2].quiet_time_ms, 1.5);
    EXPECT_EQ(got[2].trials, 8);
    EXPECT_FALSE(got[0].created_at.empty());
    KernelKey other = test::make_key();
    other.shape = "K=1,M=1,N=1";
    EXPECT_TRUE(variants_for(path, other).empty());
    // The kernel cache itself still opens and answers as before.
    EXPECT_EQ(open_kernel_cache(path)->stats().kernels, 0);
}

TEST(VariantStore, FileWithoutVariantsHasNone) {
    test::ScratchDir dir;
    std::string path = dir.file("plain.db");
    open_kernel_cache(path);
    EXPECT_TRUE(variants_for(path, test::make_key()).empty());
}

TEST(VariantStore, RefusesBadTimeAndForeignFiles) {
    test::ScratchDir dir;
    std::string path = dir.file("v.db");
    EXPECT_THROW(put_variant(path, variant(0, 0)), DbError);
    EXPECT_THROW(put_variant(path, variant(0, NAN)), DbError);
    std::string junk = dir.file("junk.db");
    test::write_bytes(junk, "this is not a database, not even close to one........");
    EXPECT_THROW(put_variant(junk, variant(0, 1)), DbError);
    EXPECT_THROW(variants_for(dir.file("missing.db"), test::make_key()), DbError);
}

}  // namespace
}  // namespace opgen::db
