// The lookup library (runtime/Lookup.h, runtime/opgen_cache.h): exact answers, derived answers from the
// nearest tuned shape with the schedule re-fitted, predicted answers through the extension, the
// target filter, and the C API. The extension here is a small fake that knows matmul's loop
// extents; the tuner's real one is tested in tests/runtime/PredictTest.cpp.
#include <cmath>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/Lookup.h"
#include "runtime/opgen_cache.h"
#include "tests/store/DbTestSupport.h"

namespace opgen::db {
namespace {

using test::ScratchDir;

const char *const kTarget = "host-x86-64-avx512:t1";

// A matmul schedule point as the tuner writes it (axes innermost first).
std::string matmul_point(int64_t n_tile, int64_t n_reg, int64_t m_tile, int64_t m_reg,
                         int64_t k_block) {
    nlohmann::json j;
    j["axes"] = {{{"var", "n"}, {"tile", n_tile}, {"reg", n_reg}},
                 {{"var", "m"}, {"tile", m_tile}, {"reg", m_reg}}};
    j["reduce"] = {{{"var", "k"}, {"block", k_block}}};
    j["outer_order"] = {"n", "m"};
    j["parallel_loops"] = 0;
    j["packed"] = {"B"};
    j["vector_width"] = 16;
    j["unroll"] = true;
    return j.dump();
}

// Knows matmul only: loop extents m=M, n=N, k=K. Counts its predictions.
class FakeExtension : public LookupExtension {
public:
    std::optional<ShapeInfo> resolve(const std::string &op_name, const std::string &shape) override {
        if (op_name != "matmul") {
            return std::nullopt;
        }
        std::optional<std::string> sorted = sorted_shape(shape);
        if (!sorted) {
            return std::nullopt;
        }
        ShapeInfo info;
        info.canonical = *sorted;
        nlohmann::json values = nlohmann::json::object();
        size_t start = 0;
        while (start < sorted->size()) {
            size_t end = std::min(sorted->find(',', start), sorted->size());
            std::string part = sorted->substr(start, end - start);
            size_t eq = part.find('=');
            std::string name = part.substr(0, eq);
            name[0] = static_cast<char>(std::tolower(name[0]));
            info.extents[name] = std::stoll(part.substr(eq + 1));
            start = end + 1;
        }
        return info;
    }
    std::optional<LookupAnswer> predict(const LookupRequest &request, const ShapeInfo &) override {
        predictions++;
        LookupAnswer answer;
        answer.kernel.key.op_name = request.op_name;
        answer.kernel.key.target = request.target;
        answer.kernel.schedule_json = matmul_point(16, 16, 1, 1, 16);
        answer.kernel.time_ms = std::nan("");
        return answer;
    }
    int predictions = 0;
};

KernelRecord matmul_kernel(const std::string &shape, double time_ms, const std::string &point,
                           const std::string &target = kTarget) {
    return test::make_kernel(test::make_key(shape, target), time_ms, point);
}

LookupRequest request(const std::string &shape, const std::string &target = kTarget) {
    LookupRequest r;
    r.op_name = "matmul";
    r.shape = shape;
    r.target = target;
    return r;
}

TEST(Lookup, ExactHitWithNamesInAnyOrder) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    open_kernel_cache(path)->put_kernel(
        matmul_kernel("K=512,M=512,N=512", 0.5, matmul_point(256, 32, 64, 8, 512)));
    auto lookup = open_kernel_lookup(path);
    LookupAnswer answer = lookup->find(request("M=512, N=512, K=512"));
    EXPECT_EQ(answer.kind, AnswerKind::Exact);
    EXPECT_EQ(answer.kernel.key.shape, "K=512,M=512,N=512");
    EXPECT_DOUBLE_EQ(answer.kernel.time_ms, 0.5);
    EXPECT_EQ(answer.kernel.schedule_json, matmul_point(256, 32, 64, 8, 512));
    EXPECT_TRUE(answer.reason.empty());
}

TEST(Lookup, NeverCrossesTargets) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    open_kernel_cache(path)->put_kernel(matmul_kernel(
        "K=512,M=512,N=512", 0.5, matmul_point(256, 32, 64, 8, 512), "host-x86-64-avx2:t1"));
    auto lookup = open_kernel_lookup(path);
    auto extension = std::make_shared<FakeExtension>();
    lookup->set_extension(extension);
    // The same shape tuned on another target is neither an exact hit nor a neighbour.
    LookupAnswer answer = lookup->find(request("M=512,N=512,K=512"));
    EXPECT_EQ(answer.kind, AnswerKind::Predicted);
    EXPECT_EQ(extension->predictions, 1);
    EXPECT_EQ(answer.kernel.key.target, kTarget);
    EXPECT_EQ(answer.kernel.key.shape, "K=512,M=512,N=512");
}

TEST(Lookup, MissWithoutExtensionSaysWhy) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    open_kernel_cache(path)->put_kernel(
        matmul_kernel("K=512,M=512,N=512", 0.5, matmul_point(256, 32, 64, 8, 512)));
    auto lookup = open_kernel_lookup(path);
    LookupAnswer answer = lookup->find(request("M=500,N=512,K=512"));
    EXPECT_EQ(answer.kind, AnswerKind::None);
    EXPECT_EQ(answer.reason, "no exact kernel, and no lookup extension is attached for derived "
                             "or predicted answers; no generic code of op 'matmul' on target '" +
                                 std::string(kTarget) + "'; run 'opgen db compile --generic' on the cache");
    EXPECT_EQ(lookup->find(request("M=5x")).reason, "shape 'M=5x' is not NAME=INT pairs");
}

TEST(Lookup, DerivesFromNearestShapeAndRefits) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    {
        auto cache = open_kernel_cache(path);
        cache->put_kernel(
            matmul_kernel("K=512,M=512,N=512", 0.5, matmul_point(256, 32, 64, 8, 256)));
        cache->put_kernel(
            matmul_kernel("K=2048,M=2048,N=2048", 30.0, matmul_point(512, 64, 128, 12, 512)));
    }
    auto lookup = open_kernel_lookup(path);
    auto extension = std::make_shared<FakeExtension>();
    lookup->set_extension(extension);
    LookupAnswer answer = lookup->find(request("M=40,N=24,K=384"));
    ASSERT_EQ(answer.kind, AnswerKind::Derived) << answer.reason;
    EXPECT_EQ(answer.from_shape, "K=512,M=512,N=512");
    EXPECT_EQ(answer.kernel.key.shape, "K=384,M=40,N=24");
    EXPECT_TRUE(answer.kernel.schedule_source.empty());
    // The model's pick is a candidate too; an extension that does not rank leaves the nearest
    // refit the answer.
    EXPECT_EQ(extension->predictions, 1);
    EXPECT_TRUE(answer.ranked.empty());
    EXPECT_TRUE(answer.needs_compile);
    nlohmann::json point = nlohmann::json::parse(answer.kernel.schedule_json);
    // n: one whole vector fits in 24; the tile keeps its ratio (8 registers), is clipped to the
    // whole axis, 24, and then, since the reduction is blocked and needs whole register tiles per
    // cache tile, drops to 16.
    EXPECT_EQ(point["axes"][0]["reg"], 16);
    EXPECT_EQ(point["axes"][0]["tile"], 16);
    // m: register tile 8 fits; tile 8 * 8 = 64 clipped to the whole axis, 40, a multiple of 8.
    EXPECT_EQ(point["axes"][1]["reg"], 8);
    EXPECT_EQ(point["axes"][1]["tile"], 40);
    // k: the largest multiple of 16 dividing 384 that is at most 256: 192.
    EXPECT_EQ(point["reduce"][0]["block"], 192);
    EXPECT_EQ(point["packed"], nlohmann::json::array({"B"}));
}

// The nearest tuned shape by the sum of |ln((a+1)/(b+1))| over names, among shapes of the same
// names only, whether the stored text is canonical or not (written by another tool, say).
TEST(Lookup, NearestShapeIsTheLogNearestOfTheSameNames) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    {
        auto cache = open_kernel_cache(path);
        cache->put_kernel(matmul_kernel("K=64,M=64,N=64", 1.0, matmul_point(64, 16, 8, 4, 64)));
        cache->put_kernel(matmul_kernel("K=1024,M=1024,N=1024", 1.0, matmul_point(256, 32, 64, 8, 256)));
        // Other names: never a neighbour, however close.
        cache->put_kernel(matmul_kernel("K=300,M=300,N=300,X=1", 1.0, matmul_point(64, 16, 8, 4, 64)));
    }
    test::RawDb(path).exec("INSERT INTO kernels SELECT op_name, op_hash, 'N=256, K=256,M=256', dtype, target, "
                     "halide_version, tuner_version, schedule_json, schedule_source, 2.0, gflops, "
                     "default_time_ms, verified, trials, created_at FROM kernels WHERE shape = 'K=64,M=64,N=64'");
    test::RawDb(path).exec("INSERT INTO kernels SELECT op_name, op_hash, 'K=512,M=128,N=256', dtype, target, "
                     "halide_version, tuner_version, schedule_json, schedule_source, 0.5, gflops, "
                     "default_time_ms, verified, trials, created_at FROM kernels WHERE shape = 'K=64,M=64,N=64'");
    auto lookup = open_kernel_lookup(path);
    lookup->set_extension(std::make_shared<FakeExtension>());
    // 300^3: 3 ln(301/257) = 0.47 to the stored "N=256, K=256,M=256", 1.54 to 512 x 128 x 256,
    // 3.68 to 1024^3; 900^3: 0.39 to 1024^3.
    EXPECT_EQ(lookup->find(request("M=300,N=300,K=300")).from_shape, "N=256, K=256,M=256");
    EXPECT_EQ(lookup->find(request("M=900,N=900,K=900")).from_shape, "K=1024,M=1024,N=1024");
}

TEST(Lookup, PredictsWhenNothingToDeriveFrom) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    open_kernel_cache(path); // empty
    auto lookup = open_kernel_lookup(path);
    auto extension = std::make_shared<FakeExtension>();
    lookup->set_extension(extension);
    LookupAnswer answer = lookup->find(request("M=64,N=64,K=64"));
    EXPECT_EQ(answer.kind, AnswerKind::Predicted);
    EXPECT_EQ(answer.kernel.schedule_json, matmul_point(16, 16, 1, 1, 16));
    EXPECT_EQ(answer_kind_name(answer.kind), std::string("predicted"));
}

TEST(Lookup, SeesRowsCommittedAfterOpen) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    auto cache = open_kernel_cache(path);
    cache->put_kernel(matmul_kernel("K=64,M=64,N=64", 0.1, matmul_point(64, 16, 8, 4, 64)));
    auto lookup = open_kernel_lookup(path);
    lookup->set_extension(std::make_shared<FakeExtension>());
    EXPECT_EQ(lookup->find(request("M=1000,N=1000,K=1000")).from_shape, "K=64,M=64,N=64");
    cache->put_kernel(
        matmul_kernel("K=1024,M=1024,N=1024", 9.0, matmul_point(256, 32, 64, 8, 256)));
    EXPECT_EQ(lookup->find(request("M=1000,N=1000,K=1000")).from_shape, "K=1024,M=1024,N=1024");
    EXPECT_EQ(lookup->find(request("M=1024,N=1024,K=1024")).kind, AnswerKind::Exact);
}

TEST(Refit, NarrowInnermostAxisBecomesScalar) {
    std::optional<std::string> fitted =
        refit_schedule(matmul_point(256, 32, 64, 8, 512), {{"n", 10}, {"m", 3}, {"k", 512}});
    ASSERT_TRUE(fitted.has_value());
    nlohmann::json point = nlohmann::json::parse(*fitted);
    EXPECT_EQ(point["vector_width"], 1);
    EXPECT_EQ(point["axes"][0]["reg"], 10);
    EXPECT_EQ(point["axes"][0]["tile"], 10);
    EXPECT_EQ(point["axes"][1]["reg"], 3);
    EXPECT_EQ(point["axes"][1]["tile"], 3);
    EXPECT_EQ(point["reduce"][0]["block"], 512);
}

// An AMX point (core/AmxTile.h) keeps its tiles where the refitted tiling still has whole 16 x 16
// tiles and the reduction whole; a shape of ragged tiles gets the same tiling on vpdpbusd.
TEST(Refit, AmxPointKeepsTilesOnlyOverWholeTiles) {
    nlohmann::json amx = nlohmann::json::parse(matmul_point(64, 16, 64, 16, 512));
    amx["amx_tile"] = true;
    std::optional<std::string> whole = refit_schedule(amx.dump(), {{"n", 128}, {"m", 32}, {"k", 256}});
    ASSERT_TRUE(whole.has_value());
    EXPECT_TRUE(nlohmann::json::parse(*whole).value("amx_tile", false)) << *whole;
    std::optional<std::string> ragged = refit_schedule(amx.dump(), {{"n", 128}, {"m", 8}, {"k", 256}});
    ASSERT_TRUE(ragged.has_value());
    EXPECT_FALSE(nlohmann::json::parse(*ragged).value("amx_tile", false)) << *ragged;
    std::optional<std::string> blocked = refit_schedule(amx.dump(), {{"n", 128}, {"m", 32}, {"k", 1024}});
    ASSERT_TRUE(blocked.has_value());
    EXPECT_FALSE(nlohmann::json::parse(*blocked).value("amx_tile", false)) << *blocked;
}

TEST(Refit, RefusesUnknownVariableOrBadJson) {
    EXPECT_FALSE(refit_schedule(matmul_point(256, 32, 64, 8, 512), {{"n", 10}, {"m", 3}}));
    EXPECT_FALSE(refit_schedule("{not json", {{"n", 10}}));
    EXPECT_FALSE(refit_schedule(R"({"tile":[32,32]})", {{"n", 10}}));
}

TEST(LookupCApi, AnswersAndReportsErrors) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    open_kernel_cache(path)->put_kernel(
        matmul_kernel("K=512,M=512,N=512", 0.5, matmul_point(256, 32, 64, 8, 512)));

    opgen_cache *cache = nullptr;
    char *error = nullptr;
    std::string missing = dir.file("missing.db");
    EXPECT_EQ(opgen_cache_open(missing.c_str(), &cache, &error), -1);
    EXPECT_EQ(cache, nullptr);
    ASSERT_NE(error, nullptr);
    EXPECT_EQ(std::string(error), "database '" + missing + "' does not exist");
    opgen_cache_free_string(error);

    ASSERT_EQ(opgen_cache_open(path.c_str(), &cache, &error), 0);
    opgen_cache_answer answer;
    ASSERT_EQ(opgen_cache_find(cache, "matmul", "N=512,M=512,K=512", nullptr, kTarget, &answer), 0);
    EXPECT_EQ(answer.kind, OPGEN_CACHE_EXACT);
    EXPECT_STREQ(answer.kind_name, "exact");
    EXPECT_STREQ(answer.shape, "K=512,M=512,N=512");
    EXPECT_EQ(answer.verified, 1);
    EXPECT_DOUBLE_EQ(answer.time_ms, 0.5);
    ASSERT_EQ(opgen_cache_find(cache, "matmul", "N=512,M=512,K=512", nullptr, "other:t1", &answer),
              0);
    EXPECT_EQ(answer.kind, OPGEN_CACHE_NONE);
    EXPECT_STRNE(answer.reason, "");
    EXPECT_EQ(opgen_cache_find(cache, nullptr, "M=1", nullptr, kTarget, &answer), -1);
    EXPECT_STREQ(opgen_cache_error(cache),
                 "opgen_cache_find: op, shape, target and answer must not be NULL");
    opgen_cache_close(cache);
}

} // namespace
} // namespace opgen::db
