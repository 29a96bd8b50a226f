// Drives the real opgen command: tune into a real SQLite file, query it, list ops from a user
// folder, and check that every bad input ends in one `error: ...` line, a non-zero exit and an
// untouched database.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct CommandRun {
    int status = -1;
    std::string out, err;
};

// Runs the opgen command with `args` (a shell-quoted string) in `dir`.
CommandRun opgen(const std::string &args, const fs::path &dir) {
    fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
    std::string cmd = "cd '" + dir.string() + "' && '" + std::string(OPGEN_EXE) + "' " + args + " >'" + out.string() +
                      "' 2>'" + err.string() + "'";
    int rc = std::system(cmd.c_str());
    CommandRun r;
    r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    auto slurp = [](const fs::path &p) {
        std::ifstream in(p);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    };
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

int64_t count_rows(const fs::path &db, const char *table) {
    sqlite3 *h = nullptr;
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return -1;
    sqlite3_stmt *st = nullptr;
    int64_t n = -1;
    std::string sql = std::string("SELECT COUNT(*) FROM ") + table;
    if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return n;
}

// The text of file `f` (empty when missing).
std::string read_text(const fs::path &f) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Rebuilds kernel `name` from the generator source `opgen emit` wrote in dir/kernel, with Halide's
// own generator driver, as a user would, into dir/kernel/regen; "" on success, else the log.
std::string rebuild_generator(const fs::path &dir, const std::string &name) {
    std::string regen = "cd '" + dir.string() + "/kernel' && mkdir -p regen && c++ -std=c++17 -O0 -I '" +
                        std::string(OPGEN_HALIDE_INCLUDE) + "' " + name + "_generator.cpp '" + std::string(OPGEN_GENGEN) +
                        "' '" + std::string(OPGEN_HALIDE_LIB) + "' -lpthread -ldl -o gen 2> gen.txt && ./gen -g " + name +
                        " -o regen -e static_library,h target=host 2>> gen.txt";
    if (std::system(regen.c_str()) == 0) return "";
    return "generator rebuild failed: " + read_text(dir / "kernel" / "gen.txt");
}

// Builds dir/main.cpp against the static library `lib` (with its header beside it) and runs it;
// its stdout, or the build log when it fails to build or run.
std::string build_and_run(const fs::path &dir, const std::string &include, const std::string &lib) {
    std::string build = "cd '" + dir.string() + "' && c++ -std=c++17 -O1 -I " + include +
                        " -I /usr/include/halide14 main.cpp " + lib + " -lpthread -ldl -o prog 2> build.txt && ./prog > run.txt";
    int rc = std::system(build.c_str());
    std::string out = read_text(dir / "run.txt");
    return rc == 0 ? out : read_text(dir / "build.txt") + out;
}

class Command : public ::testing::Test {
protected:
    fs::path dir;
    void SetUp() override {
        dir = fs::temp_directory_path() / ("opgen-e2e-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }

    // One line, starting with "error: ", non-zero exit.
    void expect_error(const CommandRun &r, const std::string &fragment) {
        EXPECT_NE(r.status, 0);
        EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_NE(r.err.find(fragment), std::string::npos) << "missing '" << fragment << "' in: " << r.err;
    }
};

TEST_F(Command, TunesVerifiesStoresAndQueries) {
    CommandRun t = opgen("tune --op matmul --shape M=64,N=48,K=40 --trials 6 --threads 1 --db k.db --quiet --json", dir);
    ASSERT_EQ(t.status, 0) << t.err;
    auto tuned = nlohmann::json::parse(t.out);
    EXPECT_EQ(tuned["answer"], "tuned");
    EXPECT_TRUE(tuned["verified"].get<bool>());
    EXPECT_GT(tuned["gflops"].get<double>(), 0.0);
    EXPECT_NE(tuned["schedule_source"].get<std::string>().find(".compute_at("), std::string::npos);
    EXPECT_EQ(count_rows(dir / "k.db", "kernels"), 1);
    EXPECT_EQ(count_rows(dir / "k.db", "measurements"), 6);
    // One tuning run, which every measurement names; the op's text and the target are described.
    EXPECT_EQ(count_rows(dir / "k.db", "tuning_runs"), 1);
    EXPECT_EQ(count_rows(dir / "k.db", "measurements WHERE run_id = (SELECT id FROM tuning_runs)"), 6);
    EXPECT_EQ(count_rows(dir / "k.db", "tuning_runs WHERE status = 'done' AND trials = 6 AND finished_at != ''"), 1);
    EXPECT_EQ(count_rows(dir / "k.db", "ops WHERE source LIKE '%op matmul%'"), 1);
    EXPECT_EQ(count_rows(dir / "k.db", "targets WHERE fingerprint != ''"), 1);

    CommandRun stats = opgen("db stats --db k.db --json", dir);
    ASSERT_EQ(stats.status, 0) << stats.err;
    auto counted = nlohmann::json::parse(stats.out);
    EXPECT_EQ(counted["tuning_runs"], 1);
    EXPECT_EQ(counted["by_target_and_op"][0]["tuning_runs"], 1);
    CommandRun exported = opgen("db export --db k.db --format json --measurements", dir);
    ASSERT_EQ(exported.status, 0) << exported.err;
    auto doc = nlohmann::json::parse(exported.out);
    ASSERT_EQ(doc["tuning_runs"].size(), 1u);
    EXPECT_EQ(doc["tuning_runs"][0]["options"]["trials"], 6);
    EXPECT_EQ(doc["measurements"][0]["run_id"], doc["tuning_runs"][0]["id"]);
    EXPECT_NE(doc["ops"][0]["source"].get<std::string>().find("op matmul"), std::string::npos);

    CommandRun q = opgen("query --op matmul --shape K=40,N=48,M=64 --threads 1 --db k.db", dir);
    ASSERT_EQ(q.status, 0) << q.err;
    auto j = nlohmann::json::parse(q.out);
    EXPECT_EQ(j["answer"], "exact");
    EXPECT_EQ(j["shape"], "K=40,M=64,N=48");
    EXPECT_EQ(j["schedule"], tuned["schedule"]);
    EXPECT_GT(j["speedup_over_default"].get<double>(), 0.0);

    // The same key again is served from the cache, not re-tuned.
    CommandRun again = opgen("tune --op matmul --shape M=64,N=48,K=40 --trials 6 --threads 1 --db k.db --quiet --json", dir);
    ASSERT_EQ(again.status, 0) << again.err;
    EXPECT_EQ(nlohmann::json::parse(again.out)["answer"], "cached");
    EXPECT_EQ(count_rows(dir / "k.db", "measurements"), 6);

    // Another thread count is another target: no exact hit, said clearly...
    CommandRun miss = opgen("query --op matmul --shape M=64,N=48,K=40 --threads 2 --db k.db --exact", dir);
    expect_error(miss, "no kernel for op 'matmul'");
    // ...and without --exact the cost model's pick over the legal space, marked as such (no tuned
    // shape on that target to derive from).
    CommandRun other = opgen("query --op matmul --shape M=64,N=48,K=40 --threads 2 --db k.db", dir);
    ASSERT_EQ(other.status, 0) << other.err;
    EXPECT_EQ(nlohmann::json::parse(other.out)["answer"], "predicted") << other.out;
}

TEST_F(Command, UserOpFolderIsListedTunedAndQueried) {
    fs::create_directories(dir / "myops");
    std::ofstream(dir / "myops" / "scale_add.op") << "# y = 2 x + b, a user op written only as a file\n"
                                                     "op scale_add\nparam N, C\n"
                                                     "input X: f32[N, C]\ninput B: f32[C]\noutput Y: f32[N, C]\n"
                                                     "Y[n, c] = 2.0 * X[n, c] + B[c]\n";
    CommandRun l = opgen("ops list --ops-dir myops", dir);
    ASSERT_EQ(l.status, 0) << l.err;
    EXPECT_NE(l.out.find("scale_add"), std::string::npos);
    EXPECT_NE(l.out.find("matmul"), std::string::npos);
    CommandRun t = opgen("tune --op scale_add --shape N=33,C=70 --trials 4 --threads 1 --db u.db --ops-dir myops --quiet", dir);
    ASSERT_EQ(t.status, 0) << t.err;
    CommandRun q = opgen("query --op scale_add --shape N=33,C=70 --threads 1 --db u.db --ops-dir myops", dir);
    ASSERT_EQ(q.status, 0) << q.err;
    EXPECT_TRUE(nlohmann::json::parse(q.out)["verified"].get<bool>());
}

TEST_F(Command, BadInputsSayWhatIsWrongAndWriteNothing) {
    expect_error(opgen("tune --op nosuch --shape M=1 --db k.db", dir), "unknown op 'nosuch'");
    expect_error(opgen("tune --op matmul --shape M=0,N=2,K=3 --db k.db", dir), "M=0 must be positive");
    expect_error(opgen("tune --op matmul_u8s8_requant --shape M=4,N=8,K=10 --db k.db", dir),
                 "op 'matmul_u8s8_requant' at shape K=10,M=4,N=8: K=10 is not a multiple of 4");
    expect_error(opgen("tune --op matmul --shape M=2,N=2 --db k.db", dir), "missing parameter 'K'");
    expect_error(opgen("tune --op matmul --shape M=2,X=3,N=2,K=1 --db k.db", dir), "no parameter 'X'");
    expect_error(opgen("tune --op matmul --shape 'M=2,,N=3' --db k.db", dir), "empty entry");
    expect_error(opgen("tune --op matmul --shape M=two,N=2,K=2 --db k.db", dir), "is not an integer");
    expect_error(opgen("tune --op matmul --shape M=2000000,N=2000000,K=2 --db k.db", dir), "more than the limit");
    expect_error(opgen("tune --op matmul --shape M=8,N=8,K=8 --trials 0 --db k.db", dir), "--trials");
    expect_error(opgen("tune --op matmul --shape M=8,N=8,K=8 --bogus --db k.db", dir), "bogus");
    expect_error(opgen("tune --op matmul --shape M=8,N=8,K=8 --variants 1,x --db k.db", dir),
                 "--variants: 'x' is not a number");
    expect_error(opgen("tune --op matmul --shape M=8,N=8,K=8 --variants 1 --variant-keep 0 --db k.db", dir),
                 "--variant-keep");
    expect_error(opgen("tune --op matmul --shape M=8,N=8,K=8 --variants 1 --variant-search -1 --db k.db", dir),
                 "--variant-search");
    EXPECT_FALSE(fs::exists(dir / "k.db"));

    expect_error(opgen("tune --op matmul --shape M=8,N=8,K=8 --db missing/dir/k.db", dir), "does not exist");
    EXPECT_FALSE(fs::exists(dir / "missing"));

    std::ofstream(dir / "notes.db") << "these are not the tables you are looking for\n";
    expect_error(opgen("tune --op matmul --shape M=8,N=8,K=8 --db notes.db", dir), "not an opgen kernel cache");
    std::ifstream in(dir / "notes.db");
    std::string first;
    std::getline(in, first);
    EXPECT_EQ(first, "these are not the tables you are looking for");

    std::ofstream(dir / "bad.op") << "op bad\nparam N\ninput X: f32[N]\noutput Y: f32[N]\nY[i] = X[i, i]\n";
    expect_error(opgen("ops show bad --ops-dir .", dir), "bad.op:5:8: tensor 'X' has rank 1");
    expect_error(opgen("space --op matmul --shape M=8,N=8,K=8 --target nowhere", dir), "unknown target 'nowhere'");
}

// A runtime team's view: the emitted static library and header link into a plain C++ program
// that knows nothing of opgen or Halide's compiler, and compute the right numbers.
TEST_F(Command, EmittedStaticLibraryLinksIntoAStandaloneProgram) {
    CommandRun t = opgen("tune --op matmul --shape M=48,N=80,K=33 --trials 4 --threads 1 --db k.db --quiet", dir);
    ASSERT_EQ(t.status, 0) << t.err;
    CommandRun e = opgen("emit --op matmul --shape M=48,N=80,K=33 --threads 1 --db k.db --out kernel --name mm48", dir);
    ASSERT_EQ(e.status, 0) << e.err;
    for (const char *f : {"mm48.a", "mm48.h", "mm48.c", "mm48.stmt", "mm48_generator.cpp"}) {
        EXPECT_TRUE(fs::exists(dir / "kernel" / f)) << f;
    }
    std::ofstream(dir / "main.cpp") << R"(
#include "mm48.h"
#include "HalideBuffer.h"
#include <cmath>
#include <cstdio>
int main() {
    const int M = 48, N = 80, K = 33;
    Halide::Runtime::Buffer<float> A(K, M), B(N, K), C(N, M);  // innermost dimension first
    for (int m = 0; m < M; m++) for (int k = 0; k < K; k++) A(k, m) = float((m * 7 + k * 3) % 11) - 5.0f;
    for (int k = 0; k < K; k++) for (int n = 0; n < N; n++) B(n, k) = float((k * 5 + n) % 13) - 6.0f;
    if (mm48(A, B, C) != 0) { std::puts("call failed"); return 2; }
    for (int m = 0; m < M; m++) for (int n = 0; n < N; n++) {
        double want = 0;
        for (int k = 0; k < K; k++) want += double(A(k, m)) * double(B(n, k));
        if (std::fabs(C(n, m) - want) > 1e-3) { std::printf("mismatch at %d %d: %f vs %f\n", m, n, C(n, m), want); return 1; }
    }
    std::puts("ok");
    return 0;
}
)";
    EXPECT_EQ(build_and_run(dir, "kernel", "kernel/mm48.a"), "ok\n");

    // The generator source is self-contained: Halide's own generator driver rebuilds the kernel.
    EXPECT_EQ(rebuild_generator(dir, "mm48"), "");
    EXPECT_TRUE(fs::exists(dir / "kernel" / "regen" / "mm48.a"));

    // --generic: the shape-generic kernel of the same schedule (sizes symbolic: no constraint on
    // the tuned extents) beside the exact kernel's assembly, for comparing the two.
    CommandRun g = opgen("emit --op matmul --shape M=48,N=80,K=33 --threads 1 --db k.db --out gen --name mm48 --generic",
                         dir);
    ASSERT_EQ(g.status, 0) << g.err;
    for (const char *f : {"mm48_generic.stmt", "mm48_generic.s", "mm48.s"}) {
        EXPECT_GT(fs::file_size(dir / "gen" / f), 0u) << f;
    }
    auto text = [&](const fs::path &p) {
        std::ifstream in(p);
        return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    };
    const std::string pinned = "\"80\", 80)";  // the exact kernel's check that N is 80
    EXPECT_NE(text(dir / "kernel" / "mm48.stmt").find(pinned), std::string::npos);
    EXPECT_EQ(text(dir / "gen" / "mm48_generic.stmt").find(pinned), std::string::npos);
    EXPECT_NE(text(dir / "gen" / "mm48.s").find("vfmadd"), std::string::npos);
    expect_error(opgen("emit --op matmul --shape M=48,N=80,K=33 --out gen --generic --default-schedule", dir),
                 "excludes");

    // Emitting from a key that was never tuned says so and writes nothing.
    CommandRun miss = opgen("emit --op matmul --shape M=8,N=8,K=8 --threads 1 --db k.db --out other", dir);
    expect_error(miss, "tune it first");
    EXPECT_FALSE(fs::exists(dir / "other" / "matmul_kernel.a"));
}

// A row op's generator source rebuilds too: softmax's reductions run over `n`, which is also the
// output's index variable, and both are declared in one scope of the printed source.
TEST_F(Command, EmittedRowOpGeneratorRebuildsAndComputesSoftmax) {
    CommandRun t = opgen("tune --op softmax --shape M=6,N=40 --trials 3 --threads 1 --db k.db --quiet", dir);
    ASSERT_EQ(t.status, 0) << t.err;
    CommandRun e = opgen("emit --op softmax --shape M=6,N=40 --threads 1 --db k.db --out kernel --name sm", dir);
    ASSERT_EQ(e.status, 0) << e.err;
    ASSERT_EQ(rebuild_generator(dir, "sm"), "");
    std::ofstream(dir / "main.cpp") << R"(
#include "sm.h"
#include "HalideBuffer.h"
#include <cmath>
#include <cstdio>
int main() {
    const int M = 6, N = 40;
    Halide::Runtime::Buffer<float> X(N, M), Y(N, M);
    for (int m = 0; m < M; m++) for (int n = 0; n < N; n++) X(n, m) = float((m * 7 + n * 3) % 17) * 0.25f - 2.0f;
    if (sm(X, Y) != 0) { std::puts("call failed"); return 2; }
    for (int m = 0; m < M; m++) {
        double mx = -1e30, sum = 0;
        for (int n = 0; n < N; n++) mx = X(n, m) > mx ? X(n, m) : mx;
        for (int n = 0; n < N; n++) sum += std::exp(double(X(n, m)) - mx);
        for (int n = 0; n < N; n++) {
            double want = std::exp(double(X(n, m)) - mx) / sum;
            if (std::fabs(Y(n, m) - want) > 1e-5) { std::printf("mismatch at %d %d: %f vs %f\n", m, n, Y(n, m), want); return 1; }
        }
    }
    std::puts("ok");
    return 0;
}
)";
    EXPECT_EQ(build_and_run(dir, "kernel/regen", "kernel/regen/sm.a"), "ok\n");
}

// A square conv2d_nchw (N=1, C, H=W, F, a KxK window at `stride` and `pad`) emitted with the point in
// `point_json` as kernel `name`, its generator source rebuilt by Halide's own driver, and the rebuilt
// kernel run against a naive convolution: "ok\n", or what failed. `source`: the generator source.
std::string emit_rebuild_and_check_conv(const fs::path &dir, int C, int H, int F, int K, int stride, int pad,
                                        const std::string &point_json, const std::string &name, std::string &source) {
    std::ofstream(dir / "pt.json") << point_json;
    const std::string shape = "N=1,C=" + std::to_string(C) + ",H=" + std::to_string(H) + ",W=" + std::to_string(H) +
                              ",F=" + std::to_string(F) + ",KH=" + std::to_string(K) + ",KW=" + std::to_string(K) +
                              ",stride=" + std::to_string(stride) + ",pad=" + std::to_string(pad);
    CommandRun e = opgen("emit --op conv2d_nchw --shape " + shape + " --point pt.json --threads 1 --out kernel --name " + name,
                           dir);
    if (e.status != 0) return "emit failed: " + e.err;
    source = read_text(dir / "kernel" / (name + "_generator.cpp"));
    if (std::string log = rebuild_generator(dir, name); !log.empty()) return log;
    const int O = (H + 2 * pad - K) / stride + 1;
    std::ofstream(dir / "main.cpp") << "#include \"" << name << ".h\"\n"
                                      << "const int C = " << C << ", H = " << H << ", F = " << F << ", K = " << K
                                      << ", S = " << stride << ", P = " << pad << ", O = " << O << ";\n"
                                      << "#define KERNEL " << name << "\n"
                                      << R"(
#include "HalideBuffer.h"
#include <cmath>
#include <cstdio>
int main() {
    Halide::Runtime::Buffer<float> X(H, H, C, 1), Wt(K, K, C, F), Y(O, O, F, 1);  // innermost first
    for (int c = 0; c < C; c++) for (int y = 0; y < H; y++) for (int x = 0; x < H; x++)
        X(x, y, c, 0) = float((c * 7 + y * 3 + x) % 11) - 5.0f;
    for (int f = 0; f < F; f++) for (int c = 0; c < C; c++) for (int i = 0; i < K * K; i++)
        Wt(i % K, i / K, c, f) = float((f * 5 + c * 3 + i) % 13) - 6.0f;
    if (KERNEL(X, Wt, Y) != 0) { std::puts("call failed"); return 2; }
    for (int f = 0; f < F; f++) for (int y = 0; y < O; y++) for (int x = 0; x < O; x++) {
        double want = 0;
        for (int c = 0; c < C; c++) for (int ky = 0; ky < K; ky++) for (int kx = 0; kx < K; kx++) {
            int iy = y * S + ky - P, ix = x * S + kx - P;
            if (iy >= 0 && iy < H && ix >= 0 && ix < H) want += double(X(ix, iy, c, 0)) * Wt(kx, ky, c, f);
        }
        if (std::fabs(Y(x, y, f, 0) - want) > 1e-3) { std::printf("mismatch at %d %d %d\n", f, y, x); return 1; }
    }
    std::puts("ok");
    return 0;
}
)";
    return build_and_run(dir, "kernel/regen", "kernel/regen/" + name + ".a");
}

// A packed zero-padded input is read through its zero-exterior wrapper, and the printed panel must
// wrap that Func: "X.in(Y_acc)" named a buffer the reduction never calls, and Halide's generator
// driver stopped with "Cannot wrap X_im in Y_acc". The rebuilt kernel computes the padded 3x3.
TEST_F(Command, EmittedConvGeneratorWithPaddedPanelRebuildsAndComputes) {
    std::string source;
    EXPECT_EQ(emit_rebuild_and_check_conv(dir, 8, 6, 16, 3, 1, 1, R"({"axes": [{"var": "x", "tile": 6, "reg": 6},
        {"var": "y", "tile": 2, "reg": 1}, {"var": "f", "tile": 16, "reg": 4}, {"var": "n", "tile": 1, "reg": 1}],
        "reduce": [{"var": "rx", "block": 3}, {"var": "ry", "block": 3}, {"var": "c", "block": 8}],
        "outer_order": ["x", "y", "f", "n"], "parallel_loops": 0, "packed": ["X", "Wt"], "vector_width": 4})",
                                          "cv", source),
              "ok\n");
}

// A 1x1 convolution of stride 2 reads X through its gather (core/Gather.h), packed: the printed
// source defines X_gathered and packs it, the ragged rows of 6 rounded up to two vectors of 4, and
// the rebuilt kernel computes the strided convolution.
TEST_F(Command, EmittedStridedConvGeneratorGathersAndComputes) {
    std::string source;
    EXPECT_EQ(emit_rebuild_and_check_conv(dir, 8, 12, 16, 1, 2, 0, R"({"axes": [{"var": "x", "tile": 6, "reg": 6},
        {"var": "y", "tile": 6, "reg": 1}, {"var": "f", "tile": 16, "reg": 8}, {"var": "n", "tile": 1, "reg": 1}],
        "reduce": [{"var": "rx", "block": 1}, {"var": "ry", "block": 1}, {"var": "c", "block": 8}],
        "outer_order": ["x", "y", "f", "n"], "parallel_loops": 0, "packed": ["X"], "vector_width": 4})",
                                          "sc", source),
              "ok\n");
    EXPECT_NE(source.find("Func X_panel = X_gathered.in(Y_acc);"), std::string::npos) << source;
    EXPECT_NE(source.find("Y_acc.update().vectorize(x, 4, TailStrategy::RoundUp);"), std::string::npos) << source;
}

TEST_F(Command, HelpDescribesEveryCommand) {
    CommandRun h = opgen("--help", dir);
    EXPECT_EQ(h.status, 0);
    for (const char *c : {"tune", "query", "batch", "ops", "space", "target"}) {
        EXPECT_NE(h.out.find(c), std::string::npos) << c;
    }
    CommandRun th = opgen("tune --help", dir);
    EXPECT_EQ(th.status, 0);
    for (const char *o : {"--op", "--shape", "--trials", "--db", "--target", "--threads", "--seed"}) {
        EXPECT_NE(th.out.find(o), std::string::npos) << o;
    }
}

TEST_F(Command, SpacePrintsStagesGroupsAndSize) {
    CommandRun s = opgen("space --op matmul --shape M=4,N=8,K=8 --target toy --threads 1", dir);
    ASSERT_EQ(s.status, 0) << s.err;
    EXPECT_NE(s.out.find("A_L1"), std::string::npos);
    EXPECT_NE(s.out.find("C@REG"), std::string::npos);
    EXPECT_NE(s.out.find("legal space: 728 points (20 legal tilings of 48) of 1568"), std::string::npos) << s.out;
}

}  // namespace
