#include "core/InstructionFeatures.h"

#include "core/DotProduct.h"

namespace opgen {

std::vector<std::string> instruction_features(const ComputeDef &def, const Target &target) {
    std::vector<std::string> out;
    if (!main_is_fusable(def)) return out;
    switch (dot_product_types_group(def, target)) {
    case 4:
        out.push_back("avx512_vnni");
        if (target.has_feature("amx_int8")) out.push_back("amx_int8");
        break;
    case 2:
        out.push_back("avx512_bf16");
        break;
    default:
        break;
    }
    return out;
}

}  // namespace opgen
