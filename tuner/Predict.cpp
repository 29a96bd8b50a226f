#include "tuner/Predict.h"

#include "costmodel/CostModel.h"
#include "runtime/CacheHandle.h"
#include "base/Error.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "tuner/Features.h"
#include "tuner/ModelBlend.h"
#include "tuner/ModelStore.h"
#include "core/TilingRules.h"
#include "tuner/Tuner.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace opgen::tuner {

namespace {

class TunerLookupExtension : public db::LookupExtension {
public:
    TunerLookupExtension(OpLibrary library, Target target, int threads, std::string cache_path,
                         PredictOptions options)
        : library_(std::move(library)), target_(std::move(target)), threads_(threads),
          cache_path_(std::move(cache_path)), options_(options) {}

    std::optional<db::ShapeInfo> resolve(const std::string &op_name, const std::string &shape) override {
        const ComputeDef *def = op(op_name);
        if (!def) return std::nullopt;
        try {
            BoundShape bound = bind_shape(*def, shape);
            db::ShapeInfo info;
            info.canonical = bound.canonical;
            const Statement &out = *def->statement_for(def->output().name);
            for (const std::string &v : out.vars) info.extents[v] = bound.var_extent(out, v);
            for (const ReduceVar &r : main_statement(*def).reduce_vars) info.extents[r.name] = bound.eval(r.extent);
            return info;
        } catch (const UserError &) {
            return std::nullopt;  // the shape does not bind: no derived or predicted answer
        }
    }

    std::optional<db::LookupAnswer> predict(const db::LookupRequest &request, const db::ShapeInfo &info) override {
        const ComputeDef *def = served_op(request);
        if (!def) return std::nullopt;
        db::LookupAnswer answer;
        answer.kernel.key.op_name = def->name;
        answer.kernel.key.op_hash = definition_hash(def->source);
        answer.kernel.key.dtype = op_dtype(*def);
        answer.kernel.key.target = request.target;
        answer.kernel.key.halide_version = halide_version();
        answer.kernel.key.tuner_version = tuner_version();
        if (!request.op_hash.empty() && request.op_hash != answer.kernel.key.op_hash) return std::nullopt;
        if (request.dtype != answer.kernel.key.dtype) return std::nullopt;
        try {
            BoundShape shape = bind_shape(*def, info.canonical);
            // A uniform sample of the legal space drawn without enumerating it (a convolution's
            // space has millions of points): the same sample the whole space would give.
            TilingRules space = make_tiling_rules(*def, shape, target_, threads_);
            std::vector<SchedulePoint> pool =
                sample_legal_points(space, *def, shape, target_, size_t(options_.max_pool), options_.seed,
                                    size_t(options_.max_pool) * size_t(options_.max_draws_per_point));
            if (pool.empty()) return std::nullopt;
            // Rank by the roofline, then let the model re-rank: the bundled model the whole sample
            // (it was trained and judged on random samples of legal spaces), a model fitted to
            // the cache's few tasks only the roofline's best share, where it has seen points.
            std::vector<double> roofline(pool.size());
            for (size_t i = 0; i < pool.size(); i++) {
                roofline[i] = roofline_seconds(*def, shape, target_, space, pool[i], threads_);
            }
            std::vector<size_t> order(pool.size());
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return roofline[a] < roofline[b]; });
            size_t pick = order.front();
            const costmodel::CostModel *model = model_for(*def);
            if (model) {
                if (model != bundled_model()) {
                    order.resize(shortlist_size(pool.size()));
                }
                costmodel::FeatureBatch batch;
                batch.num_features = num_features();
                std::vector<float> rows;
                for (size_t i : order) {
                    rows.clear();
                    int n = group_features(*def, shape, target_, space, pool[i], threads_, rows);
                    batch.add_candidate(rows.data(), n);
                }
                std::vector<double> score = model->predict(batch);
                size_t best = 0;
                for (size_t c = 1; c < score.size(); c++) {
                    if (score[c] > score[best]) best = c;
                }
                pick = order[best];
            }
            answer.kernel.schedule_json = pool[pick].to_json().dump();
            answer.kernel.time_ms = roofline[pick] * 1e3;  // the roofline's estimate, not a measurement
            double flops = flop_count(*def, shape);
            answer.kernel.gflops = flops / (roofline[pick] * 1e9);
            return answer;
        } catch (const UserError &) {
            return std::nullopt;
        }
    }

    // The neighbour's point re-fitted by the generic rules, then made a point of the new shape's
    // legal space: kept when it is one, else the legal point nearest to it (repair_point: the
    // nearest legal tiling by log-distance of the factors, with the neighbour's knobs where they
    // are valid). Neither step enumerates the space.
    std::optional<std::string> refit(const db::LookupRequest &request, const std::string &schedule_json,
                                     const db::ShapeInfo &info) override {
        const ComputeDef *def = served_op(request);  // nullptr: not a space this extension knows
        std::optional<std::string> fitted = db::refit_schedule(schedule_json, info.extents);
        if (!def || !fitted) return std::nullopt;
        try {
            SchedulePoint p = SchedulePoint::from_json(nlohmann::json::parse(*fitted));
            BoundShape shape = bind_shape(*def, info.canonical);
            TilingRules rules = make_tiling_rules(*def, shape, target_, threads_);
            std::optional<SchedulePoint> legal = repair_point(rules, *def, shape, target_, p);
            if (!legal) return std::nullopt;
            if (*legal == p) return fitted;
            return legal->to_json().dump();
        } catch (const UserError &) {
            return std::nullopt;
        } catch (const nlohmann::json::exception &) {
            return std::nullopt;  // not a schedule point of this tuner
        }
    }

    // The model that predict() ranks with (the bundled one, else the cache's), on each schedule's
    // stage-group features at the shape; the negated roofline estimate without a model. The
    // features come from the schedule and the shape alone (no Halide lowering), so a few
    // candidates cost microseconds each.
    std::vector<double> rank(const db::LookupRequest &request, const db::ShapeInfo &info,
                             const std::vector<std::string> &schedules) override {
        const ComputeDef *def = served_op(request);
        if (!def) return {};
        std::vector<double> score(schedules.size(), -std::numeric_limits<double>::infinity());
        try {
            BoundShape shape = bind_shape(*def, info.canonical);
            TilingRules space = make_tiling_rules(*def, shape, target_, threads_);
            const costmodel::CostModel *model = model_for(*def);
            costmodel::FeatureBatch batch;
            batch.num_features = num_features();
            std::vector<size_t> scored;
            std::vector<float> rows;
            for (size_t i = 0; i < schedules.size(); i++) {
                try {
                    SchedulePoint p = SchedulePoint::from_json(nlohmann::json::parse(schedules[i]));
                    if (!model) {
                        score[i] = -roofline_seconds(*def, shape, target_, space, p, threads_);
                        continue;
                    }
                    rows.clear();
                    int n = group_features(*def, shape, target_, space, p, threads_, rows);
                    batch.add_candidate(rows.data(), n);
                    scored.push_back(i);
                } catch (const UserError &) {
                } catch (const nlohmann::json::exception &) {
                }  // not a point of this op: never chosen
            }
            if (model && !scored.empty()) {
                std::vector<double> predicted = model->predict(batch);
                for (size_t k = 0; k < scored.size(); k++) score[scored[k]] = predicted[k];
            }
            return score;
        } catch (const UserError &) {
            return {};
        }
    }

private:
    // The op of `request` when its target key is this extension's target at its thread count (with
    // the op's instruction features: target_key), else nullptr.
    const ComputeDef *served_op(const db::LookupRequest &request) {
        const ComputeDef *def = op(request.op_name);
        return def && request.target == target_key(*def, target_, threads_) ? def : nullptr;
    }

    // The op's definition, parsed once; nullptr when the library has no such op.
    const ComputeDef *op(const std::string &name) {
        auto found = ops_.find(name);
        if (found != ops_.end()) return found->second.get();
        std::unique_ptr<ComputeDef> def;
        try {
            def = std::make_unique<ComputeDef>(library_.load(name));
        } catch (const UserError &) {
        }
        return ops_.emplace(name, std::move(def)).first->second.get();
    }

    // The target's bundled model, read once for all ops; nullptr when there is none or it does
    // not load (another feature set).
    const costmodel::CostModel *bundled_model() {
        if (!bundled_read_) {
            bundled_ = load_default_model(target_);
            if (bundled_) bundled_->set_threads(1);
            bundled_read_ = true;
        }
        return bundled_.get();
    }

    // The model of one op on this target, trained once on the cache's measurements; nullptr when
    // there are too few of them (or no cache).
    const costmodel::CostModel *model_for(const ComputeDef &def) {
        // The target's bundled model first: trained on 26 tasks of many shapes, it ranks held-out
        // shapes far better than a model fitted to the few tasks a cache happens to hold
        // (docs/cost-model.md). Without one (another target, other features), the cache's own.
        if (const costmodel::CostModel *bundled = bundled_model()) return bundled;
        auto found = models_.find(def.name);
        if (found != models_.end()) return found->second.get();
        std::unique_ptr<costmodel::CostModel> model;
        if (!cache_path_.empty()) {
            auto cache = db::open_kernel_cache(cache_path_, db::OpenMode::ReadOnly);
            costmodel::TrainingSet set;
            set.batch.num_features = num_features();
            std::map<std::string, int32_t> tasks;
            for (const db::MeasurementRecord &m : cache->measurements_on(target_key(def, target_, threads_))) {
                bool usable = m.key.op_name == def.name && m.feature_rows > 0 && std::isfinite(m.gflops) &&
                              m.gflops > 0 &&
                              m.features.size() == size_t(m.feature_rows) * size_t(num_features());
                if (!usable) continue;
                set.batch.add_candidate(m.features.data(), m.feature_rows);
                // One task per shape and load (measurements under a contention load are their own).
                set.task.push_back(tasks.emplace(m.key.target + " " + m.key.shape, int32_t(tasks.size())).first->second);
                set.throughput.push_back(m.gflops);
            }
            if (int(set.throughput.size()) >= options_.min_train_rows) {
                model = costmodel::make_xgboost_model(num_features());
                costmodel::TrainOptions to;
                to.seed = options_.seed;
                to.rounds = 60;
                // One thread, for training and for every prediction after (xgboost keeps it): a
                // lookup runs inside someone else's process, and with all cores OpenMP's threads
                // wait for one another whenever any core is busy, which made a 200-candidate
                // prediction take 12-24 ms (4 ms scheduler ticks) and training seconds.
                to.threads = 1;
                model->train(set, to);
            }
        }
        return models_.emplace(def.name, std::move(model)).first->second.get();
    }

    OpLibrary library_;
    Target target_;
    int threads_;
    std::string cache_path_;
    PredictOptions options_;
    std::map<std::string, std::unique_ptr<ComputeDef>> ops_;
    std::unique_ptr<costmodel::CostModel> bundled_;  // the target's bundled model, for every op
    bool bundled_read_ = false;
    std::map<std::string, std::unique_ptr<costmodel::CostModel>> models_;
};

}  // namespace

// A malloc'd copy for the C API (freed with opgen_cache_free_string).
static char *copy_string(const std::string &text) {
    char *copy = static_cast<char *>(std::malloc(text.size() + 1));
    if (copy) std::memcpy(copy, text.c_str(), text.size() + 1);
    return copy;
}

std::shared_ptr<db::LookupExtension> make_lookup_extension(const OpLibrary &library, const Target &target, int threads,
                                                           const std::string &cache_path,
                                                           const PredictOptions &options) {
    return std::make_shared<TunerLookupExtension>(library, target, threads, cache_path, options);
}

}  // namespace opgen::tuner

extern "C" int opgen_cache_attach_tuner(opgen_cache *cache, const char *ops_dirs, const char *target, int threads,
                                        char **error_out) {
    if (error_out) *error_out = nullptr;
    try {
        if (!cache) throw std::invalid_argument("opgen_cache_attach_tuner: the cache handle is NULL");
        std::vector<std::string> dirs;
        if (ops_dirs) {
            std::stringstream list(ops_dirs);
            std::string dir;
            while (std::getline(list, dir, ':')) {
                if (!dir.empty()) dirs.push_back(dir);
            }
        }
        opgen::Target t = opgen::load_target(target ? target : "host");
        int n = threads > 0 ? threads : t.cores;
        cache->lookup->set_extension(
            opgen::tuner::make_lookup_extension(opgen::OpLibrary::standard(dirs), t, n, cache->lookup->path()));
        return 0;
    } catch (const std::exception &e) {
        if (error_out) *error_out = opgen::tuner::copy_string(e.what());
        return -1;
    }
}
