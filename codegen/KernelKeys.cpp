#include "codegen/KernelKeys.h"

#include "core/InstructionFeatures.h"

#include <cmath>
#include <cstdio>
#include <exception>

namespace opgen {

const char *tuner_version() { return "opgen-tuner-2"; }

std::string halide_version() {
    // Halide 14's headers carry no version macros; CMake passes the package's version.
    return OPGEN_HALIDE_VERSION;
}

std::string target_key(const ComputeDef &def, const Target &target, int threads) {
    std::string name = target.name;
    for (const std::string &feature : instruction_features(def, target)) name += "+" + feature;
    return name + ":t" + std::to_string(threads);
}

std::vector<std::string> target_keys_of(const std::string &target_name, int threads) {
    const std::string t = ":t" + std::to_string(threads);
    std::vector<std::string> keys;
    for (const char *features : {"", "+avx512_vnni", "+avx512_vnni+amx_int8", "+avx512_bf16"}) {
        keys.push_back(target_name + features + t);
    }
    return keys;
}

bool names_target(const std::string &target_key, const Target &target) {
    if (target_key.compare(0, target.name.size(), target.name) != 0) return false;
    const std::string rest = target_key.substr(target.name.size());
    return rest.rfind(":t", 0) == 0 || rest.rfind("+", 0) == 0;
}

db::KernelKey kernel_key(const ComputeDef &def, const BoundShape &shape, const Target &target, int threads) {
    db::KernelKey k;
    k.op_name = def.name;
    k.op_hash = definition_hash(def.source);
    k.shape = shape.canonical;
    k.dtype = op_dtype(def);
    k.target = target_key(def, target, threads);
    k.halide_version = halide_version();
    k.tuner_version = tuner_version();
    return k;
}

db::KernelKey loaded_key(const db::KernelKey &key, double level) {
    if (!(level > 0)) return key;
    char suffix[48];
    std::snprintf(suffix, sizeof suffix, ":load%g", level);
    db::KernelKey k = key;
    k.target += suffix;
    return k;
}

double contention_level_of(const std::string &target_key) {
    auto pos = target_key.rfind(":load");
    if (pos == std::string::npos) return 0;
    try {
        size_t used = 0;
        const std::string text = target_key.substr(pos + 5);
        double level = std::stod(text, &used);
        return used == text.size() && std::isfinite(level) && level > 0 ? level : 0;
    } catch (const std::exception &) {
        return 0;
    }
}

}  // namespace opgen
