// Binding a ComputeDef to concrete sizes: "M=512,N=512,K=512" -> every parameter, attribute, let
// and tensor extent as an integer, plus the canonical text used in cache keys.
#ifndef OPGEN_CORE_SHAPE_H
#define OPGEN_CORE_SHAPE_H

#include "core/ComputeDef.h"

#include <map>
#include <string>
#include <vector>

namespace opgen {

struct BoundShape {
    std::map<std::string, int64_t> values;            // parameters, attributes and lets
    std::map<std::string, std::vector<int64_t>> dims; // tensor -> extents, outermost first
    std::string canonical; // parameters and attributes, sorted by name: "K=512,M=512,N=512"
    // The values of the shape as given, where a view of the op (ViewDecl) applied; `values` where
    // none did. What an outside library is handed (the bench's anchors) is this shape.
    std::map<std::string, int64_t> given;

    // Evaluates an integer expression of parameters (sizes, index offsets) with Halide's integer
    // division (rounding down for a positive divisor); a UserError on division by zero or 64-bit
    // overflow.
    int64_t eval(const Expr &e) const;
    int64_t elements(const std::string &tensor) const;
    // The extent of a statement's index variable (left-hand side or reduction).
    int64_t var_extent(const Statement &s, const std::string &var) const;
};

// Parses "NAME=INT,NAME=INT" (spaces allowed; empty text gives no values). Raises UserError
// naming the malformed part.
std::map<std::string, int64_t> parse_shape_text(const std::string &text);

// Binds every parameter and attribute (defaults fill the gaps), at the shape the op's first view
// whose condition holds makes of them (ComputeDef::views; the canonical text is then that shape's),
// and checks the result: every
// parameter without a default is given, no unknown name, parameters positive and attributes not
// negative, every value, tensor extent and reduction extent at most 2^31 - 1 (Halide's 32-bit
// extents) and extents positive, and the tensors together fit in `max_bytes` of memory. Lets may
// be zero or negative unless used as a size, and a view keeps every tensor's size and gives the same
// shape when applied again. Raises UserError naming the op, the shape and the parameter, let,
// tensor or view at fault.
BoundShape bind_shape(const ComputeDef &def, const std::map<std::string, int64_t> &given,
                      int64_t max_bytes = int64_t(8) << 30);
BoundShape bind_shape(const ComputeDef &def, const std::string &shape_text);

// Floating-point operations to compute the op once (a multiply-add counts as two).
double flop_count(const ComputeDef &def, const BoundShape &shape);
// Bytes that must move at least once: every input read and the output written.
double min_bytes_moved(const ComputeDef &def, const BoundShape &shape);

} // namespace opgen

#endif
