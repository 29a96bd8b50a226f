// The random cost model: the baseline every learned model must beat (TVM meta_schedule ships the
// same). It needs no training and is always "trained"; a candidate's score is a uniform draw in
// [0, 1) from std::mt19937_64 seeded by the model seed and a hash of the candidate's rows, so the
// same candidate gets the same score in every batch and every run.
#include "costmodel/CostModel.h"

#include <cstring>
#include <random>
#include <sstream>

#include "costmodel/Validation.h"

namespace opgen::costmodel {

namespace {

const char magic[8] = {'O', 'P', 'G', 'E', 'N', 'R', 'N', 'D'};
const size_t saved_size = sizeof(magic) + 4 + 8;

// FNV-1a over the rows' bytes: cheap, and any change to any feature changes the score.
uint64_t hash_rows(const float *begin, const float *end) {
    uint64_t h = 0xcbf29ce484222325ull;
    const auto *byte = reinterpret_cast<const unsigned char *>(begin);
    const auto *stop = reinterpret_cast<const unsigned char *>(end);
    for (; byte != stop; byte++) {
        h = (h ^ *byte) * 0x100000001b3ull;
    }
    return h;
}

class RandomModel : public CostModel {
public:
    RandomModel(int num_features, uint64_t seed) : num_features_(num_features), seed_(seed) {
        if (num_features <= 0) {
            std::ostringstream message;
            message << "random model: num_features " << num_features << " must be positive";
            throw ModelError(message.str());
        }
    }

    std::string name() const override { return "random"; }

    // Nothing to learn, but the set is checked so that both models reject the same input.
    void train(const TrainingSet &set, const TrainOptions &options) override {
        check_training_set(set, num_features_, "random model");
        check_train_options(options, "random model");
    }

    std::vector<double> predict(const FeatureBatch &batch) const override {
        check_batch(batch, num_features_, "random model");
        std::vector<double> scores(batch.num_candidates());
        for (size_t c = 0; c < scores.size(); c++) {
            const float *begin = batch.rows.data() + size_t(batch.row_begin[c]) * num_features_;
            const float *end = batch.rows.data() + size_t(batch.row_begin[c + 1]) * num_features_;
            // Seeding with both words through seed_seq keeps nearby seeds and hashes apart.
            const uint64_t h = hash_rows(begin, end);
            std::seed_seq sequence{uint32_t(seed_), uint32_t(seed_ >> 32), uint32_t(h),
                                   uint32_t(h >> 32),
                                   uint32_t(batch.row_begin[c + 1] - batch.row_begin[c])};
            std::mt19937_64 engine(sequence);
            // 53 random bits scaled by hand: std::uniform_real_distribution's output differs
            // between standard libraries, which would break "same seed, same winner".
            scores[c] = double(engine() >> 11) * 0x1.0p-53;
        }
        return scores;
    }

    bool trained() const override { return true; }

    std::vector<uint8_t> save() const override {
        std::vector<uint8_t> out(magic, magic + sizeof(magic));
        for (int i = 0; i < 4; i++) {
            out.push_back(uint8_t(uint32_t(num_features_) >> (8 * i)));
        }
        for (int i = 0; i < 8; i++) {
            out.push_back(uint8_t(seed_ >> (8 * i)));
        }
        return out;
    }

    void load(const std::vector<uint8_t> &bytes) override {
        if (bytes.size() != saved_size || std::memcmp(bytes.data(), magic, sizeof(magic)) != 0) {
            std::ostringstream message;
            message << "random model: " << bytes.size() << " bytes are not a saved random model";
            throw ModelError(message.str());
        }
        uint32_t saved_features = 0;
        for (int i = 0; i < 4; i++) {
            saved_features |= uint32_t(bytes[sizeof(magic) + i]) << (8 * i);
        }
        if (saved_features != uint32_t(num_features_)) {
            std::ostringstream message;
            message << "random model: saved model has " << saved_features
                    << " features, this model expects " << num_features_;
            throw ModelError(message.str());
        }
        uint64_t seed = 0;
        for (int i = 0; i < 8; i++) {
            seed |= uint64_t(bytes[sizeof(magic) + 4 + i]) << (8 * i);
        }
        seed_ = seed;
    }

private:
    int num_features_;
    uint64_t seed_;
};

} // namespace

std::unique_ptr<CostModel> make_random_model(int num_features, uint64_t seed) {
    return std::make_unique<RandomModel>(num_features, seed);
}

} // namespace opgen::costmodel
