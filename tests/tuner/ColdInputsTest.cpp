// Cold inputs (tuner/ColdInputs.h): a flushed tensor is read from memory, not from the caches; the
// hook refuses a name the op does not have; a cold tuning run times its candidates through the
// measurement workers with the weights flushed, starts from the hot winner, and stores its winner
// under its own key, never under the hot one.
#include "base/Error.h"
#include "core/OpLibrary.h"
#include "tuner/ColdInputs.h"
#include "tuner/Tuner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <limits>
#include <unistd.h>

using namespace opgen;
using namespace opgen::tuner;

namespace {

// The fastest of `reps` sums of `t` (ms), each after `before` (which may be empty).
double fastest_read_ms(const HostTensor &t, const std::function<void()> &before, int reps) {
    double best = std::numeric_limits<double>::infinity();
    volatile float sink = 0;
    for (int r = 0; r < reps; r++) {
        if (before) before();
        auto t0 = std::chrono::steady_clock::now();
        float s = 0;
        for (size_t i = 0; i < t.data.size(); i += 16) s += t.data[i];  // one load per cache line
        sink = sink + s;
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

std::string temp_cache(const std::string &name) {
    std::string dir = std::filesystem::temp_directory_path() / ("opgen-cold-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::string path = dir + "/" + name;
    std::filesystem::remove(path);
    return path;
}

}  // namespace

TEST(ColdInputs, FlushedTensorIsReadFromMemory) {
    // 512 KiB: in L2 on every machine opgen targets once it has been read.
    std::map<std::string, HostTensor> inputs;
    inputs["W"].dims = {128 * 1024};
    inputs["W"].data.assign(128 * 1024, 1.0f);
    inputs["X"].dims = {16};
    inputs["X"].data.assign(16, 2.0f);
    std::function<void()> flush = cold_inputs_hook(inputs, {"W"});
    ASSERT_TRUE(bool(flush));
    double hot = fastest_read_ms(inputs["W"], {}, 30);
    double cold = fastest_read_ms(inputs["W"], flush, 30);
    EXPECT_GT(cold, hot * 1.5) << "hot " << hot << " ms, cold " << cold << " ms";
    // Flushing writes back; it changes no value.
    EXPECT_TRUE(std::all_of(inputs["W"].data.begin(), inputs["W"].data.end(), [](float v) { return v == 1.0f; }));
}

TEST(ColdInputs, HookRefusesAnInputTheOpDoesNotHave) {
    std::map<std::string, HostTensor> inputs;
    inputs["A"].dims = {4};
    inputs["A"].data.assign(4, 0.0f);
    EXPECT_FALSE(bool(cold_inputs_hook(inputs, {})));
    try {
        cold_inputs_hook(inputs, {"A", "B"});
        FAIL() << "expected a UserError";
    } catch (const UserError &e) {
        EXPECT_NE(std::string(e.what()).find("cold input 'B' is not an input of the op (inputs: A)"), std::string::npos)
            << e.what();
    }
}

TEST(ColdInputs, ColdKeyIsItsOwn) {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=16,N=32,K=8");
    Target host = host_target();
    db::KernelKey hot = kernel_key(def, shape, host, 1);
    db::KernelKey cold = cold_key(hot);
    EXPECT_EQ(cold.target, hot.target + ":cold");
    EXPECT_EQ(cold.shape, hot.shape);
    EXPECT_EQ(cold.op_hash, hot.op_hash);
    TuneOptions o;
    EXPECT_EQ(tuned_key(def, shape, host, o).target, hot.target);
    o.cold_inputs = {"B"};
    EXPECT_EQ(tuned_key(def, shape, host, o).target, cold.target);
    EXPECT_EQ(contention_level_of(cold.target), 0);
}

TEST(ColdInputs, ColdTuningStartsFromTheHotWinnerAndKeepsItsOwnKey) {
    std::string path = temp_cache("c.db");
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=32,N=64,K=32");
    Target host = host_target();
    TuneOptions o;
    o.trials = o.batch = 4;  // one round: the reference, the hot winner and two more
    o.jobs = 1;
    o.min_time_ms = 1;
    o.final_rounds = o.confirm_rounds = 1;
    auto cache = db::open_kernel_cache(path);
    bool cached = false;
    db::KernelRecord hot = tune_into_cache(def, shape, host, o, *cache, false, &cached);
    EXPECT_FALSE(cached);

    o.cold_inputs = {"B"};
    TuneResult run;
    db::KernelRecord cold = tune_into_cache(def, shape, host, o, *cache, false, &cached, &run);
    EXPECT_FALSE(cached);  // the hot winner is not taken for a cold one
    EXPECT_EQ(cold.key.target, hot.key.target + ":cold");
    EXPECT_GT(cold.time_ms, 0);
    // The hot winner was measured cold in the first round, beside the reference.
    bool seeded = false;
    for (const Trial &t : run.trials) seeded |= t.point.to_json().dump() == hot.schedule_json && t.result.ok();
    EXPECT_TRUE(seeded);
    // Both keys are in the cache, each with its own winner's row.
    ASSERT_TRUE(cache->lookup(hot.key).has_value());
    ASSERT_TRUE(cache->lookup(cold.key).has_value());
    EXPECT_EQ(cache->lookup(hot.key)->time_ms, hot.time_ms);
    EXPECT_FALSE(cache->measurements_for(cold.key).empty());

    // A name the op does not have is refused by the workers before anything is measured.
    o.cold_inputs = {"weights"};
    EXPECT_THROW(tune_into_cache(def, shape, host, o, *cache, true, &cached), UserError);
}
