#include "core/Gather.h"

#include "core/StageGraph.h"

#include <algorithm>
#include <set>

namespace opgen {

std::vector<std::string> unit_reduction_vars(const Statement &s, const BoundShape &shape) {
    std::vector<std::string> out;
    for (const ReduceVar &r : s.reduce_vars) {
        if (shape.eval(r.extent) == 1) out.push_back(r.name);
    }
    return out;
}

std::optional<std::vector<std::string>> gather_dims(const ComputeDef &def, const Statement &s, const ExprNode &access,
                                                    const BoundShape &shape) {
    const TensorDecl *t = def.find_tensor(access.name);
    if (access.kind != ExprKind::Access || !t || t->role != TensorRole::Input) return std::nullopt;
    const std::vector<std::string> unit = unit_reduction_vars(s, shape);
    std::vector<std::string> dims;
    std::set<std::string> seen;
    bool strided = false;
    for (const Expr &index : access.args) {
        std::string var;
        for (const auto &[name, coefficient] : affine_coefficients(index, shape)) {
            if (name.empty() || coefficient == 0 || std::count(unit.begin(), unit.end(), name)) continue;
            if (!var.empty()) return std::nullopt;  // two variables (a window): not a gather
            var = name;
            strided = strided || coefficient > 1;
            if (coefficient < 1) return std::nullopt;
        }
        if (!var.empty() && !seen.insert(var).second) return std::nullopt;
        dims.push_back(var);
    }
    if (!strided) return std::nullopt;
    return dims;
}

std::string gathered_name(const std::string &tensor) { return tensor + "_gathered"; }

std::string gathered_var_name(const std::string &tensor, size_t k) { return tensor + "_g" + std::to_string(k); }

}  // namespace opgen
