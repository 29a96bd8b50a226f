// Where trained cost models live: a default model file per target in the repository
// (costmodel/models/<target>.model, made by `opgen model train`, see README) and the kernel
// cache's `models` table, which keeps every model trained for a target with its training-set size
// and quality figures.
#ifndef OPGEN_TUNER_MODEL_STORE_H
#define OPGEN_TUNER_MODEL_STORE_H

#include "costmodel/CostModel.h"
#include "store/KernelCache.h"
#include "core/Target.h"

#include <memory>
#include <string>

namespace opgen::tuner {

// The folder of the bundled default models.
std::string models_dir();
// The bundled default model file of `target`: models_dir()/<target.name>.model.
std::string default_model_path(const Target &target);

// Reads a model file saved by save_model_file. Raises UserError when the file cannot be read,
// and costmodel::ModelError (naming the file) when its bytes are not a model of this feature set.
std::unique_ptr<costmodel::CostModel> load_model_file(const std::string &path);
// Writes `model` to `path` through a temporary file and a rename: a failed write leaves nothing
// half written. Raises UserError when the file cannot be written.
void save_model_file(const costmodel::CostModel &model, const std::string &path);

// The target's bundled default model, or nullptr when there is none or it does not load (a model
// of an older feature set); the tuner then starts from the roofline estimate.
std::unique_ptr<costmodel::CostModel> load_default_model(const Target &target);

// The quality figures as the JSON stored with a model.
std::string quality_json(const costmodel::RankingQuality &q, size_t eval_candidates, size_t eval_tasks);

}  // namespace opgen::tuner

#endif
