// The contention load generator and the tuning of contention variants: the load streams memory
// and stops, levels parse and map to thread counts, a level's variant is picked by its time paired
// round by round with the quiet winner's, and a small matmul gets a quiet variant (the cache's
// winner) plus one variant per level, stored in the cache file, after a search under each level
// whose measurements are recorded with their level.
#include "tuner/Contention.h"
#include "tuner/Variants.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>
#include <thread>

#include "base/Error.h"
#include "core/OpLibrary.h"
#include "tuner/Features.h"

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

TEST(Variants, PicksByTheMedianRatioToTheQuietWinnerInTheSameRound) {
    // Candidate 1 has the lower median time, but only because its rounds fell in fast windows:
    // paired with the winner it is no faster. Candidate 2 is 10% faster in every round.
    std::vector<std::vector<double>> samples = {
        {10, 20, 10, 20, 20},  // the quiet winner
        {9, 21, 9, 21, 19},
        {9, 18, 9, 18, 18},
    };
    EXPECT_EQ(pick_variant(samples, 0.05), 2u);
    // Not 15% faster: the quiet winner stays.
    EXPECT_EQ(pick_variant(samples, 0.15), 0u);
    // A candidate with no paired round is never picked; nor is anything when only the winner ran.
    EXPECT_EQ(pick_variant({{10, 10}, {}, {9.8, 9.8}}, 0.05), 0u);
    EXPECT_EQ(pick_variant({{10, 10}, {0, 5}}, 0.05), 1u);
    EXPECT_EQ(pick_variant({{10}}, 0.05), 0u);
    EXPECT_EQ(pick_variant({}, 0.05), 0u);
    // 10% faster paired in three rounds, but its median time is 10% slower than the winner's: the
    // rounds disagree, and the winner stays.
    EXPECT_EQ(pick_variant({{10, 20, 20, 10, 10}, {9, 18, 18, 11, 11}}, 0.05), 0u);
    EXPECT_EQ(pick_variant({{10, 20, 20, 10, 10}, {9, 18, 18, 9, 9}}, 0.05), 1u);
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
    vo.search = 3;
    vo.search_batch = 2;
    vo.keep = 1;
    auto cache = db::open_kernel_cache(path);
    VariantRun run = tune_variants(def, shape, host, o, vo, *cache, path);
    ASSERT_EQ(run.variants.size(), 3u);
    EXPECT_EQ(run.medians.size(), 3u);
    EXPECT_EQ(run.variants[0].schedule_json, run.quiet.schedule_json);  // variant 0: the cache's winner
    // The quiet winner went into the cache with its compiled code (codegen/CodeStore.h).
    std::optional<db::KernelCode> code = cache->code_for(run.quiet.key);
    ASSERT_TRUE(code.has_value());
    EXPECT_EQ(code->schedule_json, run.quiet.schedule_json);
    EXPECT_EQ(code->digest, db::code_digest(*code));
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

    // Each level searched for itself, and what it measured is recorded under the level's key with
    // the level in the last feature column, the quiet winner as the reference of every pair.
    ASSERT_EQ(run.searched.size(), 2u);
    for (size_t l = 0; l < 2; l++) {
        const double level = vo.levels[l];
        EXPECT_GT(run.searched[l].size(), 0u);
        EXPECT_LE(run.searched[l].size(), 3u);
        std::vector<db::MeasurementRecord> loaded = cache->measurements_for(loaded_key(run.quiet.key, level));
        size_t ok = 0, winner_rows = 0;
        for (const auto &s : run.searched[l]) ok += s.status == "ok";
        for (const auto &m : loaded) {
            ASSERT_GT(m.feature_rows, 0);
            ASSERT_EQ(m.features.size(), size_t(m.feature_rows) * size_t(num_features()));
            EXPECT_EQ(m.features.back(), float(level));
            winner_rows += m.schedule_json == run.quiet.schedule_json;
        }
        EXPECT_EQ(winner_rows, ok);
        EXPECT_EQ(loaded.size(), run.searched[l].size() + ok);
        for (const auto &s : run.searched[l]) {
            if (s.status != "ok") continue;
            EXPECT_GT(s.time_ms, 0);
            EXPECT_GT(s.ratio, 0);
            EXPECT_GT(s.dram_mb, 0);
        }
    }
    // Measurements under load never pass for quiet ones of the key: it holds the quiet run's only.
    EXPECT_EQ(cache->measurements_for(run.quiet.key).size(), size_t(run.tune.measured));
    EXPECT_GE(run.finalists.size(), size_t(run.quiet_finalists));
    EXPECT_LE(run.finalists.size(), size_t(run.quiet_finalists) + 2);
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace opgen::tuner
