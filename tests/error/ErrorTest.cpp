// Every user error of the op language and of shapes, with its full message: where (file:line:col)
// and what, in words a user can act on. A message changed on purpose changes here too.
#include "core/OpLibrary.h"
#include "core/Parser.h"
#include "core/Reference.h"
#include "core/Shape.h"

#include <gtest/gtest.h>

#include <string>

using namespace opgen;

namespace {

// The message parse_compute raises for `text` (named bad.op), or a note that it raised none.
std::string parse_error(const std::string &text) {
    try {
        parse_compute(text, "bad.op");
    } catch (const UserError &e) {
        return e.what();
    }
    return "(no error)";
}

// An op around one statement body reading X and Z; the body starts at line 6, column 8.
std::string body_error(const std::string &body) {
    return parse_error("op t\nparam M\ninput X: f32[M]\ninput Z: f32[M]\noutput Y: f32[M]\n"
                       "Y[i] = " +
                       body + "\n");
}

std::string shape_error(const ComputeDef &def, const std::string &shape,
                        int64_t max_bytes = int64_t(8) << 30) {
    try {
        bind_shape(def, parse_shape_text(shape), max_bytes);
    } catch (const UserError &e) {
        return e.what();
    }
    return "(no error)";
}

std::string bundled_path(const std::string &op) {
    return std::string(OPGEN_SOURCE_DIR) + "/ops/" + op + ".op";
}

ComputeDef bundled(const std::string &op) {
    return load_op_file(bundled_path(op));
}

const char *matmul_text = "op matmul\nparam M, N, K\ninput A: f32[M, K]\ninput B: f32[K, N]\n"
                          "output C: f32[M, N]\nC[m, n] = sum(k: K) A[m, k] * B[k, n]\n";

} // namespace

// --- Syntax -------------------------------------------------------------------------------------

TEST(SyntaxError, FileMustStartWithOp) {
    EXPECT_EQ(parse_error("# doc\nparam M\n"),
              "bad.op:2:1: expected 'op <name>' to start the file, found 'param'");
    EXPECT_EQ(parse_error(""),
              "bad.op:1:1: expected 'op <name>' to start the file, found end of file");
    EXPECT_EQ(parse_error("op\n"), "bad.op:1:3: expected an op name, found end of line");
    EXPECT_EQ(parse_error("op sum\n"), "bad.op:1:4: 'sum' is a keyword and cannot name an op");
    EXPECT_EQ(parse_error("op a b\n"), "bad.op:1:6: expected end of line, found 'b'");
}

TEST(SyntaxError, OneOpPerFile) {
    EXPECT_EQ(parse_error(std::string(matmul_text) + "op other\n"),
              "bad.op:7:1: a file holds one op; found a second 'op' (put each op in its own file)");
}

TEST(SyntaxError, UnexpectedCharacters) {
    EXPECT_EQ(parse_error("op t\nparam M $\n"), "bad.op:2:9: unexpected character '$'");
    EXPECT_EQ(parse_error("op t\nparam M\x01\n"), "bad.op:2:8: unexpected character byte 0x01");
    EXPECT_EQ(body_error("X[i] & Z[i]"),
              "bad.op:6:13: unexpected character '&' (did you mean '&&'?)");
    EXPECT_EQ(body_error("X[i] | Z[i]"),
              "bad.op:6:13: unexpected character '|' (did you mean '||'?)");
    EXPECT_EQ(body_error("X[i] % 2"), "bad.op:6:13: unexpected character '%'");
}

TEST(SyntaxError, MalformedNumbers) {
    EXPECT_EQ(body_error("2x * X[i] + Z[i]"), "bad.op:6:8: malformed number '2x'");
    EXPECT_EQ(body_error("1.5.2 * X[i] + Z[i]"), "bad.op:6:8: malformed number '1.5.'");
    EXPECT_EQ(body_error("1e * X[i] + Z[i]"), "bad.op:6:8: malformed number '1e'");
    EXPECT_EQ(body_error("X[i] * 3000000000 + Z[i]"),
              "bad.op:6:15: integer 3000000000 is too large (the limit is 2147483647)");
    EXPECT_EQ(body_error("X[i] * 1e39 + Z[i]"),
              "bad.op:6:15: float 1e39 is out of the range of f32");
    EXPECT_EQ(parse_error("op t\nparam M = 99999999999\n"),
              "bad.op:2:11: integer 99999999999 is too large (the limit is 2147483647)");
}

TEST(SyntaxError, MissingPunctuation) {
    EXPECT_EQ(parse_error("op t\nparam M\ninput X f32[M]\n"),
              "bad.op:3:9: expected ':', found 'f32'");
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32 M\n"),
              "bad.op:3:14: expected '[', found 'M'");
    EXPECT_EQ(body_error("X[i + 1"), "bad.op:6:9: '[' is never closed");
    EXPECT_EQ(body_error("max(X[i], Z[i]]"),
              "bad.op:6:22: ']' does not match the '(' at line 6, column 11");
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M]\ninput Z: f32[M]\noutput Y: f32[M]\n"
                          "Y[i] X[i] + Z[i]\n"),
              "bad.op:6:6: expected '=', found 'X'");
    EXPECT_EQ(body_error("(X[i] + Z[i]"), "bad.op:6:8: '(' is never closed");
    EXPECT_EQ(body_error("X[i + 1) + Z[i]"),
              "bad.op:6:15: ')' does not match the '[' at line 6, column 9");
    EXPECT_EQ(body_error("X[i] + Z[i])"), "bad.op:6:19: expected end of line, found ')'");
    EXPECT_EQ(body_error("X[i] +"), "bad.op:6:14: expected an expression, found end of line (a "
                                    "statement continues on the next line only inside brackets)");
    EXPECT_EQ(body_error("X[i] * * Z[i]"), "bad.op:6:15: expected an expression, found '*'");
    EXPECT_EQ(parse_error("op t\nparam M,\n"),
              "bad.op:2:9: expected a parameter name, found end of line");
    EXPECT_EQ(parse_error("op t\nparam M\n= 3\n"),
              "bad.op:3:1: expected a declaration or statement, found '='");
}

TEST(SyntaxError, StatementCannotBreakOutsideBrackets) {
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M]\noutput Y: f32[M]\n"
                          "Y[i] = sum(k: M)\n    X[k]\n"),
              "bad.op:5:17: expected an expression, found end of line (a statement continues on "
              "the next line only inside brackets)");
}

TEST(SyntaxError, ReductionSyntax) {
    EXPECT_EQ(body_error("sum(X[i]) + Z[i]"),
              "bad.op:6:8: expected 'sum(var: extent, ...) expression', found 'sum' without a "
              "reduction variable");
    EXPECT_EQ(
        body_error("Z[i] + sum(k: M) X[k]"),
        "bad.op:6:15: a reduction 'sum(var: extent) ...' must be the whole right-hand side of "
        "a statement; compute it into a local tensor first");
    EXPECT_EQ(
        body_error("Z[i] * max(k: M) X[k]"),
        "bad.op:6:15: a reduction 'max(var: extent) ...' must be the whole right-hand side of "
        "a statement; compute it into a local tensor first");
    EXPECT_EQ(body_error("sum(k: M X[k]) + Z[i]"), "bad.op:6:17: expected ')', found 'X'");
    EXPECT_EQ(
        body_error("sum(k: 1.5) X[k] + Z[i]"),
        "bad.op:6:15: extent of 'k' must be an integer expression of parameters, found '1.5'");
    EXPECT_EQ(body_error("sum(i: M) X[i] + Z[i]"),
              "bad.op:6:12: reduction variable 'i' is already an index variable");
}

TEST(SyntaxError, NestingTooDeep) {
    std::string deep(300, '(');
    EXPECT_EQ(body_error(deep + "X[i]" + std::string(300, ')') + " + Z[i]"),
              "bad.op:6:208: expression is nested too deeply (more than 200 levels)");
    std::string chain = "X[i]";
    for (int k = 0; k < 1200; k++)
        chain += " + Z[i]";
    EXPECT_EQ(body_error(chain),
              "bad.op:6:6999: expression is too deep (more than 1000 operations on one path)");
    EXPECT_EQ(body_error(std::string(300, '-') + "X[i] + Z[i]"),
              "bad.op:6:207: expression is nested too deeply (more than 200 levels)");
}

// --- Declarations -------------------------------------------------------------------------------

TEST(DeclarationError, DuplicateDeclaration) {
    EXPECT_EQ(parse_error("op t\nparam M, M\n"), "bad.op:2:10: 'M' is declared twice");
    EXPECT_EQ(parse_error("op t\nparam M\ninput M: f32[M]\n"), "bad.op:3:7: 'M' is declared twice");
    EXPECT_EQ(parse_error("op t\nparam M\nlet M = 2\n"), "bad.op:3:5: 'M' is declared twice");
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M]\nlocal X: f32[M]\n"),
              "bad.op:4:7: 'X' is declared twice");
}

TEST(DeclarationError, ReservedNames) {
    EXPECT_EQ(parse_error("op t\nparam sum\n"),
              "bad.op:2:7: 'sum' is a keyword and cannot name a declaration");
    EXPECT_EQ(parse_error("op t\nparam M\ninput exp: f32[M]\n"),
              "bad.op:3:7: 'exp' is a built-in function and cannot name a declaration");
    EXPECT_EQ(parse_error("op t\nparam M\ninput f32: f32[M]\n"),
              "bad.op:3:7: 'f32' is a built-in function and cannot name a declaration");
}

TEST(DeclarationError, UnknownType) {
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f64[M]\n"),
              "bad.op:3:10: unknown type 'f64' (expected f32, f16, i8, i32, u8, bf16 or i64)");
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: [M]\n"),
              "bad.op:3:10: expected a type (f32, f16, i8, i32, u8, bf16 or i64), found '['");
}

TEST(DeclarationError, ParameterDefaults) {
    EXPECT_EQ(parse_error("op t\nattr stride\n"),
              "bad.op:2:6: attribute 'stride' needs a default value (attr stride = 1)");
    EXPECT_EQ(
        parse_error("op t\nparam K = 0\n"),
        "bad.op:2:11: parameter 'K' has default 0; a parameter is a size and must be positive");
    EXPECT_EQ(parse_error("op t\nattr pad = -1\n"),
              "bad.op:2:12: attribute 'pad' has default -1; an attribute must be zero or positive");
    EXPECT_EQ(parse_error("op t\nparam K = M\n"), "bad.op:2:11: expected an integer, found 'M'");
}

TEST(DeclarationError, Sizes) {
    EXPECT_EQ(
        parse_error("op t\nparam M\ninput X: f32[Q]\n"),
        "bad.op:3:14: unknown name 'Q' (sizes may use parameters, attributes and earlier lets)");
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M * 1.5]\n"),
              "bad.op:3:18: dimension of 'X' must be an integer expression of parameters, found "
              "'1.5'");
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M < 2]\n"),
              "bad.op:3:16: dimension of 'X': operator '<' is not allowed in a size");
    EXPECT_EQ(parse_error("op t\nparam M\nlet L = !M\n"),
              "bad.op:3:9: let 'L': operator '!' is not allowed in a size");
    EXPECT_EQ(parse_error("op t\nparam M\nlet L = exp(M)\n"),
              "bad.op:3:9: let 'L': 'exp' is not allowed in a size (only max and min)");
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M]\nlet L = X[0]\n"),
              "bad.op:4:9: tensor 'X' cannot be read in a size expression");
    EXPECT_EQ(
        parse_error("op t\nlet L = M\nparam M\n"),
        "bad.op:2:9: unknown name 'M' (sizes may use parameters, attributes and earlier lets)");
}

TEST(DeclarationError, ZeroPadOnlyOnInputs) {
    EXPECT_EQ(parse_error("op t\nparam M\noutput Y: f32[M] zero_pad\n"),
              "bad.op:3:18: only inputs can be zero_pad; 'Y' is an output");
    EXPECT_EQ(parse_error("op t\nparam M\nlocal T: f32[M] zero_pad\n"),
              "bad.op:3:17: only inputs can be zero_pad; 'T' is a local");
}

// --- Statements ---------------------------------------------------------------------------------

TEST(StatementError, UnknownNames) {
    EXPECT_EQ(body_error("X[j] + Z[i]"),
              "bad.op:6:10: unknown name 'j' (not a parameter, attribute, let or index variable of "
              "this statement)");
    EXPECT_EQ(body_error("W[i] + X[i] + Z[i]"), "bad.op:6:8: unknown tensor 'W'");
    EXPECT_EQ(body_error("X + Z[i]"), "bad.op:6:8: tensor 'X' must be indexed: X[...]");
    EXPECT_EQ(body_error("exp + X[i] + Z[i]"),
              "bad.op:6:8: function 'exp' must be called: exp(...)");
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M]\noutput Y: f32[M]\nW[i] = X[i]\n"),
              "bad.op:5:1: unknown tensor 'W' (declare it with input, output or local before its "
              "statement)");
}

TEST(StatementError, UnknownTensor) {
    EXPECT_EQ(body_error("X[i] * Q[i] + Z[i]"), "bad.op:6:15: unknown tensor 'Q'");
}

TEST(StatementError, WrongIndexRank) {
    EXPECT_EQ(body_error("X[i, i] + Z[i]"),
              "bad.op:6:8: tensor 'X' has rank 1 but is indexed with 2 indices");
    EXPECT_EQ(body_error("X[] + Z[i]"),
              "bad.op:6:8: tensor 'X' has rank 1 but is indexed with 0 indices");
    EXPECT_EQ(
        parse_error("op t\nparam M\ninput X: f32[M, M]\noutput Y: f32[M, M]\nY[i] = X[i, i]\n"),
        "bad.op:5:1: tensor 'Y' has rank 2 but is indexed with 1 variable");
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M, M]\noutput Y: f32[M, M]\n"
                          "Y[i, j] = X[i]\n"),
              "bad.op:5:11: tensor 'X' has rank 2 but is indexed with 1 index");
}

TEST(StatementError, NonAffineIndex) {
    EXPECT_EQ(body_error("X[i * i] + Z[i]"),
              "bad.op:6:10: index 'i * i' of tensor 'X' is not affine: use sums of index variables "
              "times integer constants or parameters");
    EXPECT_EQ(body_error("X[i / 2] + Z[i]"),
              "bad.op:6:10: index 'i / 2' of tensor 'X' is not affine: use sums of index variables "
              "times integer constants or parameters");
    EXPECT_EQ(body_error("X[max(i, 1)] + Z[i]"),
              "bad.op:6:10: index 'max(i, 1)' of tensor 'X' is not affine: use sums of index "
              "variables times integer constants or parameters");
    EXPECT_EQ(body_error("X[i32(Z[i])] + Z[i]"),
              "bad.op:6:10: index 'i32(Z[i])' of tensor 'X' is not affine: use sums of index "
              "variables times integer constants or parameters");
}

TEST(StatementError, UnknownFunctionOrWrongArity) {
    EXPECT_EQ(
        body_error("foo(X[i]) + Z[i]"),
        "bad.op:6:8: unknown function 'foo' (known: exp, log, tanh, sqrt, erf, abs, round, max, min, "
        "select, sin, cos, f32, f16, i8, i32, u8, bf16, i64)");
    EXPECT_EQ(body_error("exp(X[i], Z[i])"),
              "bad.op:6:8: function 'exp' takes 1 argument, found 2");
    EXPECT_EQ(body_error("select(X[i] > 0.0, Z[i])"),
              "bad.op:6:8: function 'select' takes 3 arguments, found 2");
    EXPECT_EQ(body_error("max(X[i]) + Z[i]"),
              "bad.op:6:8: function 'max' takes 2 arguments, found 1");
    EXPECT_EQ(body_error("tanh() + X[i] + Z[i]"),
              "bad.op:6:8: function 'tanh' takes 1 argument, found 0");
}

TEST(StatementError, DefinitionsAndAssignments) {
    const std::string head = "op t\nparam M\ninput X: f32[M]\nlocal T: f32[M]\noutput Y: f32[M]\n";
    EXPECT_EQ(parse_error(head + "T[i] = X[i]\nT[i] = X[i]\nY[i] = T[i]\n"),
              "bad.op:7:1: tensor 'T' is defined twice");
    EXPECT_EQ(parse_error(head + "Y[i] = T[i]\n"),
              "bad.op:6:8: tensor 'T' is read before it is defined");
    EXPECT_EQ(parse_error(head + "T[i] = T[i] + X[i]\nY[i] = T[i]\n"),
              "bad.op:6:8: tensor 'T' is read before it is defined");
    EXPECT_EQ(parse_error(head + "X[i] = 1.0\n"), "bad.op:6:1: input 'X' cannot be assigned");
    EXPECT_EQ(parse_error(head + "T[i, i] = X[i]\n"),
              "bad.op:6:6: index variable 'i' appears twice on the left-hand side");
    EXPECT_EQ(parse_error(head + "T[M] = X[M]\n"),
              "bad.op:6:3: index variable 'M' hides a declaration or built-in of the same name");
    EXPECT_EQ(parse_error(head + "T[exp] = X[exp]\n"),
              "bad.op:6:3: index variable 'exp' hides a declaration or built-in of the same name");
    EXPECT_EQ(
        parse_error(head + "T[i] = sum(X: M) X[i]\n"),
        "bad.op:6:12: reduction variable 'X' hides a declaration or built-in of the same name");
    EXPECT_EQ(parse_error(head + "sum[i] = X[i]\n"),
              "bad.op:6:1: expected a declaration or statement, found keyword 'sum'");
}

// --- The op as a whole --------------------------------------------------------------------------

TEST(OpError, MissingOutput) {
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M]\nlocal T: f32[M]\nT[i] = X[i]\n"),
              "bad.op:6:1: op 't' has no output tensor (declare one: output Y: f32[...])");
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M]\noutput Y: f32[M]\noutput Z: f32[M]\n"),
              "bad.op:5:8: op 't' has a second output 'Z' (an op has exactly one output tensor)");
    EXPECT_EQ(
        parse_error("op t\nparam M\ninput X: f32[M]\noutput Y: f32[M]\n"),
        "bad.op:5:1: op 't' has no statements (the output 'Y' must be defined: Y[...] = ...)");
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M]\nlocal T: f32[M]\noutput Y: f32[M]\n"
                          "T[i] = X[i]\n"),
              "bad.op:5:8: tensor 'Y' is declared but never defined");
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M]\nlocal T: f32[M]\noutput Y: f32[M]\n"
                          "Y[i] = X[i]\nT[i] = Y[i]\n"),
              "bad.op:7:1: the last statement must define the output 'Y'");
}

TEST(OpError, DeclaredButUnused) {
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M]\ninput B: f32[M]\noutput Y: f32[M]\n"
                          "Y[i] = X[i]\n"),
              "bad.op:4:7: input 'B' is never read");
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M]\nlocal T: f32[M]\noutput Y: f32[M]\n"
                          "T[i] = X[i]\nY[i] = X[i]\n"),
              "bad.op:4:7: local 'T' is defined but never read");
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M]\nlocal T: f32[M]\noutput Y: f32[M]\n"
                          "Y[i] = X[i]\n"),
              "bad.op:4:7: tensor 'T' is declared but never defined");
}

// --- Shapes -------------------------------------------------------------------------------------

TEST(ShapeError, MissingParameters) {
    ComputeDef def = parse_compute(matmul_text, "matmul.op");
    EXPECT_EQ(shape_error(def, "M=2,N=2"),
              "op 'matmul': shape is missing parameter 'K' (give K=<value>)");
    EXPECT_EQ(shape_error(def, "N=2"),
              "op 'matmul': shape is missing parameters 'M', 'K' (give M=<value>)");
    EXPECT_EQ(shape_error(def, ""),
              "op 'matmul': shape is missing parameters 'M', 'N', 'K' (give M=<value>)");
}

TEST(ShapeError, UnknownParameter) {
    ComputeDef def = parse_compute(matmul_text, "matmul.op");
    EXPECT_EQ(shape_error(def, "M=2,X=3,N=2,K=1"),
              "op 'matmul' has no parameter 'X' (parameters: M, N, K)");
    // Lets are derived, not given.
    EXPECT_EQ(shape_error(bundled("conv2d_nchw"), "N=1,C=1,H=4,W=4,F=1,OH=4"),
              "op 'conv2d_nchw' has no parameter 'OH' (parameters: N, C, H, W, F, KH, KW, stride, "
              "pad, dilation)");
}

TEST(ShapeError, NonPositiveValues) {
    ComputeDef def = parse_compute(matmul_text, "matmul.op");
    EXPECT_EQ(shape_error(def, "M=0,N=2,K=3"), "op 'matmul': M=0 must be positive");
    EXPECT_EQ(shape_error(def, "M=2,N=-4,K=3"), "op 'matmul': N=-4 must be positive");
    EXPECT_EQ(shape_error(bundled("conv2d_nchw"), "N=1,C=1,H=4,W=4,F=1,pad=-1"),
              "op 'conv2d_nchw': pad=-1 must be zero or positive");
}

TEST(ShapeError, MalformedShapeText) {
    ComputeDef def = parse_compute(matmul_text, "matmul.op");
    EXPECT_EQ(shape_error(def, "M=2,,N=3"),
              "shape 'M=2,,N=3': empty entry (expected NAME=VALUE,...)");
    EXPECT_EQ(shape_error(def, "M=2,"), "shape 'M=2,': empty entry (expected NAME=VALUE,...)");
    EXPECT_EQ(shape_error(def, "M=2,N"), "shape 'M=2,N': entry 'N' is not NAME=VALUE");
    EXPECT_EQ(shape_error(def, "M=two,N=2,K=2"),
              "shape 'M=two,N=2,K=2': value 'two' of M is not an integer");
    EXPECT_EQ(shape_error(def, "M=2.5"), "shape 'M=2.5': value '2.5' of M is not an integer");
    EXPECT_EQ(shape_error(def, "M="), "shape 'M=': value '' of M is not an integer");
    EXPECT_EQ(
        shape_error(def, "M=99999999999999999999"),
        "shape 'M=99999999999999999999': value '99999999999999999999' of M is not an integer");
    EXPECT_EQ(shape_error(def, "=3"), "shape '=3': '' is not a parameter name");
    EXPECT_EQ(shape_error(def, "3M=3"), "shape '3M=3': '3M' is not a parameter name");
    EXPECT_EQ(shape_error(def, "M-1=3"), "shape 'M-1=3': 'M-1' is not a parameter name");
    EXPECT_EQ(shape_error(def, "M=1,M=2"), "shape 'M=1,M=2': M is given twice");
}

TEST(ShapeError, TooLarge) {
    ComputeDef def = parse_compute(matmul_text, "matmul.op");
    EXPECT_EQ(shape_error(def, "M=2147483648,N=1,K=1"),
              "op 'matmul': M=2147483648 is too large (the limit is 2147483647)");
    EXPECT_EQ(shape_error(def, "M=2000000,N=2000000,K=2"),
              "op 'matmul' at shape K=2,M=2000000,N=2000000 needs 16000032000000 bytes of tensors, "
              "more than the limit of 8589934592");
    EXPECT_EQ(shape_error(def, "M=64,N=64,K=64", 1000),
              "op 'matmul' at shape K=64,M=64,N=64 needs 49152 bytes of tensors, more than the "
              "limit of 1000");
    ComputeDef wide = parse_compute("op w\nparam M\ninput X: f32[M]\noutput Y: f32[M * M]\n"
                                    "Y[i] = X[0]\n",
                                    "w.op");
    EXPECT_EQ(shape_error(wide, "M=65536"),
              "w.op:4:17: op 'w' at shape M=65536: tensor 'Y' would have extent 4294967296 in "
              "dimension 0 (M * M), more than 2147483647");
    ComputeDef huge = parse_compute("op h\nparam M\nlet L = M * M * M * M * M\ninput X: f32[M]\n"
                                    "output Y: f32[M]\nY[i] = X[i] + L\n",
                                    "h.op");
    EXPECT_EQ(shape_error(huge, "M=100000"),
              "h.op:3:19: op 'h' at shape M=100000: let L: 'M * M * M * M' overflows 64-bit "
              "integers");
}

namespace {
// An elementwise op with `view` on line 5.
std::string view_op(const std::string &view) {
    return "op t\nparam M, N\nattr s = 1\nlet L = M*N\n" + view +
           "\ninput X: f32[M, N]\noutput Y: f32[M, N]\nY[i, j] = X[i, j]\n";
}
}  // namespace

TEST(DeclarationError, Views) {
    EXPECT_EQ(parse_error(view_op("view M > 1: s = 2")), "bad.op:5:13: a view sets parameters; 's' is an attribute");
    EXPECT_EQ(parse_error(view_op("view M > 1: Q = 2")), "bad.op:5:13: a view sets parameters; 'Q' is not a parameter");
    EXPECT_EQ(parse_error(view_op("view M + 1: M = 1")), "bad.op:5:6: a view's condition compares parameters (==, !=, <, <=, >, >=, joined by && "
              "and ||), found 'M + 1'");
    EXPECT_EQ(parse_error(view_op("view L > 1: M = 1")), "bad.op:5:6: a view uses parameters and attributes, not let 'L' (lets follow from the "
              "shape the view makes)");
    EXPECT_EQ(parse_error(view_op("view M > 1: M = 1, N = L")), "bad.op:5:24: a view uses parameters and attributes, not let 'L' (lets follow from the "
              "shape the view makes)");
    EXPECT_EQ(parse_error(view_op("view M > 1: M = 1, M = 2")), "bad.op:5:20: the view sets 'M' twice");
    EXPECT_EQ(parse_error(view_op("view M > 1 M = 1")), "bad.op:5:12: expected ':', found 'M'");
    EXPECT_EQ(parse_error(view_op("view M > 1: M = X[0, 0]")), "bad.op:5:17: unknown tensor 'X'");
}

// A view must name the same computation over the same memory, and its shape must be its own view.
TEST(ShapeError, ViewsKeepEveryTensorsSizeAndAreStable) {
    ComputeDef grows = parse_compute(view_op("view M > 1: M = 2*M"), "g.op");
    EXPECT_EQ(shape_error(grows, "M=2,N=3"), "g.op:5:1: op 't': the view from M=2,N=3,s=1 to M=4,N=3,s=1 changes tensor 'X' from 6 "
              "to 12 elements; a view must keep every tensor's size");
    ComputeDef swaps = parse_compute(view_op("view N > 1: M = N, N = M"), "w.op");
    EXPECT_EQ(shape_error(swaps, "M=2,N=3"), "w.op:5:1: op 't': the view from M=2,N=3,s=1 to M=3,N=2,s=1 is not stable: applied "
              "to M=3,N=2,s=1 it gives another shape");
    ComputeDef zero = parse_compute(view_op("view M > 1: M = M - 2, N = N"), "z.op");
    EXPECT_EQ(shape_error(zero, "M=2,N=3"), "z.op:5:1: op 't' at shape M=2,N=3,s=1: view sets M=0; a parameter must be between 1 "
              "and 2147483647");
}

TEST(ShapeError, ConvOutputSizeNotPositive) {
    ComputeDef def = bundled("conv2d_nchw");
    // A 5x5 window without padding does not fit in a 3-row input: OH = (3 - 4 - 1) / 1 + 1 = -1.
    EXPECT_EQ(
        shape_error(def, "N=1,C=1,H=3,W=8,F=1,KH=5,KW=5,pad=0"),
        bundled_path("conv2d_nchw") +
            ":12:21: op 'conv2d_nchw' at shape C=1,F=1,H=3,KH=5,KW=5,N=1,W=8,dilation=1,pad=0,"
            "stride=1: tensor 'Y' would have extent -1 in dimension 2 (OH = (H + 2 * pad - "
            "dilation * (KH - 1) - 1) / stride + 1); sizes must be positive");
    EXPECT_EQ(shape_error(def, "N=1,C=1,H=8,W=8,F=1,stride=0"),
              bundled_path("conv2d_nchw") +
                  ":7:46: op 'conv2d_nchw' at shape C=1,F=1,H=8,KH=3,KW=3,N=1,W=8,dilation=1,pad=1,"
                  "stride=0: let OH: '(H + 2 * pad - dilation * (KH - 1) - 1) / stride' divides by "
                  "zero");
}

TEST(ShapeError, ReductionExtentNotPositive) {
    ComputeDef def = parse_compute("op r\nparam M, K\ninput X: f32[M, K]\noutput Y: f32[M]\n"
                                   "Y[m] = sum(k: K - 3) X[m, k]\n",
                                   "r.op");
    EXPECT_EQ(shape_error(def, "M=2,K=3"),
              "r.op:5:12: op 'r' at shape K=3,M=2: reduction variable 'k' would have extent 0 "
              "(K - 3); it must be between 1 and 2147483647");
}

// --- Reading outside a tensor -------------------------------------------------------------------

TEST(ShapeError, ReadOutsideAnInputThatIsNotZeroPad) {
    ComputeDef def = parse_compute("op t\nparam M\ninput X: f32[M]\noutput Y: f32[M]\n"
                                   "Y[i] = X[i + 1]\n",
                                   "t.op");
    EXPECT_EQ(shape_error(def, "M=5"),
              "t.op:5:10: op 't' at shape M=5: index 'i + 1' of input 'X' ranges over 1..5 but "
              "dimension 0 has extent 5 (declare 'X' zero_pad if reads outside it should give "
              "zero)");
    // A convolution with padding reads outside its input.
    ComputeDef conv =
        parse_compute("op c\nparam H, K = 3\nattr pad = 1\nlet OH = H + 2*pad - K + 1\n"
                      "input X: f32[H]\ninput Wt: f32[K]\noutput Y: f32[OH]\n"
                      "Y[y] = sum(r: K) X[y + r - pad] * Wt[r]\n",
                      "c.op");
    EXPECT_EQ(shape_error(conv, "H=8"),
              "c.op:8:20: op 'c' at shape H=8,K=3,pad=1: index 'y + r - pad' of input 'X' ranges "
              "over -1..8 but dimension 0 has extent 8 (declare 'X' zero_pad if reads outside it "
              "should give zero)");
    EXPECT_EQ(shape_error(conv, "H=8,pad=0"), "(no error)");
    // Exact over the domain: i - i is always 0.
    ComputeDef exact = parse_compute("op e\nparam M\ninput X: f32[M]\noutput Y: f32[M]\n"
                                     "Y[i] = X[i - i] + X[M - 1 - i]\n",
                                     "e.op");
    EXPECT_EQ(shape_error(exact, "M=5"), "(no error)");
    // zero_pad inputs and locals may be read anywhere in 32 bits.
    ComputeDef padded = parse_compute("op p\nparam M\ninput X: f32[M] zero_pad\noutput Y: f32[M]\n"
                                      "Y[i] = X[i * 100000 - 7]\n",
                                      "p.op");
    EXPECT_EQ(shape_error(padded, "M=5"), "(no error)");
    EXPECT_EQ(shape_error(padded, "M=30000"),
              "p.op:5:10: op 'p' at shape M=30000: index 'i * 100000 - 7' of 'X' leaves the 32-bit "
              "range of kernel indices");
}

// A reduction that reads an operand in groups (the dot-product packing) at an extent that is not a
// multiple of the group would leave the last elements out of the sum: binding refuses it.
TEST(ShapeError, GroupedReductionNeedsWholeGroups) {
    EXPECT_EQ(shape_error(bundled("matmul_u8s8"), "M=4,N=8,K=10"),
              bundled_path("matmul_u8s8") + ":12:35: op 'matmul_u8s8' at shape K=10,M=4,N=8: K=10 "
                                            "is not a multiple of 4: the reduction "
                                            "reads dimension 1 of 'A' in groups of 4 ('4 * kb + "
                                            "kk'), so its elements 8..9 would be left "
                                            "out of the sum (pad K to a multiple of 4 with zeros)");
    EXPECT_EQ(shape_error(bundled("matmul_u8s8"), "M=4,N=8,K=12"), "(no error)");
    EXPECT_NE(shape_error(bundled("matmul_bf16"), "M=4,N=8,K=7").find("K=7 is not a multiple of 2"),
              std::string::npos);
    // An operand whose groups run past its end (zero_pad reads zeros there) leaves nothing out.
    ComputeDef padded =
        parse_compute("op g\nparam K\nlet KB = (K + 3) / 4\ninput A: u8[K] zero_pad\n"
                      "input B: i8[KB, 4]\noutput C: i32[1]\n"
                      "C[i] = sum(kb: KB, kk: 4) A[4*kb + kk] * B[kb, kk]\n",
                      "g.op");
    EXPECT_EQ(shape_error(padded, "K=10"), "(no error)");
}

TEST(ShapeError, LetOutside32Bits) {
    ComputeDef def = parse_compute("op l\nparam M\nlet L = M * M * M\ninput X: f32[M]\n"
                                   "output Y: f32[M]\nY[i] = X[i] + L\n",
                                   "l.op");
    EXPECT_EQ(shape_error(def, "M=2000"),
              "l.op:3:5: op 'l' at shape M=2000: let L = M * M * M is 8000000000, outside the "
              "32-bit range of kernel constants");
}

// The reference still reports a read outside a local, which no shape check can see in general.
TEST(ReferenceError, ReadOutsideALocal) {
    ComputeDef def = parse_compute("op t\nparam M\ninput X: f32[M]\nlocal T: f32[M]\n"
                                   "output Y: f32[M]\nT[i] = X[i]\nY[i] = T[i + 1]\n",
                                   "t.op");
    BoundShape shape = bind_shape(def, "M=5");
    auto inputs = random_inputs(def, shape, 1);
    ReferenceEvaluator ref(def, shape, inputs);
    EXPECT_NO_THROW(ref.value("Y", {3}));
    try {
        ref.value("Y", {4});
        FAIL() << "no error";
    } catch (const UserError &e) {
        EXPECT_STREQ(e.what(), "op 't': read of T[5] is outside its extent at shape M=5 (declare "
                               "it zero_pad if out-of-range reads should give zero)");
    }
}

TEST(OpLanguageError, DoubleUnderscoreIsReserved) {
    EXPECT_EQ(parse_error("op t\nparam M\ninput X: f32[M]\noutput Y: f32[M]\nY[i__o] = X[i__o]\n"),
              "bad.op:5:3: name 'i__o' contains '__', which is reserved for generated loop variables");
}
