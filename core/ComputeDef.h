// The hardware-independent compute description of one operator, as parsed from an `.op` file:
// shape parameters, attributes, derived sizes, tensors, and statements. It says what is computed,
// never how (docs/design.md §2.1). Every later step (stages, tiling, lowering to Halide, the
// reference) reads this structure; nothing here knows about targets or Halide.
#ifndef OPGEN_CORE_COMPUTE_DEF_H
#define OPGEN_CORE_COMPUTE_DEF_H

#include "base/DType.h"
#include "base/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace opgen {

enum class ExprKind {
    FloatConst, // 1.5
    IntConst,   // 2
    Param,      // a shape parameter, attribute or let: an integer known once the shape is bound
    IndexVar,   // a pure (left-hand side) or reduction index variable
    Access,     // T[i, j]
    Unary,      // -x
    Binary,     // + - * / < <= > >= == != && ||
    Call,       // exp(x), max(a, b), select(c, a, b), f32(x), ...
};

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct ExprNode {
    ExprKind kind;
    SourceLoc loc;
    double float_value = 0;
    int64_t int_value = 0;
    std::string name; // Param, IndexVar, Access (tensor), Unary/Binary (operator), Call (function)
    std::vector<Expr> args;
};

// A shape parameter (`param M, N`) or attribute (`attr stride = 1`). Attributes always have a
// default; parameters may.
struct ParamDecl {
    std::string name;
    std::optional<int64_t> default_value;
    bool is_attr = false;
    SourceLoc loc;
};

// `let OH = (H + 2*pad - KH) / stride + 1`: an integer derived from parameters.
struct LetDecl {
    std::string name;
    Expr value;
    SourceLoc loc;
};

enum class TensorRole { Input, Output, Local };

struct TensorDecl {
    std::string name;
    TensorRole role = TensorRole::Input;
    DType dtype = DType::F32;
    std::vector<Expr> dims; // outermost first; the last dimension is contiguous in memory
    bool zero_pad = false;  // reads outside the tensor give zero (inputs only)
    SourceLoc loc;
};

// The name a generator source gives the Func that reads input `t`: "<name>_padded", its
// zero-exterior wrapper, for a zero-padded input; its own name otherwise. A schedule that wraps
// the reads (Func::in) must name this Func, not the buffer.
std::string read_func_name(const TensorDecl &t);

enum class ReduceKind { None, Sum, Max, Min };

const char *reduce_name(ReduceKind k);

struct ReduceVar {
    std::string name;
    Expr extent;
    SourceLoc loc;
};

// `T[i, j] = expr` or `T[i, j] = sum(k: K) expr`.
struct Statement {
    std::string tensor;
    std::vector<std::string> vars; // the left-hand side's index variables, outermost first
    ReduceKind reduce = ReduceKind::None;
    std::vector<ReduceVar> reduce_vars; // outermost first
    Expr body;
    SourceLoc loc;
};

// `view KH == 1 && KW == 1 && stride == 1 && pad == 0: H = 1, W = H*W`: where the condition holds,
// the op at the given shape computes what it computes at the shape the assignments make, over the
// same memory (a 1x1 convolution's pixels read as one row: the GEMM over pixels), so it is bound,
// tuned and cached at the latter (core/Shape.h, bind_shape). Views are not part of the definition
// hash: they change which shape a key names, never what a shape computes.
struct ViewDecl {
    Expr when;                                      // comparisons of parameters and attributes, && ||
    std::vector<std::pair<std::string, Expr>> set;  // parameter -> size over the given shape
    SourceLoc loc;
};

struct ComputeDef {
    std::string name;
    std::string doc; // the comment lines before `op`
    std::string filename;
    std::string source; // the file's full text; its hash is part of every cache key
    std::vector<ParamDecl> params;
    std::vector<LetDecl> lets;
    std::vector<ViewDecl> views;  // tried in order; the first whose condition holds applies
    std::vector<TensorDecl> tensors;
    std::vector<Statement> statements;

    const TensorDecl *find_tensor(const std::string &name) const;
    const ParamDecl *find_param(const std::string &name) const;
    const TensorDecl &output() const; // the one output tensor
    std::vector<const TensorDecl *> inputs() const;
    // The parameters without a default, in declaration order: the sizes a shape-generic kernel
    // takes at run time (codegen/GenericCode.h).
    std::vector<std::string> symbolic_params() const;
    // The statement that defines `tensor`, or nullptr.
    const Statement *statement_for(const std::string &tensor) const;
};

// The element types `def` computes with, as a cache key's dtype names them: the output's type when
// every input has it ("f32", as keys always read), else the inputs' types in declaration order,
// then the output's: "u8,i8->i32" (int8 matmul), "bf16,bf16->f32".
std::string op_dtype(const ComputeDef &def);

// Stable across platforms and compilers: FNV-1a 64 over the definition text with line endings
// normalised and `view` lines left out (ViewDecl), printed as 16 hex digits.
std::string definition_hash(const std::string &source);

// Prints an expression in the op language's own syntax.
std::string to_string(const Expr &e);

// Where an expression's text begins: a binary expression is located at its operator, so this
// walks down to its leftmost operand (for messages that quote the whole expression).
SourceLoc start_loc(const Expr &e);

// The first access of `tensor` in `e` (depth first), or nullptr.
const ExprNode *find_access(const Expr &e, const std::string &tensor);

// Whether the index variable `var` occurs in `e` (an access: in any of its indices).
bool mentions_var(const ExprNode &e, const std::string &var);
inline bool mentions_var(const Expr &e, const std::string &var) { return mentions_var(*e, var); }

// The type a comparison of `a` and `b` compares in: the widest type of the tensors they read
// (a float type before any integer one, then the larger), not the statement's, so a u8 truth
// value can compare float32 or int64 operands exactly (docs/design.md §6.1). nullopt when they
// read no tensor: constants and indices compare in the statement's type.
std::optional<DType> comparison_type(const ComputeDef &def, const Expr &a, const Expr &b);
// Every tensor access in `s`'s body.
std::vector<const ExprNode *> accesses(const Statement &s);

} // namespace opgen

#endif
