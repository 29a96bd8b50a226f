// The contention load generator and the tuning of contention variants: the load streams memory
// and stops, levels parse and map to thread counts, and a small matmul gets a quiet variant (the
// cache's winner) plus one variant per level, stored in the cache file.
#include "tuner/Contention.h"
#include "tuner/Variants.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>
#include <thread>

#include "opgen/Error.h"
#include "opgen/OpLibrary.h"

namespace opgen::tuner {
namespace {

TEST(Contention, StreamsWhileRunningAndStops) {
    ContentionSpec spec;
    spec.threads = 1;
    spec.intensity = 1.0;
    spec.bytes_per_thread = 8u << 20;
    Contention load(spec);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    uint64_t streamed = load.bytes_streamed();
    EXPECT_GT(streamed, 0u);
    load.stop();
    uint64_t after_stop = load.bytes_streamed();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(load.bytes_streamed(), after_stop);
    EXPECT_GT(load.seconds(), 0.04);
}

TEST(Contention, LevelsMapToThreadsAndIntensity) {
    ContentionSpec half = contention_for_level(0.5);
    EXPECT_EQ(half.threads, 1);
    EXPECT_DOUBLE_EQ(half.intensity, 0.5);
    ContentionSpec one_half = contention_for_level(1.5);
    EXPECT_EQ(one_half.threads, 2);
    EXPECT_DOUBLE_EQ(one_half.intensity, 0.75);
    EXPECT_EQ(contention_for_level(1.0).threads, 1);
    EXPECT_EQ(contention_for_level(1.0).describe(), "1 thread x 100% streaming 64 MiB");
    EXPECT_THROW(contention_for_level(0), std::invalid_argument);
    EXPECT_THROW(contention_for_level(65), std::invalid_argument);
    ContentionSpec bad;
    bad.intensity = 1.5;
    EXPECT_THROW(Contention{bad}, std::invalid_argument);
}

TEST(Variants, ParsesLevels) {
    EXPECT_EQ(parse_contention_levels("1,0.5,1", "--variants"), (std::vector<double>{0.5, 1.0}));
    try {
        parse_contention_levels("0.5,fast", "--variants");
        FAIL() << "no error";
    } catch (const UserError &e) {
        EXPECT_STREQ(e.what(), "--variants: 'fast' is not a number");
    }
    EXPECT_THROW(parse_contention_levels("0", "--variants"), UserError);
    EXPECT_THROW(parse_contention_levels("", "--variants"), UserError);
    EXPECT_THROW(parse_contention_levels("2x", "--variants"), UserError);
}

TEST(Variants, TunesQuietWinnerAndOneVariantPerLevel) {
    std::string dir = std::filesystem::temp_directory_path() / ("opgen-variants-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::string path = dir + "/v.db";
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=64,N=64,K=64");
    Target host = host_target();
    TuneOptions o;
    o.trials = 6;
    o.batch = 6;
    o.jobs = 2;
    o.min_time_ms = 2;
    o.final_rounds = 1;
    VariantOptions vo;
    vo.levels = {0.5, 1.0};
    vo.finalists = 3;
    vo.rounds = 1;
    vo.min_time_ms = 2;
    vo.load_bytes = 8u << 20;
    auto cache = db::open_kernel_cache(path);
    VariantRun run = tune_variants(def, shape, host, o, vo, *cache, path);
    ASSERT_EQ(run.variants.size(), 3u);
    EXPECT_EQ(run.medians.size(), 3u);
    EXPECT_EQ(run.variants[0].schedule_json, run.quiet.schedule_json);  // variant 0: the cache's winner
    std::vector<db::VariantRecord> stored = db::variants_for(path, run.quiet.key);
    ASSERT_EQ(stored.size(), 3u);
    for (size_t l = 0; l < stored.size(); l++) {
        EXPECT_EQ(stored[l].level, (std::vector<double>{0, 0.5, 1.0})[l]);
        EXPECT_GT(stored[l].time_ms, 0);
        EXPECT_GT(stored[l].quiet_time_ms, 0);
        EXPECT_FALSE(stored[l].schedule_source.empty());
        // Each level's variant is the quiet winner or a finalist measured faster there.
        if (l > 0 && stored[l].schedule_json != run.quiet.schedule_json) {
            EXPECT_LT(stored[l].time_ms, run.medians[l][0] * 1.02);
        }
    }
    EXPECT_EQ(stored[2].load, "1 thread x 100% streaming 8 MiB");
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace opgen::tuner
