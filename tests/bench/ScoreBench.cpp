// opgen_score_bench: how fast the cost model scores a legal space (the goal: at least one
// million group-rows per second on this 2-core machine). Builds the legal space of one task,
// extracts the features of a seeded sample of its points, and times the model's predict over the
// whole batch, and the feature extraction, in interleaved rounds; prints medians and the spread.
//
//   opgen_score_bench [--model FILE] [--op matmul] [--shape M=1024,N=1024,K=1024] [--points 20000]
//                     [--rounds 9] [--threads 2]
// Without --model (and without a bundled model for the host) it trains a 100-round model on the
// roofline estimate of the sample, which has the same tree shape and cost as a real one.
#include "core/OpLibrary.h"
#include "tuner/Features.h"
#include "tuner/ModelStore.h"
#include "core/TilingSpace.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using namespace opgen;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"opgen_score_bench: cost-model scoring throughput (group-rows per second)"};
    std::string model_path, op = "matmul", shape_text = "M=1024,N=1024,K=1024", target_name = "host";
    size_t points = 20000;
    int rounds = 9, threads = 2;
    app.add_option("--model", model_path, "model file (default: the target's bundled model)");
    app.add_option("--op", op, "op whose legal space is scored");
    app.add_option("--shape", shape_text, "shape of the task");
    app.add_option("--target", target_name, "target name or JSON file");
    app.add_option("--points", points, "legal points scored per round")->check(CLI::Range(1, 10000000));
    app.add_option("--rounds", rounds, "timed rounds")->check(CLI::Range(1, 1000));
    app.add_option("--threads", threads, "threads of the kernels (features) and of xgboost")->check(CLI::Range(1, 256));
    CLI11_PARSE(app, argc, argv);
    try {
        ComputeDef def = OpLibrary::standard().load(op);
        BoundShape shape = bind_shape(def, shape_text);
        Target target = load_target(target_name);
        opgen::TilingSpace space = opgen::make_tiling_space(def, shape, target, threads);
        std::vector<SchedulePoint> sample = space.sample(points, 1);

        auto extract = [&] { return tuner::batch_features(def, shape, target, space, sample, threads, threads); };
        costmodel::FeatureBatch batch = extract();

        std::unique_ptr<costmodel::CostModel> model;
        std::string source;
        if (!model_path.empty()) {
            model = tuner::load_model_file(model_path), source = model_path;
        } else if ((model = tuner::load_default_model(target))) {
            source = tuner::default_model_path(target);
        } else {
            costmodel::TrainingSet set;
            set.batch = batch;
            for (const auto &p : sample) {
                set.task.push_back(0);
                set.throughput.push_back(1.0 / tuner::roofline_seconds(def, shape, target, space, p, threads));
            }
            costmodel::TrainOptions o;
            o.threads = threads;
            model = costmodel::make_xgboost_model(tuner::num_features());
            model->train(set, o);
            source = "trained here on the roofline estimate (100 rounds, depth 6)";
        }

        const double group_rows = double(batch.row_begin.back());
        std::vector<double> predict_s, extract_s;
        double checksum = 0;
        for (int r = 0; r < rounds; r++) {
            auto t0 = std::chrono::steady_clock::now();
            std::vector<double> scores = model->predict(batch);
            predict_s.push_back(seconds_since(t0));
            checksum += scores.front();
            t0 = std::chrono::steady_clock::now();
            costmodel::FeatureBatch again = extract();
            extract_s.push_back(seconds_since(t0));
            checksum += again.rows.front();
        }
        std::printf("task: %s %s on %s, legal space %zu, scored %zu points = %.0f group-rows (%.1f per point)\n",
                    op.c_str(), shape.canonical.c_str(), target.name.c_str(), size_t(space.legal.size()),
                    sample.size(), group_rows, group_rows / double(sample.size()));
        std::printf("model: %s\n", source.c_str());
        std::printf("%-20s %12s %16s %14s %14s\n", "step", "median_s", "group-rows/s", "min rows/s", "max rows/s");
        auto line = [&](const char *name, const std::vector<double> &s) {
            std::printf("%-20s %12.4f %16.0f %14.0f %14.0f\n", name, median(s), group_rows / median(s),
                        group_rows / *std::max_element(s.begin(), s.end()),
                        group_rows / *std::min_element(s.begin(), s.end()));
        };
        line("predict", predict_s);
        line("features", extract_s);
        std::vector<double> both(predict_s.size());
        for (size_t i = 0; i < both.size(); i++) both[i] = predict_s[i] + extract_s[i];
        line("features+predict", both);
        std::printf("(checksum %g)\n", checksum);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
