// The XGBoost cost model: gradient-boosted trees over group rows, scored by pack-sum.
//
// Ansor (Zheng et al., OSDI 2020, section 5.2) predicts a score per stage group and sums the
// group scores of a candidate; the trees therefore never see a candidate, only rows, and the
// squared error of the *sum* against the candidate's normalised throughput is fed to xgboost as a
// custom objective through XGBoosterBoostOneIter.
#include "costmodel/CostModel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>

#include <xgboost/c_api.h>

#include "costmodel/Validation.h"

namespace opgen::costmodel {

namespace {

const char *const model_name = "xgboost";

// Saved bytes: this header, then xgboost's UBJSON model when the model is trained. The header
// carries what xgboost's model format does not: that the bytes are ours, the feature count the
// caller expects, whether there is a model at all, and the payload's length and checksum; from
// version 2 on also the formulation (0: pack-sum, k > 0: k concatenated group slots).
// xgboost 1.7's UBJSON reader does not reliably reject a truncated model: it sometimes "loads"
// one (reading past the buffer), so damaged bytes must be caught before xgboost sees them.
//   v1: magic[8] | version u32 | num_features u32 | trained u8 | payload size u64 | FNV-1a 64 u64
//   v2: the same, then slots u32
const char magic[8] = {'O', 'P', 'G', 'E', 'N', 'X', 'G', 'B'};
const uint32_t format_version = 2;
const size_t header_size_v1 = sizeof(magic) + 4 + 4 + 1 + 8 + 8;
const size_t header_size_v2 = header_size_v1 + 4;

void check(int rc, const char *call) {
    if (rc != 0) {
        throw ModelError(std::string("xgboost model: ") + call + " failed: " + XGBGetLastError());
    }
}

struct BoosterDeleter {
    void operator()(void *handle) const { XGBoosterFree(handle); }
};
using BoosterPtr = std::unique_ptr<void, BoosterDeleter>;

struct DMatrixDeleter {
    void operator()(void *handle) const { XGDMatrixFree(handle); }
};
using DMatrixPtr = std::unique_ptr<void, DMatrixDeleter>;

void put_u32(std::vector<uint8_t> &out, uint32_t value) {
    for (int i = 0; i < 4; i++) {
        out.push_back(uint8_t(value >> (8 * i)));
    }
}

void put_u64(std::vector<uint8_t> &out, uint64_t value) {
    for (int i = 0; i < 8; i++) {
        out.push_back(uint8_t(value >> (8 * i)));
    }
}

uint32_t get_u32(const uint8_t *in) {
    uint32_t value = 0;
    for (int i = 0; i < 4; i++) {
        value |= uint32_t(in[i]) << (8 * i);
    }
    return value;
}

uint64_t get_u64(const uint8_t *in) {
    uint64_t value = 0;
    for (int i = 0; i < 8; i++) {
        value |= uint64_t(in[i]) << (8 * i);
    }
    return value;
}

uint64_t fnv1a(const uint8_t *data, size_t size) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) {
        h = (h ^ data[i]) * 0x100000001b3ull;
    }
    return h;
}

void set_param(BoosterHandle booster, const char *name, const std::string &value) {
    check(XGBoosterSetParam(booster, name, value.c_str()), "XGBoosterSetParam");
}

// Per-candidate labels: throughput divided by the best throughput of the same task, so that every
// task contributes labels on the same scale whatever its absolute speed.
std::vector<float> normalised_labels(const TrainingSet &set) {
    std::map<int32_t, double> best;
    for (size_t i = 0; i < set.task.size(); i++) {
        double &b = best[set.task[i]];
        b = std::max(b, set.throughput[i]);
    }
    std::vector<float> labels(set.task.size());
    for (size_t i = 0; i < set.task.size(); i++) {
        labels[i] = float(set.throughput[i] / best[set.task[i]]);
    }
    return labels;
}

// One ordered pair of candidates of a task: `faster` is measured faster than `slower`.
struct Pair {
    uint32_t faster, slower;
    float weight;
};

// Every pair of candidates of the same task whose normalised throughputs differ by more than
// `margin` (relative): closer pairs are within the measurement noise and only teach the noise.
// Each task's pairs are weighted so that a candidate's summed weight is about one whatever the
// task's size: tasks count alike, and the gradients stay on the regression objective's scale.
std::vector<Pair> ordered_pairs(const std::vector<int32_t> &task, const std::vector<float> &labels, double margin,
                                bool weight_by_gap, double top_emphasis) {
    std::map<int32_t, std::vector<uint32_t>> members;
    for (size_t i = 0; i < task.size(); i++) {
        members[task[i]].push_back(uint32_t(i));
    }
    std::vector<Pair> pairs;
    for (const auto &[id, m] : members) {
        const size_t first = pairs.size();
        for (size_t a = 0; a < m.size(); a++) {
            for (size_t b = 0; b < m.size(); b++) {
                if (labels[m[a]] > labels[m[b]] * (1.0 + margin)) {
                    double w = weight_by_gap ? std::log(labels[m[a]] / labels[m[b]]) : 1.0;
                    if (top_emphasis > 0) w *= std::pow(double(labels[m[a]]), top_emphasis);
                    pairs.push_back({m[a], m[b], float(w)});
                }
            }
        }
        double total = 0;
        for (size_t k = first; k < pairs.size(); k++) {
            total += pairs[k].weight;
        }
        for (size_t k = first; k < pairs.size(); k++) {
            pairs[k].weight = float(pairs[k].weight * double(m.size()) / total);
        }
    }
    return pairs;
}

// RankNet's logistic loss log(1 + exp(-(s_faster - s_slower))) per pair, its gradient and
// (diagonal) Hessian with respect to each candidate's score, replacing the regression terms.
void pairwise_gradients(const std::vector<Pair> &pairs, const std::vector<double> &scores, std::vector<double> &grad,
                        std::vector<double> &hess) {
    std::fill(grad.begin(), grad.end(), 0.0);
    std::fill(hess.begin(), hess.end(), 1e-6);
    for (const Pair &p : pairs) {
        const double d = scores[p.faster] - scores[p.slower];
        const double wrong = 1.0 / (1.0 + std::exp(d));  // probability the model orders them wrongly
        const double g = p.weight * wrong;
        const double h = p.weight * wrong * (1.0 - wrong);
        grad[p.faster] -= g;
        grad[p.slower] += g;
        hess[p.faster] += h;
        hess[p.slower] += h;
    }
}

// The rows the trees see: a batch's group rows as they are (pack-sum, slots == 0), or one row
// per candidate holding its first `slots` group rows side by side, missing values (NaN) where it
// has fewer.
struct TreeRows {
    std::vector<float> storage;  // only for slots > 0
    const float *data = nullptr;
    size_t width = 0;
    std::vector<int32_t> row_begin;  // candidate i owns tree rows [row_begin[i], row_begin[i+1])

    size_t num_rows() const { return size_t(row_begin.back()); }
};

TreeRows tree_rows(const FeatureBatch &batch, int slots) {
    TreeRows t;
    const size_t f = size_t(batch.num_features);
    if (slots == 0) {
        t.data = batch.rows.data();
        t.width = f;
        t.row_begin = batch.row_begin;
        return t;
    }
    const size_t n = batch.num_candidates();
    t.width = size_t(slots) * f;
    t.storage.assign(n * t.width, std::numeric_limits<float>::quiet_NaN());
    t.row_begin.resize(n + 1);
    for (size_t c = 0; c < n; c++) {
        t.row_begin[c] = int32_t(c);
        const size_t rows = std::min<size_t>(size_t(slots), size_t(batch.row_begin[c + 1] - batch.row_begin[c]));
        const float *from = batch.rows.data() + size_t(batch.row_begin[c]) * f;
        std::copy(from, from + rows * f, t.storage.begin() + std::ptrdiff_t(c * t.width));
    }
    t.row_begin[n] = int32_t(n);
    t.data = t.storage.data();
    return t;
}

// Each candidate's score: the sum of the margins of its tree rows (`margin`: one per tree row).
std::vector<double> pack_sums(const TreeRows &tree, const float *margin) {
    std::vector<double> sums(tree.row_begin.size() - 1);
    for (size_t c = 0; c < sums.size(); c++) {
        double sum = 0;
        for (int32_t r = tree.row_begin[c]; r < tree.row_begin[c + 1]; r++) {
            sum += margin[r];
        }
        sums[c] = sum;
    }
    return sums;
}

// How many group slots a tree row holds: the widest candidate's group count under Concat, 0
// (pack-sum: one tree row per group) otherwise.
int tree_slots(const FeatureBatch &batch, TrainOptions::Formulation formulation) {
    int slots = 0;
    if (formulation != TrainOptions::Formulation::Concat) return slots;
    for (size_t c = 0; c < batch.num_candidates(); c++) {
        slots = std::max(slots, batch.row_begin[c + 1] - batch.row_begin[c]);
    }
    return slots;
}

// The pairs the pairwise objective ranks (none for regression). Raises ModelError when the
// pairwise objective finds no pair to learn from.
std::vector<Pair> training_pairs(const TrainingSet &set, const std::vector<float> &labels,
                                 const TrainOptions &options) {
    if (options.objective != TrainOptions::Objective::Pairwise) return {};
    std::vector<Pair> pairs =
        ordered_pairs(set.task, labels, options.pair_margin, options.weight_by_gap, options.top_emphasis);
    if (pairs.empty()) {
        throw ModelError("xgboost model: pairwise objective needs a task with two candidates whose "
                         "throughputs differ");
    }
    return pairs;
}

// The training matrix over the trees' rows, each row labelled with its candidate's label.
DMatrixPtr training_matrix(const TreeRows &tree, const std::vector<float> &labels, int threads) {
    const size_t num_rows = tree.num_rows();
    DMatrixHandle dtrain_handle = nullptr;
    check(XGDMatrixCreateFromMat_omp(tree.data, num_rows, bst_ulong(tree.width),
                                     std::numeric_limits<float>::quiet_NaN(), &dtrain_handle, threads),
          "XGDMatrixCreateFromMat_omp");
    DMatrixPtr dtrain(dtrain_handle);
    // The custom objective does not read these labels; they keep the DMatrix valid for
    // xgboost's own checks and make it printable while debugging.
    std::vector<float> row_labels(num_rows);
    for (size_t c = 0; c < labels.size(); c++) {
        for (int32_t r = tree.row_begin[c]; r < tree.row_begin[c + 1]; r++) {
            row_labels[size_t(r)] = labels[c];
        }
    }
    check(XGDMatrixSetFloatInfo(dtrain.get(), "label", row_labels.data(), num_rows), "XGDMatrixSetFloatInfo");
    return dtrain;
}

// A fresh booster caching `dtrain`, with the options' parameters set.
BoosterPtr new_booster(DMatrixHandle dtrain, const TrainOptions &options) {
    BoosterHandle booster_handle = nullptr;
    DMatrixHandle cache[] = {dtrain};
    check(XGBoosterCreate(cache, 1, &booster_handle), "XGBoosterCreate");
    BoosterPtr booster(booster_handle);
    set_param(booster.get(), "tree_method", "hist");
    set_param(booster.get(), "max_depth", std::to_string(options.max_depth));
    std::ostringstream eta;
    eta.precision(17);
    eta << options.eta;
    set_param(booster.get(), "eta", eta.str());
    if (options.parallel_trees > 1) {
        set_param(booster.get(), "num_parallel_tree", std::to_string(options.parallel_trees));
    }
    if (options.subsample < 1.0) {
        std::ostringstream v;
        v << options.subsample;
        set_param(booster.get(), "subsample", v.str());
    }
    if (options.colsample < 1.0) {
        std::ostringstream v;
        v << options.colsample;
        set_param(booster.get(), "colsample_bynode", v.str());
    }
    if (options.threads > 0) {
        set_param(booster.get(), "nthread", std::to_string(options.threads));
    }
    // xgboost's seed is an int; fold the 64-bit seed so that both halves matter.
    set_param(booster.get(), "seed", std::to_string(int32_t(options.seed ^ (options.seed >> 32))));
    // Pack-sum adds the base score once per row, so a candidate with many groups would start
    // with a large bias; 0 keeps the sum a sum of tree outputs only.
    set_param(booster.get(), "base_score", "0");
    set_param(booster.get(), "disable_default_eval_metric", "1");
    return booster;
}

// The per-candidate gradient and Hessian of the objective at the current pack-sums `sums`:
// regression terms, replaced by the pairwise ones when there are pairs.
void candidate_gradients(const std::vector<double> &sums, const std::vector<float> &labels,
                         const std::vector<Pair> &pairs, std::vector<double> &grad, std::vector<double> &hess) {
    // Ansor weights each candidate by its normalised throughput: errors on the fast
    // candidates, the ones the tuner must pick out, cost more than errors on the slow tail.
    // On the synthetic test problem (6 seeds, 50 held-out tasks) it ranked slightly better
    // than weight 1 or 1 + label (pairwise accuracy 0.908, 0.907, 0.904).
    for (size_t c = 0; c < sums.size(); c++) {
        grad[c] = (sums[c] - labels[c]) * labels[c];
        hess[c] = labels[c];
    }
    if (!pairs.empty()) {
        pairwise_gradients(pairs, sums, grad, hess);
    }
}

// `options.rounds` rounds of boosting on the custom objective: each round scores every candidate
// by the sum of its rows' margins and hands every row its candidate's gradient.
void boost(BoosterHandle booster, DMatrixHandle dtrain, const TreeRows &tree, const std::vector<float> &labels,
           const std::vector<Pair> &pairs, const TrainOptions &options) {
    const size_t num_candidates = labels.size();
    const size_t num_rows = tree.num_rows();
    std::vector<double> cand_grad(num_candidates), cand_hess(num_candidates);
    std::vector<float> grad(num_rows), hess(num_rows);
    // Margins ("type": 1) on the cached training matrix: the hist updater refreshes that
    // cache after every round (checked against a fresh DMatrix: identical), so these are the
    // current model's outputs without a re-traversal of all trees.
    const char *train_predict = R"({"type": 1, "training": true, "iteration_begin": 0, "iteration_end": 0,)"
                                R"( "strict_shape": false})";
    for (int round = 0; round < options.rounds; round++) {
        const bst_ulong *shape = nullptr;
        bst_ulong dim = 0;
        const float *margin = nullptr;
        check(XGBoosterPredictFromDMatrix(booster, dtrain, train_predict, &shape, &dim, &margin),
              "XGBoosterPredictFromDMatrix");
        const std::vector<double> sums = pack_sums(tree, margin);
        candidate_gradients(sums, labels, pairs, cand_grad, cand_hess);
        // d(sum)/d(row margin) = 1: every row of a candidate gets the candidate's gradient.
        for (size_t c = 0; c < num_candidates; c++) {
            for (int32_t r = tree.row_begin[c]; r < tree.row_begin[c + 1]; r++) {
                grad[size_t(r)] = float(cand_grad[c]);
                hess[size_t(r)] = float(cand_hess[c]);
            }
        }
        check(XGBoosterBoostOneIter(booster, dtrain, grad.data(), hess.data(), num_rows), "XGBoosterBoostOneIter");
    }
}

class XGBoostModel : public CostModel {
public:
    explicit XGBoostModel(int num_features) : num_features_(num_features) {
        if (num_features <= 0) {
            std::ostringstream message;
            message << "xgboost model: num_features " << num_features << " must be positive";
            throw ModelError(message.str());
        }
    }

    std::string name() const override { return model_name; }

    // Validates, builds the trees' rows and the training matrix, boosts, and swaps the new booster
    // in only at the end: a failed train leaves the old model.
    void train(const TrainingSet &set, const TrainOptions &options) override {
        check_training_set(set, num_features_, "xgboost model");
        check_train_options(options, "xgboost model");
        if (set.batch.row_begin.back() == 0) {
            throw ModelError("xgboost model: training set has candidates but no group rows");
        }
        const int slots = tree_slots(set.batch, options.formulation);
        const TreeRows tree = tree_rows(set.batch, slots);
        const std::vector<float> labels = normalised_labels(set);
        const std::vector<Pair> pairs = training_pairs(set, labels, options);
        const DMatrixPtr dtrain = training_matrix(tree, labels, options.threads);
        BoosterPtr booster = new_booster(dtrain.get(), options);
        boost(booster.get(), dtrain.get(), tree, labels, pairs, options);
        booster_ = std::move(booster);
        slots_ = slots;
    }

    std::vector<double> predict(const FeatureBatch &batch) const override {
        check_batch(batch, num_features_, "xgboost model");
        if (!trained() || batch.row_begin.back() == 0) {
            return std::vector<double>(batch.num_candidates(), 0.0);
        }
        const TreeRows tree = tree_rows(batch, slots_);
        const size_t num_rows = tree.num_rows();
        // In-place prediction reads the caller's floats through an __array_interface__ and
        // skips copying every row into a DMatrix: 5-30% more rows/s than XGDMatrixCreateFromMat
        // plus XGBoosterPredictFromDMatrix on 2 cores (more with wider rows).
        std::ostringstream array;
        array << R"({"data": [)" << reinterpret_cast<uintptr_t>(tree.data)
              << R"(, true], "shape": [)" << num_rows << ", " << tree.width
              << R"(], "typestr": "<f4", "version": 3})";
        const char *config =
            R"({"type": 1, "training": false, "iteration_begin": 0, "iteration_end": 0,)"
            R"( "strict_shape": false, "cache_id": 0, "missing": NaN})";
        const bst_ulong *shape = nullptr;
        bst_ulong dim = 0;
        const float *margin = nullptr;
        check(XGBoosterPredictFromDense(booster_.get(), array.str().c_str(), config, nullptr,
                                        &shape, &dim, &margin),
              "XGBoosterPredictFromDense");
        return pack_sums(tree, margin);
    }

    bool trained() const override { return booster_ != nullptr; }

    void set_threads(int threads) override {
        threads_ = threads;
        if (booster_) set_param(booster_.get(), "nthread", std::to_string(threads));
    }

    std::vector<uint8_t> save() const override {
        std::vector<uint8_t> out(magic, magic + sizeof(magic));
        put_u32(out, format_version);
        put_u32(out, uint32_t(num_features_));
        out.push_back(trained() ? 1 : 0);
        if (!trained()) {
            put_u64(out, 0);
            put_u64(out, fnv1a(nullptr, 0));
            put_u32(out, 0);
            return out;
        }
        bst_ulong length = 0;
        const char *data = nullptr;
        check(XGBoosterSaveModelToBuffer(booster_.get(), R"({"format": "ubj"})", &length, &data),
              "XGBoosterSaveModelToBuffer");
        const auto *payload = reinterpret_cast<const uint8_t *>(data);
        put_u64(out, length);
        put_u64(out, fnv1a(payload, length));
        put_u32(out, uint32_t(slots_));
        out.insert(out.end(), payload, payload + length);
        return out;
    }

    void load(const std::vector<uint8_t> &bytes) override {
        if (bytes.size() < header_size_v1 || std::memcmp(bytes.data(), magic, sizeof(magic)) != 0) {
            std::ostringstream message;
            message << "xgboost model: " << bytes.size()
                    << " bytes do not start with an opgen xgboost model header";
            throw ModelError(message.str());
        }
        const uint32_t version = get_u32(bytes.data() + 8);
        if (version != 1 && version != format_version) {
            std::ostringstream message;
            message << "xgboost model: saved format version " << version << ", expected 1 to "
                    << format_version;
            throw ModelError(message.str());
        }
        const size_t header_size = version == 1 ? header_size_v1 : header_size_v2;
        if (bytes.size() < header_size) {
            std::ostringstream message;
            message << "xgboost model: " << bytes.size() << " bytes are shorter than a version " << version
                    << " header";
            throw ModelError(message.str());
        }
        const uint32_t saved_features = get_u32(bytes.data() + 12);
        if (saved_features != uint32_t(num_features_)) {
            std::ostringstream message;
            message << "xgboost model: saved model has " << saved_features
                    << " features, this model expects " << num_features_;
            throw ModelError(message.str());
        }
        const uint8_t saved_trained = bytes[16];
        const uint64_t saved_payload = get_u64(bytes.data() + 17);
        const uint32_t saved_slots = version == 1 ? 0 : get_u32(bytes.data() + header_size_v1);
        const size_t payload = bytes.size() - header_size;
        if (saved_payload != payload) {
            std::ostringstream message;
            message << "xgboost model: header promises " << saved_payload << " model bytes but "
                    << payload << " follow";
            throw ModelError(message.str());
        }
        if (saved_trained > 1 || (saved_trained == 0) != (payload == 0)) {
            std::ostringstream message;
            message << "xgboost model: header says trained=" << int(saved_trained) << " but "
                    << payload << " model bytes follow";
            throw ModelError(message.str());
        }
        if (saved_slots > 4096) {
            std::ostringstream message;
            message << "xgboost model: header says " << saved_slots << " group slots (at most 4096)";
            throw ModelError(message.str());
        }
        if (get_u64(bytes.data() + 25) != fnv1a(bytes.data() + header_size, payload)) {
            throw ModelError("xgboost model: model bytes do not match their checksum");
        }
        if (saved_trained == 0) {
            booster_.reset();
            slots_ = 0;
            return;
        }
        BoosterHandle booster_handle = nullptr;
        check(XGBoosterCreate(nullptr, 0, &booster_handle), "XGBoosterCreate");
        BoosterPtr booster(booster_handle);
        check(XGBoosterLoadModelFromBuffer(booster.get(), bytes.data() + header_size, payload),
              "XGBoosterLoadModelFromBuffer");
        bst_ulong booster_features = 0;
        check(XGBoosterGetNumFeature(booster.get(), &booster_features), "XGBoosterGetNumFeature");
        const bst_ulong expected = bst_ulong(num_features_) * bst_ulong(std::max<uint32_t>(1, saved_slots));
        if (booster_features != expected) {
            std::ostringstream message;
            message << "xgboost model: saved booster has " << booster_features
                    << " features, this model expects " << expected;
            throw ModelError(message.str());
        }
        if (threads_ > 0) set_param(booster.get(), "nthread", std::to_string(threads_));
        booster_ = std::move(booster);
        slots_ = int(saved_slots);
    }

private:
    int num_features_;
    int slots_ = 0;  // 0: pack-sum; else concatenated group slots per candidate
    int threads_ = 0;  // set_threads; 0: xgboost's default (all cores)
    BoosterPtr booster_;
};

} // namespace

std::unique_ptr<CostModel> make_xgboost_model(int num_features) {
    return std::make_unique<XGBoostModel>(num_features);
}

} // namespace opgen::costmodel
