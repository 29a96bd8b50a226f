#include "tuner/ModelStore.h"

#include "base/Error.h"
#include "tuner/Features.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>

namespace opgen::tuner {

std::string models_dir() { return OPGEN_MODELS_DIR; }

std::string default_model_path(const Target &target) { return models_dir() + "/" + target.name + ".model"; }

std::unique_ptr<costmodel::CostModel> load_model_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    user_check(bool(in)) << "model file '" << path << "' cannot be read";
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto model = costmodel::make_xgboost_model(num_features());
    try {
        model->load(bytes);
    } catch (const costmodel::ModelError &e) {
        throw costmodel::ModelError("model file '" + path + "': " + e.what());
    }
    return model;
}

void save_model_file(const costmodel::CostModel &model, const std::string &path) {
    std::vector<uint8_t> bytes = model.save();
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        user_check(bool(out)) << "model file '" << path << "' cannot be written";
        out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
        out.close();
        if (!out) {
            std::remove(tmp.c_str());
            user_check(false) << "model file '" << path << "' cannot be written";
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        user_check(false) << "model file '" << path << "' cannot be written";
    }
}

std::unique_ptr<costmodel::CostModel> load_default_model(const Target &target) {
    const std::string path = default_model_path(target);
    std::ifstream probe(path);
    if (!probe) return nullptr;
    try {
        return load_model_file(path);
    } catch (const costmodel::ModelError &) {
        return nullptr;
    }
}

std::string quality_json(const costmodel::RankingQuality &q, size_t eval_candidates, size_t eval_tasks) {
    nlohmann::json j;
    j["pairwise_accuracy"] = q.pairwise_accuracy;
    j["kendall_tau"] = q.kendall_tau;
    j["top1_regret"] = q.top1_regret;
    j["top5_regret"] = q.top5_regret;
    j["eval_candidates"] = eval_candidates;
    j["eval_tasks"] = eval_tasks;
    return j.dump();
}

}  // namespace opgen::tuner
