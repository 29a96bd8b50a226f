#include "core/DotProduct.h"

#include <algorithm>
#include <utility>

namespace opgen {

namespace {

// The tensor read by `e` through any casts (i32(A[m, k]) reads A), or nullptr when `e` is not a
// read.
const ExprNode *read_through_casts(const ExprNode *e) {
    while (e->kind == ExprKind::Call && e->args.size() == 1 && dtype_from_name(e->name)) e = e->args[0].get();
    return e->kind == ExprKind::Access ? e : nullptr;
}

// The instruction's group for a product of `a` and `b` summed into `acc`, or 0.
int group_for_types(DType acc, DType a, DType b, const Target &target) {
    const bool u8s8 = (a == DType::U8 && b == DType::I8) || (a == DType::I8 && b == DType::U8);
    if (acc == DType::I32 && u8s8 && target.has_feature("avx512_vnni")) return 4;
    if (acc == DType::F32 && a == DType::BF16 && b == DType::BF16 && target.has_feature("avx512_bf16")) return 2;
    return 0;
}

// The main statement's product, as its two reads, when it is a sum of the product of two reads
// (through casts); nullptr pair otherwise.
std::pair<const ExprNode *, const ExprNode *> product_reads(const Statement &ms) {
    if (ms.reduce != ReduceKind::Sum || ms.reduce_vars.empty()) return {nullptr, nullptr};
    const ExprNode *body = ms.body.get();
    if (body->kind != ExprKind::Binary || body->name != "*") return {nullptr, nullptr};
    const ExprNode *a = read_through_casts(body->args[0].get());
    const ExprNode *b = read_through_casts(body->args[1].get());
    if (!a || !b) return {nullptr, nullptr};
    return {a, b};
}

}  // namespace

int dot_product_types_group(const ComputeDef &def, const Target &target) {
    const Statement &ms = main_statement(def);
    const auto [a, b] = product_reads(ms);
    if (!a) return 0;
    return group_for_types(def.find_tensor(ms.tensor)->dtype, def.find_tensor(a->name)->dtype,
                           def.find_tensor(b->name)->dtype, target);
}

int dot_product_group(const ComputeDef &def, const BoundShape &shape, const Target &target) {
    const Statement &ms = main_statement(def);
    const int group = dot_product_types_group(def, target);
    if (group == 0) return 0;
    const auto [a, b] = product_reads(ms);
    const ReduceVar &inner = ms.reduce_vars.back();
    if (shape.eval(inner.extent) != group) return 0;
    auto moves = [&](const ExprNode *read) {
        for (const Expr &i : read->args) {
            if (mentions_var(i, inner.name)) return true;
        }
        return false;
    };
    return moves(a) && moves(b) ? group : 0;
}

bool dot_product_point(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p) {
    const int group = main_is_fusable(def) ? dot_product_group(def, shape, target) : 0;
    if (group == 0 || p.axes.size() < 2 || p.vector_width <= 1 || p.vector_axis != 0) return false;
    const Statement &out = *def.statement_for(def.output().name);
    AxisTiling &vec = p.axes[0], &rows = p.axes[1];
    const int64_t cols = shape.var_extent(out, vec.var), nrows = shape.var_extent(out, rows.var);
    const int64_t wide = 4 * int64_t(p.vector_width);
    vec.reg = cols >= wide ? wide : vec.reg;
    vec.tile = std::min(cols, 4 * vec.reg);
    rows.reg = std::min<int64_t>(nrows, 4);
    rows.tile = std::min<int64_t>(nrows, 64);
    p.dot_product = group;
    p.packed.clear();
    return true;
}

}  // namespace opgen
