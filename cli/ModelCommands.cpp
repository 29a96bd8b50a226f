// model: the cost model's commands. `model collect` measures a seeded random sample of a task's
// legal space into a database (training data); `model train` fits the XGBoost model on a
// database's measurements; `model eval` scores held-out tasks with a model, side by side with
// random choice and the roofline heuristic.
#include "codegen/KernelKeys.h"
#include "core/OpLibrary.h"
#include "cli/Cli.h"
#include "tuner/Features.h"
#include "tuner/ModelData.h"
#include "tuner/ModelStore.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

namespace opgen::cli {

namespace {

struct CollectArgs {
    Common common;
    std::string op, shape;
    tuner::CollectOptions options;
    bool quiet = false;
};

void add_collect(CLI::App *model) {
    auto a = std::make_shared<CollectArgs>();
    auto *cmd = model->add_subcommand("collect", "measure a seeded random sample of legal points into the database");
    cmd->add_option("--op", a->op, "op name (a file ops/<name>.op)")->required();
    cmd->add_option("--shape", a->shape, "shape, e.g. M=512,N=512,K=512")->required();
    cmd->add_option("--sample", a->options.sample, "legal points to measure")->check(CLI::Range(1, 1000000));
    cmd->add_option("--seed", a->options.seed, "seed of the sample and of the inputs");
    cmd->add_option("--min-time-ms", a->options.min_time_ms, "timing budget per candidate")
        ->check(CLI::Range(0.1, 100000.0));
    cmd->add_option("--reference-every", a->options.reference_every,
                    "candidates between two runs of the reference kernel")
        ->check(CLI::Range(1, 100000));
    cmd->add_flag("--quiet", a->quiet, "no progress lines");
    add_common_options(cmd, a->common, true);
    cmd->callback([a] {
        OpLibrary lib = OpLibrary::standard(a->common.ops_dirs);
        Target t = load_target(a->common.target);
        ComputeDef def = lib.load(a->op);
        BoundShape shape = bind_shape(def, a->shape);
        a->options.threads = a->common.threads > 0 ? a->common.threads : 1;
        set_threads(a->options.threads);
        if (!a->quiet) a->options.log = [](const std::string &line) { std::cerr << line << "\n"; };
        auto cache = db::open_kernel_cache(a->common.db_path, db::OpenMode::ReadWrite);
        tuner::CollectSummary s = tuner::collect_measurements(def, shape, t, a->options, *cache);
        std::cout << def.name << " " << shape.canonical << ": sampled " << s.sampled << ", measured " << s.measured
                  << " (" << s.failed << " failed), resumed " << s.already << ", reference runs "
                  << s.reference_runs << "\n";
    });
}

// The measurements of `target` at `threads` in the database at `path`, as model data: every op's,
// float32 and those keyed with instruction features (int8, bf16) alike.
tuner::ModelData read_data(const std::string &path, const Common &c, const Target &t, int threads) {
    auto cache = db::open_kernel_cache(path, db::OpenMode::ReadOnly);
    const std::string key = t.name + ":t" + std::to_string(threads);
    std::vector<db::MeasurementRecord> records;
    for (const std::string &k : target_keys_of(t.name, threads)) {
        std::vector<db::MeasurementRecord> on = cache->measurements_on(k);
        records.insert(records.end(), std::make_move_iterator(on.begin()), std::make_move_iterator(on.end()));
    }
    tuner::ModelData d = tuner::build_model_data(records, OpLibrary::standard(c.ops_dirs), t);
    user_check(!d.set.throughput.empty()) << "database '" << path << "' has no successful measurements on target '"
                                          << key << "' (collect some with 'opgen model collect')";
    return d;
}

// Candidates of one task of `d`, as their own set (for per-task figures).
costmodel::TrainingSet task_subset(const tuner::ModelData &d, int32_t task, const std::vector<double> &scores,
                                   std::vector<double> &sub_scores) {
    costmodel::TrainingSet s;
    s.batch.num_features = d.set.batch.num_features;
    sub_scores.clear();
    const auto &b = d.set.batch;
    for (size_t i = 0; i < d.set.task.size(); i++) {
        if (d.set.task[i] != task) continue;
        s.batch.add_candidate(b.rows.data() + size_t(b.row_begin[i]) * size_t(b.num_features),
                              b.row_begin[i + 1] - b.row_begin[i]);
        s.task.push_back(task);
        s.throughput.push_back(d.set.throughput[i]);
        sub_scores.push_back(scores[i]);
    }
    return s;
}

// Random choice, averaged over seeds: one seed's luck is not the baseline.
costmodel::RankingQuality random_quality(const costmodel::TrainingSet &s, int seeds) {
    costmodel::RankingQuality sum;
    for (int k = 0; k < seeds; k++) {
        auto r = costmodel::make_random_model(s.batch.num_features, uint64_t(k) + 1);
        costmodel::RankingQuality q = costmodel::evaluate_ranking(r->predict(s.batch), s);
        sum.pairwise_accuracy += q.pairwise_accuracy / seeds;
        sum.kendall_tau += q.kendall_tau / seeds;
        sum.top1_regret += q.top1_regret / seeds;
        sum.top5_regret += q.top5_regret / seeds;
    }
    return sum;
}

void print_quality(const std::string &task, const std::string &scorer, const costmodel::RankingQuality &q) {
    std::printf("%-44s %-10s %9s %8s %8s %8s\n", task.c_str(), scorer.c_str(), fixed(q.pairwise_accuracy, 3).c_str(),
                fixed(q.kendall_tau, 3).c_str(), fixed(q.top1_regret, 3).c_str(), fixed(q.top5_regret, 3).c_str());
}

// Prints the model, the roofline heuristic and random choice on every task of `d` and over all;
// returns the model's figures over all tasks.
// The model's `top` best-scored candidates of each task, with their measured regret (task's best
// throughput over theirs) and schedules.
void print_top_picks(const tuner::ModelData &d, const std::vector<double> &scores, int top) {
    for (int32_t t = 0; t < int32_t(d.task_names.size()); t++) {
        std::vector<size_t> members;
        double best = 0;
        for (size_t i = 0; i < d.set.task.size(); i++) {
            if (d.set.task[i] != t) continue;
            members.push_back(i);
            best = std::max(best, d.set.throughput[i]);
        }
        std::stable_sort(members.begin(), members.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
        std::printf("%s: the model's top %d\n", d.task_names[size_t(t)].c_str(), top);
        for (size_t k = 0; k < members.size() && k < size_t(top); k++) {
            const size_t i = members[k];
            std::printf("  regret %6.3f  %s\n", best / d.set.throughput[i], d.schedules[i].c_str());
        }
    }
}

costmodel::RankingQuality evaluate(const costmodel::CostModel &model, const tuner::ModelData &d, int top = 0) {
    const std::vector<double> scores = model.predict(d.set.batch);
    if (top > 0) print_top_picks(d, scores, top);
    std::printf("%-44s %-10s %9s %8s %8s %8s\n", "task", "scorer", "pairwise", "tau", "top1", "top5");
    std::vector<double> sub;
    for (int32_t t = 0; t < int32_t(d.task_names.size()); t++) {
        costmodel::TrainingSet s = task_subset(d, t, scores, sub);
        if (s.throughput.empty()) continue;
        std::string name = d.task_names[size_t(t)] + " (" + std::to_string(s.throughput.size()) + ")";
        print_quality(name, model.name(), costmodel::evaluate_ranking(sub, s));
        task_subset(d, t, d.roofline_scores, sub);
        print_quality(name, "roofline", costmodel::evaluate_ranking(sub, s));
        print_quality(name, "random", random_quality(s, 20));
    }
    costmodel::RankingQuality q = costmodel::evaluate_ranking(scores, d.set);
    const std::string all = "all " + std::to_string(d.task_names.size()) + " tasks (mean)";
    print_quality(all, model.name(), q);
    print_quality(all, "roofline", costmodel::evaluate_ranking(d.roofline_scores, d.set));
    print_quality(all, "random", random_quality(d.set, 20));
    return q;
}

struct TrainArgs {
    Common common;
    std::string data, holdout, out;
    bool store = false;
    costmodel::TrainOptions options;
};

void add_train(CLI::App *model) {
    auto a = std::make_shared<TrainArgs>();
    auto *cmd = model->add_subcommand("train", "train the XGBoost cost model on a database's measurements");
    cmd->add_option("--data", a->data, "database of measurements to train on (opgen model collect)")->required();
    cmd->add_option("--out", a->out, "model file to write")->required();
    cmd->add_option("--holdout", a->holdout, "database of held-out tasks to evaluate the model on");
    cmd->add_flag("--store", a->store, "also store the model with its figures in the --db cache");
    cmd->add_option("--rounds", a->options.rounds, "boosting rounds")->check(CLI::Range(1, 100000));
    cmd->add_option("--max-depth", a->options.max_depth, "tree depth")->check(CLI::Range(1, 30));
    cmd->add_option("--eta", a->options.eta, "learning rate")->check(CLI::Range(1e-6, 1.0));
    cmd->add_option("--seed", a->options.seed, "seed of the trees");
    const std::map<std::string, costmodel::TrainOptions::Objective> objectives = {
        {"regression", costmodel::TrainOptions::Objective::Regression},
        {"pairwise", costmodel::TrainOptions::Objective::Pairwise}};
    cmd->add_option("--objective", a->options.objective, "regression or pairwise")
        ->transform(CLI::CheckedTransformer(objectives, CLI::ignore_case));
    const std::map<std::string, costmodel::TrainOptions::Formulation> formulations = {
        {"packsum", costmodel::TrainOptions::Formulation::PackSum},
        {"concat", costmodel::TrainOptions::Formulation::Concat}};
    cmd->add_option("--formulation", a->options.formulation,
                    "packsum (a tree row per group, scores summed) or concat (a row per candidate)")
        ->transform(CLI::CheckedTransformer(formulations, CLI::ignore_case));
    cmd->add_option("--pair-margin", a->options.pair_margin, "pairs closer than this (relative) are ignored")
        ->check(CLI::Range(0.0, 10.0));
    cmd->add_option("--parallel-trees", a->options.parallel_trees, "trees per round, averaged (bagging)")
        ->check(CLI::Range(1, 64));
    cmd->add_option("--subsample", a->options.subsample, "share of rows each tree sees")->check(CLI::Range(0.01, 1.0));
    cmd->add_option("--colsample", a->options.colsample, "share of features each split sees")
        ->check(CLI::Range(0.01, 1.0));
    cmd->add_option("--top-emphasis", a->options.top_emphasis,
                    "pairwise: weight pairs by the faster one's throughput over the best, to this power")
        ->check(CLI::Range(0.0, 16.0));
    cmd->add_flag("--weight-by-gap", a->options.weight_by_gap, "pairwise: weight pairs by their log throughput ratio");
    add_common_options(cmd, a->common, true);
    cmd->callback([a] {
        Target t = load_target(a->common.target);
        const int threads = a->common.threads > 0 ? a->common.threads : 1;
        tuner::ModelData train = read_data(a->data, a->common, t, threads);
        std::optional<tuner::ModelData> holdout;
        if (!a->holdout.empty()) holdout = read_data(a->holdout, a->common, t, threads);
        auto model = costmodel::make_xgboost_model(tuner::num_features());
        model->train(train.set, a->options);
        std::cout << "trained on " << train.set.throughput.size() << " candidates of " << train.task_names.size()
                  << " tasks (" << train.dropped << " records dropped)\n";
        costmodel::RankingQuality q;
        size_t eval_candidates = 0, eval_tasks = 0;
        if (holdout) {
            q = evaluate(*model, *holdout);
            eval_candidates = holdout->set.throughput.size();
            eval_tasks = holdout->task_names.size();
        }
        std::unique_ptr<db::KernelCache> cache;
        if (a->store) cache = db::open_kernel_cache(a->common.db_path, db::OpenMode::ReadWrite);
        tuner::save_model_file(*model, a->out);
        std::cout << "wrote " << a->out << "\n";
        if (cache) {
            db::ModelRecord r;
            r.target = t.name + ":t" + std::to_string(threads);
            r.name = model->name();
            r.train_rows = int64_t(train.set.throughput.size());
            r.quality_json = tuner::quality_json(q, eval_candidates, eval_tasks);
            r.bytes = model->save();
            cache->put_model(r);
            std::cout << "stored in " << a->common.db_path << " for target " << r.target << "\n";
        }
    });
}

struct EvalArgs {
    Common common;
    std::string data, model_path;
    int top = 0;
};

void add_eval(CLI::App *model) {
    auto a = std::make_shared<EvalArgs>();
    auto *cmd = model->add_subcommand("eval", "rank held-out tasks with a model, beside the roofline and random choice");
    cmd->add_option("--data", a->data, "database of held-out measurements")->required();
    cmd->add_option("--model", a->model_path, "model file (default: the target's bundled model)");
    cmd->add_option("--top", a->top, "also list the model's best-scored candidates of each task")
        ->check(CLI::Range(1, 1000));
    add_common_options(cmd, a->common, false);
    cmd->callback([a] {
        Target t = load_target(a->common.target);
        const int threads = a->common.threads > 0 ? a->common.threads : 1;
        const std::string path = a->model_path.empty() ? tuner::default_model_path(t) : a->model_path;
        auto model = tuner::load_model_file(path);
        evaluate(*model, read_data(a->data, a->common, t, threads), a->top);
    });
}

struct DumpArgs {
    Common common;
    std::string data, out;
};

// One line per group row: task, candidate, throughput (1/ms), the roofline's score, the row's
// features, and the candidate's schedule JSON (quoted): the training data for analysis elsewhere.
void add_dump(CLI::App *model) {
    auto a = std::make_shared<DumpArgs>();
    auto *cmd = model->add_subcommand("dump", "write a database's measurements as feature rows (CSV)");
    cmd->add_option("--data", a->data, "database of measurements (opgen model collect)")->required();
    cmd->add_option("--out", a->out, "CSV file to write")->required();
    add_common_options(cmd, a->common, false);
    cmd->callback([a] {
        Target t = load_target(a->common.target);
        const int threads = a->common.threads > 0 ? a->common.threads : 1;
        tuner::ModelData d = read_data(a->data, a->common, t, threads);
        std::ostringstream csv;
        csv << "task,candidate,throughput,roofline_score";
        for (const std::string &name : tuner::feature_names()) csv << "," << name;
        csv << ",schedule\n";
        csv.precision(9);
        const auto &b = d.set.batch;
        for (size_t c = 0; c < d.set.task.size(); c++) {
            std::string json = d.schedules[c];
            for (char &ch : json) ch = ch == '"' ? '\'' : ch;
            for (int32_t r = b.row_begin[c]; r < b.row_begin[c + 1]; r++) {
                csv << '"' << d.task_names[size_t(d.set.task[c])] << "\"," << c << "," << d.set.throughput[c] << ","
                    << d.roofline_scores[c];
                for (int f = 0; f < b.num_features; f++) csv << "," << b.rows[size_t(r) * size_t(b.num_features) + size_t(f)];
                csv << ",\"" << json << "\"\n";
            }
        }
        write_file_whole(a->out, csv.str(), "CSV");
        std::cout << "wrote " << d.set.task.size() << " candidates of " << d.task_names.size() << " tasks to " << a->out
                  << "\n";
    });
}

}  // namespace

void add_model_commands(CLI::App &app) {
    auto *model = app.add_subcommand("model", "the cost model: collect training data, train, evaluate");
    model->require_subcommand(1);
    add_collect(model);
    add_train(model);
    add_eval(model);
    add_dump(model);
}

}  // namespace opgen::cli
