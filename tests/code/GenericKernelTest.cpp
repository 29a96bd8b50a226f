// Shape-generic kernels straight from the cache: the real opgen command tunes matmul, softmax and a
// conv2d_nchw at one small shape each and builds their generic code (`opgen db compile --generic`,
// checked against the reference before it is stored); this binary, which links only opgen_cache
// (no Halide compiler), then runs them at shapes nobody tuned, smaller than the tiles and with
// ragged tails, each checked against a naive loop. A tuned shape still gets its exact kernel. The
// fault suite for generic rows: tampered, truncated and unreadable-signature code is refused with
// one clear reason and never mapped; a call whose buffers do not match the bound shape is refused.
// Ranking: by the generic kernels' measured ratios at tuned shapes first (`db compile --generic`
// times them), else by the cost model, else by shape distance.
#include <HalideRuntime.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <functional>

#include "runtime/CodeLoader.h"
#include "runtime/GenericFit.h"
#include "runtime/GenericSignature.h"
#include "runtime/Lookup.h"
#include "runtime/opgen_cache.h"
#include "tests/code/CodeTestSupport.h"

namespace opgen::test {
namespace {

std::vector<float> ramp(size_t n, int modulus, int offset) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; i++) v[i] = float(int((i * 7 + 3) % size_t(modulus)) - offset);
    return v;
}

double worst(const std::vector<float> &got, const std::vector<double> &want) {
    double w = 0;
    for (size_t i = 0; i < got.size(); i++) {
        double e = std::fabs(got[i] - want[i]) / std::max(1.0, std::fabs(want[i]));
        if (!(e <= w)) w = e;
    }
    return w;
}

// Softmax of each of the M rows of N in `x`, by the definition.
std::vector<double> naive_softmax(const std::vector<float> &x, int M, int N) {
    std::vector<double> want(size_t(M) * size_t(N));
    for (int m = 0; m < M; m++) {
        double top = -1e30, sum = 0;
        for (int n = 0; n < N; n++) top = std::max(top, double(x[size_t(m * N + n)]));
        for (int n = 0; n < N; n++) sum += std::exp(x[size_t(m * N + n)] - top);
        for (int n = 0; n < N; n++) want[size_t(m * N + n)] = std::exp(x[size_t(m * N + n)] - top) / sum;
    }
    return want;
}

class GenericKernelTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("opgen-generic-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                "-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        path_ = (dir_ / "g.db").string();
        fs::copy_file(generic_cache_folder() / "g.db", path_);
        target_ = tuned_target(path_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    db::LookupRequest request(const std::string &op, const std::string &shape) const {
        db::LookupRequest r;
        r.op_name = op;
        r.shape = shape;
        r.target = target_;
        return r;
    }

    // The generic matmul at M x N x K, called, against the naive product.
    double run_matmul(db::KernelLookup &lookup, int M, int N, int K) {
        std::string shape = "M=" + std::to_string(M) + ",N=" + std::to_string(N) + ",K=" + std::to_string(K);
        std::string why;
        std::shared_ptr<const db::LoadedKernel> k = lookup.kernel(request("matmul", shape), &why);
        if (!k) {
            ADD_FAILURE() << why;
            return 1e9;
        }
        EXPECT_TRUE(k->generic()) << shape;
        EXPECT_EQ(k->arguments()[2].dims, (std::vector<int64_t>{M, N}));
        std::vector<float> a = ramp(size_t(M * K), 7, 3), b = ramp(size_t(K * N), 5, 2), c(size_t(M * N), -7.f);
        std::vector<double> want(size_t(M * N));
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++)
                for (int kk = 0; kk < K; kk++) want[size_t(m * N + n)] += double(a[size_t(m * K + kk)]) * b[size_t(kk * N + n)];
        void *pointers[] = {a.data(), b.data(), c.data()};
        std::string error;
        EXPECT_EQ(k->call(pointers, 3, &error), 0) << error;
        return worst(c, want);
    }

    // The generic row's code, edited behind the cache's back (the digest recomputed on request).
    void edit_generic(const std::function<void(db::KernelCode &)> &edit, bool fix_digest) {
        db::GenericCodeRecord row;
        {
            auto cache = signing_cache(path_);
            row = cache->generic_code_for("matmul", target_).at(0);
        }
        edit(row.code);
        if (fix_digest) row.code.digest = db::code_digest(row.code);
        sqlite3 *db = nullptr;
        sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
        sqlite3_stmt *s = nullptr;
        sqlite3_prepare_v2(db, "UPDATE generic_code SET signature = ?1, size = ?2, digest = ?3, bytes = ?4, "
                               "fixed = ?5 WHERE op_name = 'matmul'", -1, &s, nullptr);
        sqlite3_bind_text(s, 1, row.code.signature.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(s, 2, row.code.size);
        sqlite3_bind_text(s, 3, row.code.digest.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_blob(s, 4, row.code.bytes.data(), int(row.code.bytes.size()), SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 5, row.code.fixed.c_str(), -1, SQLITE_TRANSIENT);
        int rc = sqlite3_step(s);
        sqlite3_finalize(s);
        sqlite3_close_v2(db);
        ASSERT_EQ(rc, SQLITE_DONE);
    }

    // Removes every timing of generic code: the ranking then falls to the model or the distance.
    void drop_timings() {
        sqlite3 *db = nullptr;
        sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
        int rc = sqlite3_exec(db, "DELETE FROM generic_timings", nullptr, nullptr, nullptr);
        sqlite3_close_v2(db);
        ASSERT_EQ(rc, SQLITE_OK);
    }

    // The DbError of loading the generic matmul at a never-tuned shape in a fresh lookup.
    std::string refusal() {
        int mapped = mapped_kernel_files();
        auto lookup = db::open_kernel_lookup(path_);
        try {
            std::string why;
            if (!lookup->kernel(request("matmul", "M=9,N=10,K=11"), &why)) return "no kernel: " + why;
        } catch (const db::DbError &e) {
            EXPECT_EQ(mapped_kernel_files(), mapped) << "refused code was mapped";
            return e.what();
        }
        ADD_FAILURE() << "the kernel loaded";
        return "";
    }

    // The stored generic matmul row (`near`) and a copy of it from a far tuned shape with a
    // schedule and digest of its own (`far`), stored too.
    void add_far_copy(db::GenericCodeRecord &near, db::GenericCodeRecord &far) {
        auto cache = signing_cache(path_);
        near = cache->generic_code_for("matmul", target_).at(0);
        far = near;
        nlohmann::json schedule = nlohmann::json::parse(far.code.schedule_json);
        schedule["marker"] = true;
        far.code.schedule_json = schedule.dump();
        far.code.digest = db::code_digest(far.code);
        far.key.shape = "K=900,M=900,N=900";
        cache->put_generic_code(far);
    }

    // Timings of `near` and `far` at near's tuned shape (the one nearest the tests' request).
    void time_rows(const db::GenericCodeRecord &near, double near_ratio, const db::GenericCodeRecord &far,
                   double far_ratio) {
        auto cache = signing_cache(path_);
        std::vector<db::GenericTimingRecord> t(2);
        for (int i = 0; i < 2; i++) {
            const db::GenericCodeRecord &row = i == 0 ? near : far;
            t[size_t(i)].key = row.key;
            t[size_t(i)].digest = row.code.digest;
            t[size_t(i)].at_shape = near.key.shape;
            t[size_t(i)].ratio = i == 0 ? near_ratio : far_ratio;
            t[size_t(i)].time_ms = t[size_t(i)].ratio;
            t[size_t(i)].tuned_ms = 1;
        }
        cache->put_generic_timings(t);
    }

    // The lookup's estimate at `shape` of `row` timed at `ratio` at `at` alone: the ratio carried
    // by the work its register tiles waste at a ragged edge at each shape (runtime/GenericFit.h).
    static double carried(const db::GenericCodeRecord &row, double ratio, const std::string &at,
                          const std::string &shape) {
        auto overwork = [&](const std::string &s) {
            std::optional<db::GenericBinding> b = db::bind_generic(row.code, s);
            EXPECT_TRUE(b) << s;
            if (!b) return 0.0;
            const std::vector<int64_t> &dims = b->arguments.back().dims;  // the output, outermost first
            return db::register_tile_overwork(db::register_tiles(row.code.schedule_json),
                                              std::vector<int64_t>(dims.rbegin(), dims.rend()));
        };
        return ratio * std::exp(overwork(shape) - overwork(at));
    }

    // `row`'s schedule with the register tile of output variable `var` set to `reg`, stored (its
    // digest recomputed; the code is unchanged, so it still computes any shape right).
    void set_register_tile(db::GenericCodeRecord &row, const std::string &var, int64_t reg) {
        nlohmann::json schedule = nlohmann::json::parse(row.code.schedule_json);
        bool found = false;
        for (nlohmann::json &axis : schedule["axes"]) {
            if (axis["var"] != var) continue;
            axis["reg"] = reg;
            found = true;
        }
        ASSERT_TRUE(found) << row.code.schedule_json;
        row.code.schedule_json = schedule.dump();
        row.code.digest = db::code_digest(row.code);
        signing_cache(path_)->put_generic_code(row);
    }

    fs::path dir_;
    std::string path_, target_;
};

// (One test per shape family rather than one per check: each test process builds its caches.)
TEST_F(GenericKernelTest, MatmulServesNeverTunedShapesFromOneLoadAndSaysGeneric) {
    auto lookup = db::open_kernel_lookup(path_);
    int mapped = mapped_kernel_files();
    EXPECT_EQ(run_matmul(*lookup, 1, 1, 1), 0.0);
    EXPECT_EQ(run_matmul(*lookup, 7, 33, 5), 0.0);       // below every tile
    EXPECT_EQ(run_matmul(*lookup, 61, 129, 67), 0.0);    // ragged tails past the tuned shape
    EXPECT_EQ(mapped_kernel_files(), mapped + 1);         // one generic code, bound three times
    // The tuned shape still gets its exact kernel.
    std::shared_ptr<const db::LoadedKernel> exact = lookup->kernel(request("matmul", kMatmulShape));
    ASSERT_TRUE(exact);
    EXPECT_FALSE(exact->generic());

    db::LookupAnswer a = lookup->find(request("matmul", "M=100,N=3,K=17"));
    EXPECT_EQ(a.kind, db::AnswerKind::Generic) << a.reason;
    EXPECT_STREQ(db::answer_kind_name(a.kind), "generic");
    EXPECT_EQ(a.kernel.key.shape, "K=17,M=100,N=3");
    EXPECT_EQ(a.from_shape, "K=40,M=24,N=56");
    EXPECT_TRUE(a.kernel.verified);
    EXPECT_EQ(lookup->find(request("matmul", kMatmulShape)).kind, db::AnswerKind::Exact);
}

TEST_F(GenericKernelTest, SoftmaxAndConvThroughTheCApi) {
    opgen_cache *cache = nullptr;
    ASSERT_EQ(opgen_cache_open(path_.c_str(), &cache, nullptr), 0);
    // softmax at 3 x 1000 rows (the tuned shape is 16 x 100).
    const opgen_cache_kernel *k = nullptr;
    ASSERT_EQ(opgen_cache_kernel_find(cache, "softmax", "M=3,N=1000", nullptr, target_.c_str(), &k), 0)
        << opgen_cache_error(cache);
    EXPECT_EQ(opgen_cache_kernel_is_generic(k), 1);
    EXPECT_STREQ(opgen_cache_kernel_shape(k), "M=3,N=1000");
    std::vector<float> x = ramp(3000, 11, 5), y(3000, -1.f);
    void *sm[] = {x.data(), y.data()};
    ASSERT_EQ(opgen_cache_kernel_call(k, sm, 2), 0);
    EXPECT_LT(worst(y, naive_softmax(x, 3, 1000)), 1e-5);

    // conv at N=2, C=3, H=5, W=17, F=7 (tuned: N=1, C=8, H=W=10, F=16), defaults left out.
    ASSERT_EQ(opgen_cache_kernel_find(cache, "conv2d_nchw", "N=2,C=3,H=5,W=17,F=7", nullptr, target_.c_str(), &k), 0)
        << opgen_cache_error(cache);
    EXPECT_EQ(opgen_cache_kernel_is_generic(k), 1);
    long long dims[4];
    ASSERT_EQ(opgen_cache_kernel_argument_dims(k, 2, dims, 4), 4);
    EXPECT_EQ(std::vector<long long>(dims, dims + 4), (std::vector<long long>{2, 7, 5, 17}));
    const int N = 2, C = 3, H = 5, W = 17, F = 7;
    std::vector<float> X = ramp(N * C * H * W, 7, 3), Wt = ramp(F * C * 9, 5, 2), Y(N * F * H * W, -1.f);
    std::vector<double> cw(Y.size());
    for (int n = 0; n < N; n++)
        for (int f = 0; f < F; f++)
            for (int oy = 0; oy < H; oy++)
                for (int ox = 0; ox < W; ox++) {
                    double s = 0;
                    for (int c = 0; c < C; c++)
                        for (int ry = 0; ry < 3; ry++)
                            for (int rx = 0; rx < 3; rx++) {
                                int iy = oy + ry - 1, ix = ox + rx - 1;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                s += double(X[size_t(((n * C + c) * H + iy) * W + ix)]) * Wt[size_t(((f * C + c) * 3 + ry) * 3 + rx)];
                            }
                    cw[size_t(((n * F + f) * H + oy) * W + ox)] = s;
                }
    void *cv[] = {X.data(), Wt.data(), Y.data()};
    ASSERT_EQ(opgen_cache_kernel_call(k, cv, 3), 0);
    EXPECT_EQ(worst(Y, cw), 0.0);

    // A shape of another fixed value (a 5x5 window) is served by nothing, and says why.
    EXPECT_EQ(opgen_cache_kernel_find(cache, "conv2d_nchw", "N=1,C=3,H=5,W=5,F=7,KH=5,KW=5", nullptr,
                                      target_.c_str(), &k), -1);
    EXPECT_NE(std::string(opgen_cache_error(cache)).find("compiled for KH=3, not 5"), std::string::npos)
        << opgen_cache_error(cache);
    opgen_cache_close(cache);
}

TEST_F(GenericKernelTest, RefusesBadBuffersAndBadGenericRows) {
    {  // RefusesBuffersThatDoNotMatchTheBoundShape
        auto lookup = db::open_kernel_lookup(path_);
        std::shared_ptr<const db::LoadedKernel> k = lookup->kernel(request("matmul", "M=9,N=10,K=11"));
        ASSERT_TRUE(k);
        std::vector<float> a(9 * 11), b(11 * 10), c(9 * 10);
        halide_dimension_t da[] = {{0, 11, 1, 0}, {0, 9, 11, 0}}, db_[] = {{0, 10, 1, 0}, {0, 11, 10, 0}},
                           dc[] = {{0, 10, 1, 0}, {0, 8, 10, 0}};  // one row short
        halide_buffer_t ba{}, bb{}, bc{};
        for (auto [buf, data, dims] : {std::tuple{&ba, a.data(), da}, {&bb, b.data(), db_}, {&bc, c.data(), dc}}) {
            buf->host = reinterpret_cast<uint8_t *>(data);
            buf->type = {halide_type_float, 32, 1};
            buf->dimensions = 2;
            buf->dim = dims;
        }
        halide_buffer_t *buffers[] = {&ba, &bb, &bc};
        std::string error;
        EXPECT_EQ(k->call(buffers, 3, &error), -1);
        EXPECT_NE(error.find("buffer 'C' has extent 8 in dimension 1, not 9"), std::string::npos) << error;
        dc[1].extent = 9;
        EXPECT_EQ(k->call(buffers, 3, &error), 0) << error;
    }
    {  // RefusesTamperedGenericCode
        copy_file(generic_cache_folder() / "g.db", path_, fs::copy_options::overwrite_existing);
        edit_generic([](db::KernelCode &c) { c.bytes[c.bytes.size() / 2] ^= 0x01; }, false);
        std::string why = refusal();
        EXPECT_NE(why.find("refused: its digest does not match"), std::string::npos) << why;
    }
    {  // RefusesAChangedFixedValueOrSignature
        copy_file(generic_cache_folder() / "g.db", path_, fs::copy_options::overwrite_existing);
        // The fixed values are under the digest: edited alone, the digest no longer matches.
        edit_generic([](db::KernelCode &c) { c.fixed = "Q=1"; }, false);
        std::string why = refusal();
        EXPECT_NE(why.find("refused: its digest does not match"), std::string::npos) << why;
        // A signature that names no symbol of the code, digest recomputed: refused as unreadable.
        copy_file(generic_cache_folder() / "g.db", path_, fs::copy_options::overwrite_existing);
        edit_generic([](db::KernelCode &c) { c.signature = "A:in:f32:M,Z;B:in:f32:Z,N;C:out:f32:M,N"; }, true);
        why = refusal();
        EXPECT_NE(why.find("refused: its generic signature 'A:in:f32:M,Z;"), std::string::npos) << why;
    }
    {  // RefusesTruncatedGenericCode
        copy_file(generic_cache_folder() / "g.db", path_, fs::copy_options::overwrite_existing);
        edit_generic([](db::KernelCode &c) { c.bytes.resize(c.bytes.size() - 64); }, false);
        std::string why = refusal();
        EXPECT_NE(why.find("refused: its code is truncated or padded"), std::string::npos) << why;
    }
}

// Knows matmul's loop extents (m=M, n=N, k=K); ranks schedules by `score`, predicts nothing.
class RankingExtension : public db::LookupExtension {
public:
    explicit RankingExtension(std::function<double(const std::string &)> score) : score_(std::move(score)) {}
    std::optional<db::ShapeInfo> resolve(const std::string &op_name, const std::string &shape) override {
        std::optional<std::string> sorted = db::sorted_shape(shape);
        if (op_name != "matmul" || !sorted) return std::nullopt;
        db::ShapeInfo info;
        info.canonical = *sorted;
        std::optional<std::map<std::string, int64_t>> values = db::parse_values(*sorted);
        if (!values) return std::nullopt;
        for (const auto &[name, value] : *values) {
            info.extents[std::string(1, char(std::tolower(name[0])))] = value;
        }
        return info;
    }
    std::optional<db::LookupAnswer> predict(const db::LookupRequest &, const db::ShapeInfo &) override {
        return std::nullopt;
    }
    std::vector<double> rank(const db::LookupRequest &, const db::ShapeInfo &,
                             const std::vector<std::string> &schedules) override {
        std::vector<double> scores;
        for (const std::string &s : schedules) scores.push_back(score_(s));
        calls++;
        return scores;
    }
    int calls = 0;

private:
    std::function<double(const std::string &)> score_;
};

// Scores the first of three schedules (find()'s refit) 5, a marked schedule 2, others 1.
class CallRankingExtension : public RankingExtension {
public:
    CallRankingExtension() : RankingExtension([](const std::string &s) { return s.find("marker") != std::string::npos ? 2.0 : 1.0; }) {}
    std::vector<double> rank(const db::LookupRequest &r, const db::ShapeInfo &i,
                             const std::vector<std::string> &schedules) override {
        std::vector<double> scores = RankingExtension::rank(r, i, schedules);
        if (schedules.size() == 3) scores[0] = 5.0;
        return scores;
    }
};

// Scores the first of three schedules (find()'s refit) 5, the others by `score`.
class RefitFirstExtension : public RankingExtension {
public:
    using RankingExtension::RankingExtension;
    std::vector<double> rank(const db::LookupRequest &r, const db::ShapeInfo &i,
                             const std::vector<std::string> &schedules) override {
        std::vector<double> scores = RankingExtension::rank(r, i, schedules);
        if (schedules.size() == 3) scores[0] = 5.0;
        return scores;
    }
};

// The lookup ranks its candidates (the neighbour's refit, the generic kernels) with the
// extension's cost model, not by shape distance: a second generic matmul, from a far shape and
// with a marked schedule, is served once the model ranks it first, and a refit ranked first is
// the answer, which then says it needs compiling while kernel() serves the best generic kernel.
TEST_F(GenericKernelTest, RanksCandidatesWithTheModelNotByDistance) {
    drop_timings();  // no measured evidence: the model ranks
    db::GenericCodeRecord far;
    {
        auto cache = signing_cache(path_);
        far = cache->generic_code_for("matmul", target_).at(0);
        nlohmann::json schedule = nlohmann::json::parse(far.code.schedule_json);
        schedule["marker"] = true;  // the same code, told apart by its schedule
        far.code.schedule_json = schedule.dump();
        far.code.digest = db::code_digest(far.code);
        far.key.shape = "K=900,M=900,N=900";
        cache->put_generic_code(far);
    }
    const std::string near_digest = [&] {
        auto cache = signing_cache(path_);
        for (const db::GenericCodeRecord &r : cache->generic_code_for("matmul", target_))
            if (r.key.shape != far.key.shape) return r.code.digest;
        return std::string();
    }();
    ASSERT_FALSE(near_digest.empty());
    auto marked = [](const std::string &s) { return s.find("marker") != std::string::npos; };

    // Without ranking: the generic kernel from the nearest tuned shape.
    auto plain = db::open_kernel_lookup(path_);
    ASSERT_TRUE(plain->kernel(request("matmul", "M=20,N=50,K=30")));
    EXPECT_EQ(plain->kernel(request("matmul", "M=20,N=50,K=30"))->digest(), near_digest);

    // The model ranks the far one first: it is served, and it answers find().
    auto lookup = db::open_kernel_lookup(path_);
    auto prefers_far = std::make_shared<RankingExtension>([&](const std::string &s) { return marked(s) ? 3.0 : 1.0; });
    lookup->set_extension(prefers_far);
    std::shared_ptr<const db::LoadedKernel> k = lookup->kernel(request("matmul", "M=20,N=50,K=30"));
    ASSERT_TRUE(k);
    EXPECT_TRUE(k->generic());
    EXPECT_EQ(k->digest(), far.code.digest);
    EXPECT_LT(run_matmul(*lookup, 20, 50, 30), 1e-6);
    db::LookupAnswer a = lookup->find(request("matmul", "M=20,N=50,K=30"));
    ASSERT_EQ(a.kind, db::AnswerKind::Generic) << a.reason;
    EXPECT_EQ(a.from_shape, far.key.shape);
    EXPECT_FALSE(a.needs_compile);
    ASSERT_EQ(a.ranked.size(), 3u);  // the neighbour's refit and both generic kernels
    EXPECT_EQ(a.ranked[0].kind, db::AnswerKind::Generic);
    EXPECT_DOUBLE_EQ(a.ranked[0].score, 3.0);
    // Among equal scores the generic kernel, which is callable at once, before the refit.
    EXPECT_EQ(a.ranked[1].kind, db::AnswerKind::Generic);
    EXPECT_EQ(a.ranked[2].kind, db::AnswerKind::Derived);
    EXPECT_EQ(a.ranked[2].from_shape, "K=40,M=24,N=56");

    // A refit ranked first is the answer; it needs compiling, and kernel() serves the best
    // generic kernel meanwhile.
    auto other = db::open_kernel_lookup(path_);
    // find() ranks the refit first in its list, then the generic kernels; kernel() ranks the
    // generic kernels alone.
    other->set_extension(std::make_shared<CallRankingExtension>());
    db::LookupAnswer b;
    b = other->find(request("matmul", "M=20,N=50,K=30"));
    ASSERT_EQ(b.kind, db::AnswerKind::Derived) << b.reason;
    EXPECT_TRUE(b.needs_compile);
    EXPECT_EQ(b.ranked.front().kind, db::AnswerKind::Derived);
    EXPECT_DOUBLE_EQ(b.ranked.front().score, 5.0);
    std::shared_ptr<const db::LoadedKernel> served = other->kernel(request("matmul", "M=20,N=50,K=30"));
    ASSERT_TRUE(served);
    EXPECT_TRUE(served->generic());
    EXPECT_EQ(served->digest(), far.code.digest);
}

// `opgen db compile --generic` times every generic kernel at every tuned shape of its op at the
// process's thread count (here one, as the kernels were tuned), each paired with the tuned
// kernel; a second run has nothing left to time.
TEST_F(GenericKernelTest, CompileTimesEveryGenericKernelAtTheTunedShapes) {
    drop_timings();
    std::string command = "HL_NUM_THREADS=1 '" + std::string(OPGEN_EXE) + "' db compile --generic --op matmul --db g.db";
    CommandRun r = run_in(dir_, command);
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    auto cache = signing_cache(path_);
    std::vector<db::GenericCodeRecord> generic = cache->generic_code_for("matmul", target_);
    std::vector<db::KernelRecord> tuned = cache->kernels_for("matmul", target_);
    ASSERT_FALSE(generic.empty());
    std::vector<db::GenericTimingRecord> timings = cache->generic_timings_for("matmul", target_);
    EXPECT_EQ(timings.size(), generic.size() * tuned.size());
    EXPECT_NE(r.out.find("stored " + std::to_string(generic.size() * tuned.size()) + " timing(s)"), std::string::npos) << r.out;
    for (const db::GenericTimingRecord &t : timings) {
        EXPECT_GT(t.ratio, 0.0);
        EXPECT_GT(t.time_ms, 0.0);
        EXPECT_GT(t.tuned_ms, 0.0);
        bool of_a_row = false, at_a_tuned_shape = false;
        for (const db::GenericCodeRecord &g : generic) of_a_row = of_a_row || (g.key.shape == t.key.shape && g.code.digest == t.digest);
        for (const db::KernelRecord &k : tuned) at_a_tuned_shape = at_a_tuned_shape || k.key.shape == t.at_shape;
        EXPECT_TRUE(of_a_row) << t.key.shape;
        EXPECT_TRUE(at_a_tuned_shape) << t.at_shape;
    }
    r = run_in(dir_, command);
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("stored 0 timing(s)"), std::string::npos) << r.out;
}

// The timings are of the code the cache stores, loaded by the stored-code timer through the
// lookup library's checks: a tuned kernel without stored code cannot be timed against, and a
// tampered one is refused before it runs; either way the command fails naming it and stores no
// timing at that shape, while the other shapes' timings are kept.
TEST_F(GenericKernelTest, TimingRunsTheStoredCodeOfBothKernels) {
    drop_timings();
    const std::string command =
        "HL_NUM_THREADS=1 '" + std::string(OPGEN_EXE) + "' db compile --generic --op matmul --db g.db";
    raw_sql(path_, "DELETE FROM kernel_code WHERE op_name = 'matmul'");
    CommandRun r = run_in(dir_, command);
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.err.find("error: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("no stored code (run 'opgen db compile' on the cache)"), std::string::npos) << r.err;
    EXPECT_TRUE(signing_cache(path_)->generic_timings_for("matmul", target_).empty());

    ASSERT_EQ(run_in(dir_, "'" + std::string(OPGEN_EXE) + "' db compile --db g.db").status, 0);
    raw_sql(path_, "UPDATE kernel_code SET bytes = CAST(zeroblob(size) AS BLOB) WHERE op_name = 'matmul'");
    r = run_in(dir_, command);
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.err.find("digest"), std::string::npos) << r.err;
    EXPECT_TRUE(signing_cache(path_)->generic_timings_for("matmul", target_).empty());
}

// Measured evidence ranks first: a generic kernel measured near a full tune (at most 2.0x at the
// tuned shapes nearest the request, each ratio carried to the request by its register tiles'
// overwork) is served by kernel() and answers find() without the model being asked, whatever the
// model would score; measured worse, the model ranks the candidates and the best measured generic
// kernel leads the generic ones (and is the one kernel() serves).
TEST_F(GenericKernelTest, RanksGenericKernelsByMeasuredRatiosFirst) {
    drop_timings();
    db::GenericCodeRecord far, near;
    add_far_copy(near, far);
    auto time_both = [&](double near_ratio, double far_ratio) { time_rows(near, near_ratio, far, far_ratio); };
    auto marked = [](const std::string &s) { return s.find("marker") != std::string::npos; };
    const std::string shape = "M=20,N=50,K=30";

    // The far kernel measured at 1.05, the near one at 2.3; the model prefers the near one. Both
    // rows' tiles waste 1.34x as much at the request as at the tuned shape (n 64/50 and m 24/20
    // there, n 64/56 at M=24,N=56): the far one's 1.41 answers outright (at most 2.0).
    auto at = [&](const db::GenericCodeRecord &row, double ratio) { return carried(row, ratio, near.key.shape, shape); };
    ASSERT_NEAR(at(far, 1.0), 1.344, 1e-3);
    time_both(2.3, 1.05);
    {
        auto lookup = db::open_kernel_lookup(path_);
        auto prefers_near = std::make_shared<RankingExtension>([&](const std::string &s) { return marked(s) ? 1.0 : 3.0; });
        lookup->set_extension(prefers_near);
        std::shared_ptr<const db::LoadedKernel> k = lookup->kernel(request("matmul", shape));
        ASSERT_TRUE(k);
        EXPECT_EQ(k->digest(), far.code.digest);
        EXPECT_LT(run_matmul(*lookup, 20, 50, 30), 1e-6);
        db::LookupAnswer a = lookup->find(request("matmul", shape));
        ASSERT_EQ(a.kind, db::AnswerKind::Generic) << a.reason;
        EXPECT_EQ(a.from_shape, far.key.shape);
        EXPECT_FALSE(a.needs_compile);
        EXPECT_EQ(prefers_near->calls, 0);  // measured good enough: no model asked
        ASSERT_EQ(a.ranked.size(), 2u);     // the generic kernels alone
        EXPECT_NEAR(a.ranked[0].measured_ratio, at(far, 1.05), 1e-9);
        EXPECT_NEAR(a.ranked[1].measured_ratio, at(near, 2.3), 1e-9);
    }
    // Both measured above 2.0: the model ranks (the refit first), the far kernel, measured
    // better, ahead of the near one the model prefers.
    time_both(2.3, 2.1);
    {
        auto lookup = db::open_kernel_lookup(path_);
        lookup->set_extension(std::make_shared<RefitFirstExtension>([&](const std::string &s) { return marked(s) ? 1.0 : 2.0; }));
        db::LookupAnswer b = lookup->find(request("matmul", shape));
        ASSERT_EQ(b.kind, db::AnswerKind::Derived) << b.reason;
        EXPECT_TRUE(b.needs_compile);
        ASSERT_EQ(b.ranked.size(), 3u);
        EXPECT_EQ(b.ranked[0].kind, db::AnswerKind::Derived);
        EXPECT_EQ(b.ranked[1].from_shape, far.key.shape);
        EXPECT_NEAR(b.ranked[1].measured_ratio, at(far, 2.1), 1e-9);
        EXPECT_EQ(b.ranked[2].from_shape, near.key.shape);
        EXPECT_EQ(lookup->kernel(request("matmul", shape))->digest(), far.code.digest);
    }
    // The threshold is the lookup's to set: at 2.9 the far kernel (2.1 carried: 2.82) answers
    // outright again, at 0 no measurement decides (what opgen_choice_bench times as the model's
    // answer); a negative one is refused.
    {
        auto lookup = db::open_kernel_lookup(path_);
        auto extension = std::make_shared<RefitFirstExtension>([&](const std::string &s) { return marked(s) ? 1.0 : 2.0; });
        lookup->set_extension(extension);
        lookup->set_measured_good_enough(2.9);
        db::LookupAnswer c = lookup->find(request("matmul", shape));
        ASSERT_EQ(c.kind, db::AnswerKind::Generic) << c.reason;
        EXPECT_EQ(c.from_shape, far.key.shape);
        lookup->set_measured_good_enough(0);
        EXPECT_EQ(lookup->find(request("matmul", shape)).kind, db::AnswerKind::Derived);
        EXPECT_THROW(lookup->set_measured_good_enough(-1), std::invalid_argument);
        EXPECT_THROW(lookup->set_measured_good_enough(std::nan("")), std::invalid_argument);
    }
}

// A softmax whose row tile is the whole row at the tuned shape (s12's n:4096 at N=4096; here n:100
// from the tuned M=16,N=100): `db compile --generic` builds its code and the cache serves it at
// rows much narrower than the tile (where the tile is clamped to the row) and wider, each matching
// the definition. (GenericCode.AWholeRowTileStopsAtTheEndOfANarrowerRow checks that the guarded
// loops stop at the row's end.)
TEST_F(GenericKernelTest, ServesASoftmaxWhoseRowTileIsWiderThanTheRows) {
    raw_sql(path_, "DELETE FROM generic_code WHERE op_name = 'softmax'");
    raw_sql(path_, "DELETE FROM generic_timings WHERE op_name = 'softmax'");
    raw_sql(path_, "UPDATE kernels SET schedule_json = '{\"axes\":[{\"reg\":32,\"tile\":100,\"var\":\"n\"},"
                   "{\"reg\":1,\"tile\":1,\"var\":\"m\"}],\"fast_math\":true,\"outer_order\":[\"n\",\"m\"],"
                   "\"packed\":[],\"parallel_loops\":0,\"reduce\":[],\"stages\":[{\"at\":\"tile\",\"lanes\":1,"
                   "\"tensor\":\"rmax\"},{\"at\":\"tile\",\"lanes\":1,\"tensor\":\"ex\"},{\"at\":\"tile\","
                   "\"lanes\":1,\"tensor\":\"rsum\"}],\"unroll\":true,\"vector_width\":16}' "
                   "WHERE op_name = 'softmax'");
    CommandRun r = run_opgen("db compile --generic --op softmax --db g.db", dir_);
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    EXPECT_NE(raw_sql(path_, "SELECT schedule_json FROM generic_code WHERE op_name = 'softmax'").find("\"tile\":100,"),
              std::string::npos);
    auto lookup = db::open_kernel_lookup(path_);
    for (auto [M, N] : {std::pair{3, 17}, std::pair{2, 1}, std::pair{5, 99}, std::pair{3, 1000}}) {
        std::string shape = "M=" + std::to_string(M) + ",N=" + std::to_string(N);
        std::string why;
        std::shared_ptr<const db::LoadedKernel> k = lookup->kernel(request("softmax", shape), &why);
        ASSERT_TRUE(k) << shape << ": " << why;
        EXPECT_TRUE(k->generic());
        std::vector<float> x = ramp(size_t(M * N), 11, 5), y(size_t(M * N), -1.f);
        void *pointers[] = {x.data(), y.data()};
        ASSERT_EQ(k->call(pointers, 2), 0) << shape;
        EXPECT_LT(worst(y, naive_softmax(x, M, N)), 1e-5) << shape;
    }
}

// A generic kernel keeps its source's register tile, and its accumulators cover the whole tile at
// a ragged edge: on a shape narrower than the tile along its axis it is not offered while another
// generic kernel that fits serves the shape, however well it was measured; where it fits it is
// ranked as before, and where no row fits every row is offered again. Without an extension the
// lookup knows no extents, and the measured ranking alone decides.
TEST_F(GenericKernelTest, DoesNotOfferAKernelWhoseRegisterTileIsWiderThanTheShape) {
    drop_timings();
    db::GenericCodeRecord far, near;
    add_far_copy(near, far);
    set_register_tile(far, "m", 64);
    time_rows(near, 1.4, far, 1.05);  // the wide row measured better
    auto extension = std::make_shared<RankingExtension>([](const std::string &) { return 1.0; });
    {
        auto lookup = db::open_kernel_lookup(path_);
        lookup->set_extension(extension);
        // M=20 < 64: the near row serves and answers, alone.
        std::shared_ptr<const db::LoadedKernel> k = lookup->kernel(request("matmul", "M=20,N=50,K=30"));
        ASSERT_TRUE(k);
        EXPECT_EQ(k->digest(), near.code.digest);
        EXPECT_LT(run_matmul(*lookup, 20, 50, 30), 1e-6);
        db::LookupAnswer a = lookup->find(request("matmul", "M=20,N=50,K=30"));
        ASSERT_EQ(a.kind, db::AnswerKind::Generic) << a.reason;
        EXPECT_EQ(a.from_shape, near.key.shape);
        ASSERT_EQ(a.ranked.size(), 1u);
        EXPECT_NEAR(a.ranked[0].measured_ratio, carried(near, 1.4, near.key.shape, "M=20,N=50,K=30"), 1e-9);
        // M=70 >= 64: both fit, the better measured wide row serves.
        EXPECT_EQ(lookup->kernel(request("matmul", "M=70,N=50,K=30"))->digest(), far.code.digest);
        db::LookupAnswer b = lookup->find(request("matmul", "M=70,N=50,K=30"));
        EXPECT_EQ(b.from_shape, far.key.shape);
        EXPECT_EQ(b.ranked.size(), 2u);
        EXPECT_LT(run_matmul(*lookup, 70, 50, 30), 1e-6);
    }
    {
        auto plain = db::open_kernel_lookup(path_);  // no extension: no extents known
        EXPECT_EQ(plain->kernel(request("matmul", "M=20,N=50,K=30"))->digest(), far.code.digest);
    }
    // Both rows wider than M=20: both offered, the better measured serves.
    set_register_tile(near, "m", 32);
    time_rows(near, 1.4, far, 1.05);
    auto lookup = db::open_kernel_lookup(path_);
    lookup->set_extension(extension);
    EXPECT_EQ(lookup->kernel(request("matmul", "M=20,N=50,K=30"))->digest(), far.code.digest);
    db::LookupAnswer c = lookup->find(request("matmul", "M=20,N=50,K=30"));
    EXPECT_EQ(c.from_shape, far.key.shape);
    EXPECT_EQ(c.ranked.size(), 2u);
    // Between the two tiles (32 <= M=40 < 64) the narrower one, measured worse, serves.
    EXPECT_EQ(lookup->kernel(request("matmul", "M=40,N=50,K=30"))->digest(), near.code.digest);
}

// A ratio measured at a tuned shape describes the kernel there, ragged register tiles included:
// carried to the request by the work the tiles waste at each shape, a kernel measured worse where
// its tile was ragged ranks first where its tile divides the shape, and last where it is ragged
// again. kernel() needs no extension for it (the output's dims come from the row's own
// signature); find() lists the ranking when an extension resolves the shape.
TEST_F(GenericKernelTest, CarriesMeasuredRatiosByTheRegisterTilesOverwork) {
    drop_timings();
    db::GenericCodeRecord far, near;
    add_far_copy(near, far);
    set_register_tile(far, "m", 16);  // 32 rows for near's tuned M=24, where near's 8 divide it
    time_rows(near, 1.2, far, 1.3);   // near measured better
    EXPECT_EQ(db::open_kernel_lookup(path_)->kernel(request("matmul", "M=32,N=64,K=30"))->digest(), far.code.digest);
    auto lookup = db::open_kernel_lookup(path_);
    lookup->set_extension(std::make_shared<RankingExtension>([](const std::string &) { return 1.0; }));
    // M=32: far's tile divides it (0.975 x 64/56 against near's 1.2 x 64/56).
    std::shared_ptr<const db::LoadedKernel> k = lookup->kernel(request("matmul", "M=32,N=64,K=30"));
    ASSERT_TRUE(k);
    EXPECT_EQ(k->digest(), far.code.digest);
    db::LookupAnswer a = lookup->find(request("matmul", "M=32,N=64,K=30"));
    ASSERT_EQ(a.ranked.size(), 2u);
    EXPECT_NEAR(a.ranked[0].measured_ratio, 1.3 * (24.0 / 32) * (56.0 / 64), 1e-9);
    EXPECT_NEAR(a.ranked[1].measured_ratio, 1.2 * (56.0 / 64), 1e-9);
    EXPECT_LT(run_matmul(*lookup, 32, 64, 30), 1e-6);
    // M=17: far computes 32 rows of it, near 24.
    EXPECT_EQ(lookup->kernel(request("matmul", "M=17,N=64,K=30"))->digest(), near.code.digest);
    EXPECT_LT(run_matmul(*lookup, 17, 64, 30), 1e-6);
}

// Only the chosen row's code is hashed before it is loaded: the best-ranked generic kernel whose
// code was changed behind the cache's back (its digest no longer matches) is refused when chosen,
// never mapped, and the next in the ranking serves the shape; with no other row left, kernel()
// raises the refusal.
TEST_F(GenericKernelTest, ServesTheNextRankedKernelWhenTheChosenCodeIsRefused) {
    drop_timings();
    db::GenericCodeRecord far, near;
    add_far_copy(near, far);
    time_rows(near, 1.5, far, 1.05);  // the far row ranks first
    // One bit of the far row's code flipped; its stored digest kept.
    auto flip_bit = [&](const std::string &shape) {
        std::vector<unsigned char> bytes = near.code.bytes;
        bytes[bytes.size() / 2] ^= 0x01;
        sqlite3 *db = nullptr;
        sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
        sqlite3_stmt *s = nullptr;
        sqlite3_prepare_v2(db, "UPDATE generic_code SET bytes = ?1 WHERE op_name = 'matmul' AND shape = ?2", -1, &s,
                           nullptr);
        sqlite3_bind_blob(s, 1, bytes.data(), int(bytes.size()), SQLITE_TRANSIENT);
        sqlite3_bind_text(s, 2, shape.c_str(), -1, SQLITE_TRANSIENT);
        int rc = sqlite3_step(s);
        int changed = sqlite3_changes(db);
        sqlite3_finalize(s);
        sqlite3_close_v2(db);
        ASSERT_EQ(rc, SQLITE_DONE);
        ASSERT_EQ(changed, 1);
    };
    flip_bit(far.key.shape);
    {
        int mapped = mapped_kernel_files();
        auto lookup = db::open_kernel_lookup(path_);
        db::LookupAnswer a = lookup->find(request("matmul", "M=20,N=50,K=30"));
        std::shared_ptr<const db::LoadedKernel> k = lookup->kernel(request("matmul", "M=20,N=50,K=30"));
        ASSERT_TRUE(k);
        EXPECT_EQ(mapped_kernel_files(), mapped + 1);  // the near row's code alone
        EXPECT_LT(run_matmul(*lookup, 20, 50, 30), 1e-6);
        EXPECT_EQ(a.kind, db::AnswerKind::Generic) << a.reason;
        EXPECT_EQ(a.from_shape, near.key.shape);  // find() answers with the code kernel() serves
    }
    flip_bit(near.key.shape);
    std::string why = refusal();
    EXPECT_NE(why.find("refused: its digest does not match"), std::string::npos) << why;
}

}  // namespace
}  // namespace opgen::test
