// The lookup library with the tuner's extension (tuner/Predict.h) on the bundled ops: the shape is
// canonicalised as the tuner keys it, derived answers are points of the new shape's legal space
// (re-fitting keeps the space's rules), predicted answers too, and nothing crosses targets.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/Lookup.h"
#include "runtime/opgen_cache.h"
#include "core/OpLibrary.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "tests/store/DbTestSupport.h"
#include "tuner/Predict.h"
#include "core/TilingSpace.h"
#include "tuner/Tuner.h"

namespace opgen::tuner {
namespace {

using db::test::ScratchDir;

struct Fixture {
    OpLibrary library = OpLibrary::standard();
    Target target = load_target("x86-64-avx512");
    int threads = 2;
};

// Stores, as the tuned winner of `op` at `shape`, the legal point at `index` of its space.
SchedulePoint store_winner(const Fixture &f, db::KernelCache &cache, const std::string &op,
                           const std::string &shape, size_t index) {
    ComputeDef def = f.library.load(op);
    BoundShape bound = bind_shape(def, shape);
    TilingSpace space = make_tiling_space(def, bound, f.target, f.threads);
    EXPECT_GT(space.legal.size(), index);
    SchedulePoint point = space.legal.at(index % space.legal.size());
    db::KernelRecord record;
    record.key = kernel_key(def, bound, f.target, f.threads);
    record.schedule_json = point.to_json().dump();
    record.schedule_source = "// printed";
    record.time_ms = 1.0;
    record.verified = true;
    cache.put_kernel(record);
    return point;
}

bool in_legal_space(const Fixture &f, const std::string &op, const std::string &shape,
                    const std::string &schedule_json) {
    ComputeDef def = f.library.load(op);
    TilingSpace space = make_tiling_space(def, bind_shape(def, shape), f.target, f.threads);
    return space.contains(SchedulePoint::from_json(nlohmann::json::parse(schedule_json)));
}

db::LookupRequest request(const std::string &op, const std::string &shape, const std::string &target) {
    db::LookupRequest r;
    r.op_name = op;
    r.shape = shape;
    r.target = target;
    return r;
}

// Each of several tuned points of `op` at `tuned`, re-fitted to each of `shapes`, is a legal point.
void expect_legal_derivations(const Fixture &f, const std::string &op, const std::string &tuned,
                              const std::vector<std::string> &shapes, const std::vector<size_t> &indices) {
    for (size_t index : indices) {
        ScratchDir dir;
        std::string path = dir.file("cache.db");
        store_winner(f, *db::open_kernel_cache(path), op, tuned, index);
        auto lookup = db::open_kernel_lookup(path);
        lookup->set_extension(make_lookup_extension(f.library, f.target, f.threads, path));
        for (const std::string &shape : shapes) {
            // The refit is ranked against the model's pick; either may answer, both are legal.
            db::LookupAnswer a = lookup->find(request(op, shape, "x86-64-avx512:t2"));
            ASSERT_TRUE(a.kind == db::AnswerKind::Derived || a.kind == db::AnswerKind::Predicted)
                << shape << ": " << a.reason;
            EXPECT_TRUE(a.needs_compile);
            ASSERT_EQ(a.ranked.size(), 2u) << shape;
            EXPECT_EQ(a.ranked.front().schedule_json, a.kernel.schedule_json);
            EXPECT_GE(a.ranked[0].score, a.ranked[1].score);
            for (const db::RankedCandidate &c : a.ranked) {
                EXPECT_TRUE(in_legal_space(f, op, shape, c.schedule_json))
                    << db::answer_kind_name(c.kind) << " point " << index << " of " << tuned << " at " << shape
                    << ": " << c.schedule_json;
            }
        }
    }
}

TEST(Predict, DerivedMatmulPointsAreLegal) {
    expect_legal_derivations(Fixture{}, "matmul", "M=256,N=256,K=256",
                             {"M=200,N=72,K=1000", "M=512,N=384,K=320", "M=8,N=8,K=8"}, {0, 7, 101, 555, 2024});
}

TEST(Predict, DerivedConvPointsAreLegal) {
    expect_legal_derivations(Fixture{}, "conv2d_nchw", "N=1,C=64,H=28,W=28,F=64",
                             {"N=1,C=32,H=28,W=28,F=32", "N=1,C=128,H=14,W=14,F=256"}, {7, 2024});
}

TEST(Predict, CanonicalisesAsTheTunerKeys) {
    Fixture f;
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    store_winner(f, *db::open_kernel_cache(path), "conv2d_nchw", "N=1,C=64,H=28,W=28,F=64", 3);
    auto lookup = db::open_kernel_lookup(path);
    lookup->set_extension(make_lookup_extension(f.library, f.target, f.threads, path));
    // Defaults (KH, KW) and attributes (stride, pad, dilation) are filled in: an exact hit.
    db::LookupAnswer a = lookup->find(request("conv2d_nchw", "F=64, W=28, H=28, C=64, N=1", "x86-64-avx512:t2"));
    EXPECT_EQ(a.kind, db::AnswerKind::Exact) << a.reason;
    EXPECT_EQ(a.kernel.schedule_source, "// printed");
}

TEST(Predict, PredictsLegalPointOnlyForItsTarget) {
    Fixture f;
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    // Tuned on one thread: a different target key, so no neighbour for two threads.
    Fixture one = f;
    one.threads = 1;
    store_winner(one, *db::open_kernel_cache(path), "matmul", "M=256,N=256,K=256", 0);
    auto lookup = db::open_kernel_lookup(path);
    lookup->set_extension(make_lookup_extension(f.library, f.target, f.threads, path));
    db::LookupAnswer a = lookup->find(request("matmul", "M=300,N=200,K=100", "x86-64-avx512:t2"));
    ASSERT_EQ(a.kind, db::AnswerKind::Predicted) << a.reason;
    EXPECT_EQ(a.kernel.key.shape, "K=100,M=300,N=200");
    EXPECT_EQ(a.kernel.key.target, "x86-64-avx512:t2");
    EXPECT_GT(a.kernel.time_ms, 0);
    EXPECT_TRUE(in_legal_space(f, "matmul", "M=300,N=200,K=100", a.kernel.schedule_json));
    // The extension serves its own target only; another target gets no answer at all.
    db::LookupAnswer other = lookup->find(request("matmul", "M=300,N=200,K=100", "arm64-neon:t2"));
    EXPECT_EQ(other.kind, db::AnswerKind::None);
}

TEST(Predict, AttachesThroughTheCApi) {
    Fixture f;
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    store_winner(f, *db::open_kernel_cache(path), "matmul", "M=256,N=256,K=256", 0);
    opgen_cache *cache = nullptr;
    ASSERT_EQ(opgen_cache_open(path.c_str(), &cache, nullptr), 0);
    char *error = nullptr;
    EXPECT_EQ(opgen_cache_attach_tuner(cache, nullptr, "no-such-target", 2, &error), -1);
    ASSERT_NE(error, nullptr);
    EXPECT_NE(std::string(error).find("no-such-target"), std::string::npos) << error;
    opgen_cache_free_string(error);
    ASSERT_EQ(opgen_cache_attach_tuner(cache, nullptr, "x86-64-avx512", 2, &error), 0);
    opgen_cache_answer answer;
    ASSERT_EQ(opgen_cache_find(cache, "matmul", "M=128,N=128,K=128", nullptr, "x86-64-avx512:t2", &answer), 0);
    // The neighbour's refit and the model's pick, ranked by the model: either answers.
    ASSERT_TRUE(answer.kind == OPGEN_CACHE_DERIVED || answer.kind == OPGEN_CACHE_PREDICTED) << answer.kind;
    EXPECT_STREQ(answer.from_shape, answer.kind == OPGEN_CACHE_DERIVED ? "K=256,M=256,N=256" : "");
    EXPECT_EQ(answer.verified, 0);
    opgen_cache_close(cache);
}


// The request of `key`, as a caller that computed the key (opgen query, the model compiler) sends.
db::LookupRequest request_of(const db::KernelKey &key) {
    db::LookupRequest r = request(key.op_name, key.shape, key.target);
    r.dtype = key.dtype;
    r.op_hash = key.op_hash;
    return r;
}

// A cache key names the instruction features the op's space can use (codegen/KernelKeys.h): an
// int8 winner tuned with AMX tiles is never the answer for a host without them, neither exact nor
// derived nor predicted, while float32 keys are the same on both.
TEST(Predict, AmxWinnersAreKeyedByTheFeaturesTheirSpaceUses) {
    Fixture amx;
    amx.threads = 1;
    amx.target.features = {"avx512_vnni", "avx512_bf16", "amx_int8", "amx_bf16"};
    Fixture vnni = amx;
    vnni.target.features = {"avx512_vnni", "avx512_bf16"};
    ComputeDef int8 = amx.library.load("matmul_u8s8"), f32 = amx.library.load("matmul");
    ComputeDef bf16 = amx.library.load("matmul_bf16");
    BoundShape shape = bind_shape(int8, "M=64,N=64,K=256");
    const db::KernelKey amx_key = kernel_key(int8, shape, amx.target, 1);
    const db::KernelKey vnni_key = kernel_key(int8, shape, vnni.target, 1);
    EXPECT_EQ(amx_key.target, "x86-64-avx512+avx512_vnni+amx_int8:t1");
    EXPECT_EQ(vnni_key.target, "x86-64-avx512+avx512_vnni:t1");
    EXPECT_EQ(kernel_key(int8, shape, load_target("x86-64-avx512"), 1).target, "x86-64-avx512:t1");
    EXPECT_EQ(kernel_key(bf16, bind_shape(bf16, "M=64,N=64,K=64"), amx.target, 2).target,
              "x86-64-avx512+avx512_bf16:t2");
    EXPECT_EQ(kernel_key(f32, bind_shape(f32, "M=64,N=64,K=64"), amx.target, 1).target, "x86-64-avx512:t1");

    ScratchDir dir;
    const std::string path = dir.file("cache.db");
    db::KernelRecord record;
    record.key = amx_key;
    SchedulePoint tiles = heuristic_point(int8, shape, amx.target);
    ASSERT_TRUE(tiles.amx_tile);
    record.schedule_json = tiles.to_json().dump();
    record.time_ms = 0.01;
    record.verified = true;
    db::open_kernel_cache(path)->put_kernel(record);

    auto on_amx = db::open_kernel_lookup(path);
    on_amx->set_extension(make_lookup_extension(amx.library, amx.target, 1, path));
    EXPECT_EQ(on_amx->find(request_of(amx_key)).kind, db::AnswerKind::Exact);

    auto without = db::open_kernel_lookup(path);
    without->set_extension(make_lookup_extension(vnni.library, vnni.target, 1, path));
    db::LookupAnswer a = without->find(request_of(vnni_key));
    ASSERT_EQ(a.kind, db::AnswerKind::Predicted) << a.reason;
    EXPECT_EQ(a.kernel.key.target, vnni_key.target);
    EXPECT_FALSE(SchedulePoint::from_json(nlohmann::json::parse(a.kernel.schedule_json)).amx_tile);
}

} // namespace
} // namespace opgen::tuner
