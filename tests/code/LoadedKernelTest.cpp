// Kernels straight from the cache: the lookup library (this binary links only opgen_cache, no
// Halide compiler) loads a tuned matmul's code and runs it, checked against a naive loop, through
// the C++ and the C API; the kernel is loaded once and kept. The fault suite: tampered, truncated,
// foreign-target, foreign-machine, other-ABI and missing-CPU-feature code is refused with one
// clear reason and never mapped. `opgen db compile` fills code a cache lacks.
#include <HalideRuntime.h>

#include <gtest/gtest.h>

#include "runtime/CodeLoader.h"
#include "runtime/HostCpu.h"
#include "runtime/Lookup.h"
#include "runtime/opgen_cache.h"
#include "tests/code/CodeTestSupport.h"

namespace opgen::test {
namespace {

class LoadedKernelTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("opgen-code-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                "-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        path_ = copy_tuned_cache((dir_ / "k.db").string());
    }
    void TearDown() override { fs::remove_all(dir_); }

    db::LookupRequest request() const {
        db::LookupRequest r;
        r.op_name = "matmul";
        r.shape = kMatmulShape;
        r.target = tuned_target(path_);
        return r;
    }

    // The DbError of loading the kernel in a fresh lookup; fails the test when it loads.
    std::string refusal() const {
        int mapped = mapped_kernel_files();
        auto lookup = db::open_kernel_lookup(path_);
        try {
            lookup->kernel(request());
        } catch (const db::DbError &e) {
            EXPECT_EQ(mapped_kernel_files(), mapped) << "refused code was mapped";
            return e.what();
        }
        ADD_FAILURE() << "the kernel loaded";
        return "";
    }

    fs::path dir_;
    std::string path_;
};

TEST_F(LoadedKernelTest, RunsTheCachedKernelAndKeepsIt) {
    auto lookup = db::open_kernel_lookup(path_);
    int mapped = mapped_kernel_files();
    std::shared_ptr<const db::LoadedKernel> kernel = lookup->kernel(request());
    ASSERT_TRUE(kernel);
    EXPECT_EQ(mapped_kernel_files(), mapped + 1);
    ASSERT_EQ(kernel->arguments().size(), 3u);
    EXPECT_EQ(kernel->arguments()[0].dims, (std::vector<int64_t>{kM, kK}));
    EXPECT_EQ(kernel->arguments()[2].dims, (std::vector<int64_t>{kM, kN}));
    EXPECT_TRUE(kernel->arguments()[2].is_output);

    MatmulData data;
    void *pointers[] = {data.a.data(), data.b.data(), data.c.data()};
    std::string error;
    ASSERT_EQ(kernel->call(pointers, 3, &error), 0) << error;
    EXPECT_EQ(data.max_error(), 0.0);

    // Asked again, in another spelling of the shape: the same kernel, nothing loaded.
    db::LookupRequest again = request();
    again.shape = "K=40,N=56,M=24";
    EXPECT_EQ(lookup->kernel(again).get(), kernel.get());
    EXPECT_EQ(lookup->kernel(request()).get(), kernel.get());
    EXPECT_EQ(mapped_kernel_files(), mapped + 1);

    // The kernel outlives the lookup that loaded it.
    lookup.reset();
    std::fill(data.c.begin(), data.c.end(), -1.0f);
    ASSERT_EQ(kernel->call(pointers, 3, &error), 0) << error;
    EXPECT_EQ(data.max_error(), 0.0);
}

TEST_F(LoadedKernelTest, LoadsSeveralKernelsSideBySide) {
    auto lookup = db::open_kernel_lookup(path_);
    std::shared_ptr<const db::LoadedKernel> matmul = lookup->kernel(request());
    db::LookupRequest other = request();
    other.op_name = "softmax";
    other.shape = kSoftmaxShape;
    std::shared_ptr<const db::LoadedKernel> softmax = lookup->kernel(other);
    ASSERT_TRUE(matmul && softmax);
    // Each is its own code (the dynamic loader knows libraries by path: a reused /proc/self/fd
    // name once handed the second load the first library).
    EXPECT_EQ(softmax->function(), "opgen_softmax");
    ASSERT_EQ(softmax->arguments().size(), 2u);
    std::vector<float> x(kSoftmaxM * kSoftmaxN), y(x.size(), -1.0f);
    for (size_t i = 0; i < x.size(); i++) x[i] = float(int(i % 11) - 5);
    void *args[] = {x.data(), y.data()};
    std::string error;
    ASSERT_EQ(softmax->call(args, 2, &error), 0) << error;
    for (int m = 0; m < kSoftmaxM; m++) {
        double top = -1e30, sum = 0;
        for (int n = 0; n < kSoftmaxN; n++) top = std::max(top, double(x[m * kSoftmaxN + n]));
        for (int n = 0; n < kSoftmaxN; n++) sum += std::exp(x[m * kSoftmaxN + n] - top);
        for (int n = 0; n < kSoftmaxN; n++) {
            double want = std::exp(x[m * kSoftmaxN + n] - top) / sum;
            ASSERT_NEAR(y[m * kSoftmaxN + n], want, 1e-6 * std::max(1.0, want)) << m << "," << n;
        }
    }
    MatmulData data;
    void *pointers[] = {data.a.data(), data.b.data(), data.c.data()};
    ASSERT_EQ(matmul->call(pointers, 3, &error), 0) << error;
    EXPECT_EQ(data.max_error(), 0.0);
}

TEST_F(LoadedKernelTest, TakesHalideBuffersAndRefusesMismatchedOnes) {
    std::shared_ptr<const db::LoadedKernel> kernel = db::open_kernel_lookup(path_)->kernel(request());
    ASSERT_TRUE(kernel);
    MatmulData data;
    // Halide's order: dimension 0 innermost.
    halide_dimension_t a_dims[] = {{0, kK, 1, 0}, {0, kM, kK, 0}};
    halide_dimension_t b_dims[] = {{0, kN, 1, 0}, {0, kK, kN, 0}};
    halide_dimension_t c_dims[] = {{0, kN, 1, 0}, {0, kM, kN, 0}};
    auto buffer = [](std::vector<float> &v, halide_dimension_t *dims) {
        halide_buffer_t b{};
        b.host = reinterpret_cast<uint8_t *>(v.data());
        b.type = halide_type_t(halide_type_float, 32, 1);
        b.dimensions = 2;
        b.dim = dims;
        return b;
    };
    halide_buffer_t a = buffer(data.a, a_dims), b = buffer(data.b, b_dims), c = buffer(data.c, c_dims);
    halide_buffer_t *buffers[] = {&a, &b, &c};
    std::string error;
    ASSERT_EQ(kernel->call(buffers, 3, &error), 0) << error;
    EXPECT_EQ(data.max_error(), 0.0);

    c_dims[1].extent = kM + 1;
    EXPECT_EQ(kernel->call(buffers, 3, &error), -1);
    EXPECT_NE(error.find("buffer 'C' has extent 25 in dimension 1, not 24"), std::string::npos) << error;
    c_dims[1].extent = kM;
    c.type = halide_type_t(halide_type_int, 32, 1);
    EXPECT_EQ(kernel->call(buffers, 3, &error), -1);
    EXPECT_NE(error.find("is not of type f32"), std::string::npos) << error;
    EXPECT_EQ(kernel->call(buffers, 2, &error), -1);
    EXPECT_NE(error.find("takes 3 buffers, got 2"), std::string::npos) << error;
    void *missing[] = {data.a.data(), nullptr, data.c.data()};
    EXPECT_EQ(kernel->call(missing, 3, &error), -1);
    EXPECT_NE(error.find("buffer 'B' is NULL"), std::string::npos) << error;
}

TEST_F(LoadedKernelTest, CApiFindsCallsAndKeepsTheKernel) {
    opgen_cache *cache = nullptr;
    char *open_error = nullptr;
    ASSERT_EQ(opgen_cache_open(path_.c_str(), &cache, &open_error), 0) << open_error;
    std::string target = tuned_target(path_);
    const opgen_cache_kernel *kernel = nullptr;
    ASSERT_EQ(opgen_cache_kernel_find(cache, "matmul", kMatmulShape, nullptr, target.c_str(), &kernel), 0)
        << opgen_cache_error(cache);
    ASSERT_EQ(opgen_cache_kernel_arguments(kernel), 3);
    EXPECT_STREQ(opgen_cache_kernel_argument_name(kernel, 1), "B");
    EXPECT_STREQ(opgen_cache_kernel_argument_dtype(kernel, 1), "f32");
    long long dims[4] = {0, 0, 0, 0};
    EXPECT_EQ(opgen_cache_kernel_argument_dims(kernel, 1, dims, 4), 2);
    EXPECT_EQ(dims[0], kK);
    EXPECT_EQ(dims[1], kN);
    EXPECT_EQ(opgen_cache_kernel_argument_name(kernel, 3), nullptr);

    MatmulData data;
    void *pointers[] = {data.a.data(), data.b.data(), data.c.data()};
    ASSERT_EQ(opgen_cache_kernel_call(kernel, pointers, 3), 0);
    EXPECT_EQ(data.max_error(), 0.0);
    EXPECT_EQ(opgen_cache_kernel_call(kernel, pointers, 2), -1);

    const opgen_cache_kernel *again = nullptr;
    ASSERT_EQ(opgen_cache_kernel_find(cache, "matmul", "K=40,M=24,N=56", "f32", target.c_str(), &again), 0);
    EXPECT_EQ(again, kernel);
    EXPECT_EQ(opgen_cache_kernel_find(cache, "matmul", "M=25,N=56,K=40", nullptr, target.c_str(), &again), -1);
    EXPECT_NE(std::string(opgen_cache_error(cache)).find("no exact kernel"), std::string::npos);
    opgen_cache_close(cache);
}

TEST_F(LoadedKernelTest, RefusesTamperedCode) {
    edit_code(path_, [](db::KernelCode &c) { c.bytes[c.bytes.size() / 2] ^= 0x01; }, false);
    EXPECT_NE(refusal().find("refused: its digest does not match"), std::string::npos) << refusal();
}

TEST_F(LoadedKernelTest, RefusesTruncatedCode) {
    edit_code(path_, [](db::KernelCode &c) { c.bytes.resize(c.bytes.size() - 100); }, false);
    std::string why = refusal();
    EXPECT_NE(why.find("refused: its code is truncated or padded"), std::string::npos) << why;
    // Truncated with its size and digest rewritten to match: the ELF tables no longer fit.
    edit_code(path_, [](db::KernelCode &c) { c.bytes.resize(512); c.size = 512; }, true);
    why = refusal();
    EXPECT_NE(why.find("lie outside its 512 bytes"), std::string::npos) << why;
}

TEST_F(LoadedKernelTest, RefusesCodeForAnotherTargetMachineOrAbi) {
    edit_code(path_, [](db::KernelCode &c) { c.halide_target = "arm-64-linux-no_runtime"; }, true);
    std::string why = refusal();
    EXPECT_NE(why.find("built for target 'arm-64-linux-no_runtime', not for this host (x86-64-linux)"),
              std::string::npos)
        << why;
    path_ = copy_tuned_cache(path_);
    edit_code(path_, [](db::KernelCode &c) { c.bytes[18] = 183; /* e_machine: EM_AARCH64 */ }, true);
    why = refusal();
    EXPECT_NE(why.find("ELF code for another machine (class 2, machine 183)"), std::string::npos) << why;
    path_ = copy_tuned_cache(path_);
    edit_code(path_, [](db::KernelCode &c) { c.abi_version = db::kKernelCodeAbi + 1; }, true);
    why = refusal();
    EXPECT_NE(why.find("ABI version 2, this build loads version 1"), std::string::npos) << why;
}

TEST_F(LoadedKernelTest, RefusesCodeNeedingACpuFeatureTheHostLacks) {
    std::string lacking;
    for (const std::string &f : db::checkable_cpu_features()) {
        if (!db::host_has_cpu_feature(f)) lacking = f;  // fma4 (AMD's, dropped) on current CPUs
    }
    ASSERT_FALSE(lacking.empty()) << "this host has every feature the loader checks";
    edit_code(path_, [&](db::KernelCode &c) { c.cpu_features += "," + lacking; }, true);
    std::string why = refusal();
    EXPECT_NE(why.find("needs CPU features this host lacks: " + lacking), std::string::npos) << why;
    path_ = copy_tuned_cache(path_);
    edit_code(path_, [&](db::KernelCode &c) { c.cpu_features = "sse41,avx9000"; }, true);
    why = refusal();
    EXPECT_NE(why.find("lacks: avx9000"), std::string::npos) << why;
}

TEST_F(LoadedKernelTest, DbCompileFillsMissingCode) {
    raw_sql(path_, "DELETE FROM kernel_code");
    std::string why;
    EXPECT_FALSE(db::open_kernel_lookup(path_)->kernel(request(), &why));
    EXPECT_NE(why.find("has no compiled code; run 'opgen db compile'"), std::string::npos) << why;

    CommandRun r = run_opgen("db compile --db k.db", dir_);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("compiled the code of 2 kernel(s)"), std::string::npos) << r.out;
    std::shared_ptr<const db::LoadedKernel> kernel = db::open_kernel_lookup(path_)->kernel(request());
    ASSERT_TRUE(kernel);
    MatmulData data;
    void *pointers[] = {data.a.data(), data.b.data(), data.c.data()};
    ASSERT_EQ(kernel->call(pointers, 3), 0);
    EXPECT_EQ(data.max_error(), 0.0);

    CommandRun again = run_opgen("db compile --db k.db", dir_);
    EXPECT_NE(again.out.find("compiled the code of 0 kernel(s)"), std::string::npos) << again.out;
    std::ofstream(dir_ / "notes.db") << "plain text, not a database at all";
    CommandRun bad = run_opgen("db compile --db notes.db", dir_);
    EXPECT_NE(bad.status, 0);
    EXPECT_NE(bad.err.find("error: "), std::string::npos) << bad.err;
    EXPECT_NE(bad.err.find("notes.db"), std::string::npos) << bad.err;
}

TEST_F(LoadedKernelTest, LibraryOfNoTunedKernelIsOneErrorLine) {
    std::ofstream(dir_ / "m.json") << R"({"entries": [{"op": "matmul", "shapes": ["M=3,N=5,K=7"]}]})";
    CommandRun r = run_opgen("library m.json -o out --db k.db --threads 1", dir_);
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(r.err, "error: manifest 'm.json': no task has a tuned kernel in the cache; run 'opgen batch' first\n");
    EXPECT_FALSE(fs::exists(dir_ / "out"));
}

}  // namespace
}  // namespace opgen::test
