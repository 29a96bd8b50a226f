// parse_compute on well-formed ops: what the parsed ComputeDef holds, operator precedence, printing
// and parsing again, and the definition hash that keys the kernel cache. Malformed ops are in
// tests/error/.
#include "core/Parser.h"
#include "core/OpLibrary.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

using namespace opgen;

namespace {

std::string ops_dir() {
    return std::string(OPGEN_SOURCE_DIR) + "/ops";
}

// The body of the op's only (or last) statement, printed.
std::string body_of(const std::string &expr_text) {
    ComputeDef def = parse_compute("op t\nparam M\ninput X: f32[M]\ninput Z: f32[M]\n"
                                   "output Y: f32[M]\nY[i] = " +
                                       expr_text + " + X[i] * Z[i]\n",
                                   "t.op");
    // Strip the " + X[i] * Z[i]" that makes every input read.
    return to_string(def.statements.back().body->args[0]);
}

// Structural equality of two expressions, independent of printing.
bool same(const Expr &a, const Expr &b) {
    if (a->kind != b->kind || a->name != b->name || a->int_value != b->int_value ||
        a->float_value != b->float_value || a->args.size() != b->args.size()) {
        return false;
    }
    for (size_t i = 0; i < a->args.size(); i++) {
        if (!same(a->args[i], b->args[i]))
            return false;
    }
    return true;
}

} // namespace

TEST(Parser, ParsesMatmul) {
    ComputeDef def = load_op_file(ops_dir() + "/matmul.op");
    EXPECT_EQ(def.name, "matmul");
    ASSERT_EQ(def.params.size(), 3u);
    EXPECT_EQ(def.params[0].name, "M");
    EXPECT_EQ(def.params[1].name, "N");
    EXPECT_EQ(def.params[2].name, "K");
    EXPECT_FALSE(def.params[0].default_value.has_value());
    ASSERT_EQ(def.tensors.size(), 3u);
    EXPECT_EQ(def.inputs().size(), 2u);
    EXPECT_EQ(def.output().name, "C");
    EXPECT_EQ(def.output().dtype, DType::F32);
    ASSERT_EQ(def.statements.size(), 1u);
    const Statement &s = def.statements[0];
    EXPECT_EQ(s.tensor, "C");
    EXPECT_EQ(s.vars, (std::vector<std::string>{"m", "n"}));
    EXPECT_EQ(s.reduce, ReduceKind::Sum);
    ASSERT_EQ(s.reduce_vars.size(), 1u);
    EXPECT_EQ(s.reduce_vars[0].name, "k");
    EXPECT_EQ(to_string(s.reduce_vars[0].extent), "K");
    EXPECT_EQ(to_string(s.body), "A[m, k] * B[k, n]");
    EXPECT_EQ(s.loc.line, 8);
    EXPECT_EQ(s.loc.col, 1);
    EXPECT_EQ(def.find_tensor("A")->loc.str(), ops_dir() + "/matmul.op:5:8");
}

TEST(Parser, ParsesConvWithAttrsLetsAndZeroPad) {
    ComputeDef def = load_op_file(ops_dir() + "/conv2d_nchw.op");
    ASSERT_NE(def.find_param("stride"), nullptr);
    EXPECT_TRUE(def.find_param("stride")->is_attr);
    EXPECT_EQ(def.find_param("pad")->default_value, 1);
    EXPECT_EQ(def.find_param("KH")->default_value, 3);
    EXPECT_FALSE(def.find_param("KH")->is_attr);
    EXPECT_FALSE(def.find_param("N")->default_value.has_value());
    ASSERT_EQ(def.lets.size(), 2u);
    EXPECT_EQ(def.lets[0].name, "OH");
    EXPECT_EQ(to_string(def.lets[0].value), "(H + 2 * pad - dilation * (KH - 1) - 1) / stride + 1");
    EXPECT_TRUE(def.find_tensor("X")->zero_pad);
    EXPECT_FALSE(def.find_tensor("Wt")->zero_pad);
    const Statement &s = def.statements.back();
    ASSERT_EQ(s.reduce_vars.size(), 3u);
    EXPECT_EQ(s.reduce_vars[0].name, "c");
    EXPECT_EQ(s.reduce_vars[2].name, "rx");
    // The statement wraps inside the bracket of X's index list.
    EXPECT_EQ(to_string(s.body),
              "X[n, c, y * stride + ry * dilation - pad, x * stride + rx * dilation - pad] * "
              "Wt[f, c, ry, rx]");
}

TEST(Parser, DocIsTheCommentBlockBeforeOp) {
    ComputeDef def = parse_compute("\n# First line.\n#   indented second\n#\n# fourth\n\nop t\n"
                                   "# not doc\nparam M\ninput X: f32[M]\noutput Y: f32[M]\n"
                                   "Y[i] = X[i]  # trailing comment\n",
                                   "t.op");
    EXPECT_EQ(def.doc, "First line.\n  indented second\n\nfourth");
    ComputeDef none =
        parse_compute("op t\nparam M\ninput X: f32[M]\noutput Y: f32[M]\nY[i] = X[i]\n", "t.op");
    EXPECT_EQ(none.doc, "");
    ComputeDef crlf = parse_compute("# Doc.\r\nop t\r\nparam M\r\ninput X: f32[M]\r\n"
                                    "output Y: f32[M]\r\nY[i] = X[i]\r\n",
                                    "t.op");
    EXPECT_EQ(crlf.doc, "Doc.");
    EXPECT_EQ(crlf.statements.size(), 1u);
}

TEST(Parser, Precedence) {
    // * and / bind tighter than + and -, which bind tighter than comparisons, then &&, then ||;
    // all are left-associative.
    EXPECT_EQ(body_of("1.0 + 2.0 * 3.0"), "1.0 + 2.0 * 3.0");
    EXPECT_EQ(body_of("(1.0 + 2.0) * 3.0"), "(1.0 + 2.0) * 3.0");
    EXPECT_EQ(body_of("X[i] - Z[i] - 1.0"), "X[i] - Z[i] - 1.0");
    EXPECT_EQ(body_of("X[i] - (Z[i] - 1.0)"), "X[i] - (Z[i] - 1.0)");
    EXPECT_EQ(body_of("X[i] / Z[i] / 2.0"), "X[i] / Z[i] / 2.0");
    EXPECT_EQ(body_of("X[i] / (Z[i] / 2.0)"), "X[i] / (Z[i] / 2.0)");
    EXPECT_EQ(body_of("select(X[i] < 1.0 || X[i] > 2.0 && Z[i] == 0.0, 1.0, 0.0)"),
              "select(X[i] < 1.0 || X[i] > 2.0 && Z[i] == 0.0, 1.0, 0.0)");

    ComputeDef def =
        parse_compute("op t\nparam M\ninput X: f32[M]\noutput Y: f32[M]\n"
                      "Y[i] = 1.0 + X[i] * 2.0 < 3.0 || !(X[i] > 0.0) && -X[i] >= 1.0\n",
                      "t.op");
    const Expr &e = def.statements[0].body;
    ASSERT_EQ(e->name, "||");
    EXPECT_EQ(e->args[0]->name, "<");
    EXPECT_EQ(e->args[0]->args[0]->name, "+");
    EXPECT_EQ(e->args[0]->args[0]->args[1]->name, "*");
    EXPECT_EQ(e->args[1]->name, "&&");
    EXPECT_EQ(e->args[1]->args[0]->kind, ExprKind::Unary);
    EXPECT_EQ(e->args[1]->args[0]->name, "!");
    EXPECT_EQ(e->args[1]->args[1]->name, ">=");
    EXPECT_EQ(e->args[1]->args[1]->args[0]->kind, ExprKind::Unary);

    // a - b - c is (a - b) - c.
    ComputeDef sub = parse_compute("op t\nparam M\ninput X: f32[M]\noutput Y: f32[M]\n"
                                   "Y[i] = X[i] - 1.0 - 2.0\n",
                                   "t.op");
    const Expr &s = sub.statements[0].body;
    EXPECT_EQ(s->args[0]->name, "-");
    EXPECT_EQ(s->args[1]->float_value, 2.0);
}

TEST(Parser, NegativeLiteralsFoldAndLiteralKinds) {
    ComputeDef def = parse_compute("op t\nparam M\nattr off = 2\ninput X: f32[M] zero_pad\n"
                                   "output Y: f32[M]\nY[i] = X[i - off] * -3 + -2.5e-1 + .5 + 1.\n",
                                   "t.op");
    const Expr &e = def.statements[0].body;
    EXPECT_EQ(to_string(e), "X[i - off] * -3 + -0.25 + 0.5 + 1.0");
    const Expr &lit = e->args[0]->args[0]->args[0]->args[1];
    EXPECT_EQ(lit->kind, ExprKind::IntConst);
    EXPECT_EQ(lit->int_value, -3);
    EXPECT_EQ(e->args[0]->args[0]->args[1]->kind, ExprKind::FloatConst);
    EXPECT_EQ(e->args[0]->args[0]->args[1]->float_value, -0.25);
}

TEST(Parser, MaxAndMinAreReductionsOrCalls) {
    ComputeDef def = parse_compute("op t\nparam M, N\ninput X: f32[M, N]\nlocal R: f32[M]\n"
                                   "output Y: f32[M]\nR[m] = max(n: N) X[m, n]\n"
                                   "Y[m] = min(R[m], max(X[m, 0], 0.0))\n",
                                   "t.op");
    EXPECT_EQ(def.statements[0].reduce, ReduceKind::Max);
    EXPECT_EQ(def.statements[1].reduce, ReduceKind::None);
    EXPECT_EQ(def.statements[1].body->kind, ExprKind::Call);
    EXPECT_EQ(to_string(def.statements[1].body), "min(R[m], max(X[m, 0], 0.0))");
    EXPECT_EQ(def.find_tensor("R")->role, TensorRole::Local);
}

// Printing an expression and parsing the text again gives the same expression, for every
// statement of every bundled op and for literals that print poorly with default stream precision.
TEST(Parser, ToStringRoundTrip) {
    int checked = 0;
    for (const auto &entry : std::filesystem::directory_iterator(ops_dir())) {
        if (entry.path().extension() != ".op")
            continue;
        ComputeDef def = load_op_file(entry.path().string());
        // Rebuild the op with every statement printed in place of the original text.
        std::string rebuilt;
        for (const auto &t : def.statements) {
            std::string lhs = t.tensor + "[";
            for (size_t i = 0; i < t.vars.size(); i++)
                lhs += (i ? ", " : "") + t.vars[i];
            lhs += "] = ";
            if (t.reduce != ReduceKind::None) {
                lhs += std::string(reduce_name(t.reduce)) + "(";
                for (size_t i = 0; i < t.reduce_vars.size(); i++) {
                    lhs += (i ? ", " : "") + t.reduce_vars[i].name + ": " +
                           to_string(t.reduce_vars[i].extent);
                }
                lhs += ") ";
            }
            rebuilt += lhs + to_string(t.body) + "\n";
        }
        size_t first_statement = def.source.find("\n" + def.statements[0].tensor + "[");
        ASSERT_NE(first_statement, std::string::npos) << def.name;
        ComputeDef reparsed =
            parse_compute(def.source.substr(0, first_statement + 1) + rebuilt, "again.op");
        ASSERT_EQ(reparsed.statements.size(), def.statements.size());
        for (size_t i = 0; i < def.statements.size(); i++) {
            EXPECT_TRUE(same(reparsed.statements[i].body, def.statements[i].body))
                << def.name << ": " << to_string(def.statements[i].body);
            EXPECT_EQ(to_string(reparsed.statements[i].body), to_string(def.statements[i].body));
            checked++;
        }
    }
    EXPECT_GE(checked, 22);

    for (const char *lit : {"0.7071067811865476", "1e-05", "0.1", "3.4028234663852886e+38",
                            "123456789.0", "2.5e-08"}) {
        std::string printed = body_of(std::string(lit) + " * X[i]");
        ComputeDef a = parse_compute("op t\nparam M\ninput X: f32[M]\noutput Y: f32[M]\nY[i] = " +
                                         std::string(lit) + " * X[i]\n",
                                     "t.op");
        ComputeDef b = parse_compute(
            "op t\nparam M\ninput X: f32[M]\noutput Y: f32[M]\nY[i] = " + printed + "\n", "t.op");
        EXPECT_EQ(a.statements[0].body->args[0]->float_value,
                  b.statements[0].body->args[0]->float_value)
            << lit << " printed as " << printed;
    }
    EXPECT_EQ(body_of("0.7071067811865476"), "0.7071067811865476");
    EXPECT_EQ(body_of("1e-5"), "1e-05");
    EXPECT_EQ(body_of("2.0"), "2.0");
}

// FNV-1a 64 by hand: offset basis 0xcbf29ce484222325; "a" (0x61): xor gives 0xcbf29ce484222344,
// times the prime 0x100000001b3 mod 2^64 gives 0xaf63dc4c8601ec8c (the FNV reference vector).
TEST(Parser, DefinitionHashIsFnv1a64) {
    EXPECT_EQ(definition_hash(""), "cbf29ce484222325");
    EXPECT_EQ(definition_hash("a"), "af63dc4c8601ec8c");
    EXPECT_EQ(definition_hash("foobar"), "85944171f73967e8");
    EXPECT_EQ(definition_hash("op x\n"), "ce1efb8341604148");
}

TEST(Parser, DefinitionHashIgnoresLineEndingsOnly) {
    std::string lf = "op t\nparam M\ninput X: f32[M]\noutput Y: f32[M]\nY[i] = X[i]\n";
    std::string crlf = "op t\r\nparam M\r\ninput X: f32[M]\r\noutput Y: f32[M]\r\nY[i] = X[i]\r\n";
    EXPECT_EQ(definition_hash(lf), definition_hash(crlf));
    EXPECT_EQ(definition_hash("op x\r\n"), "ce1efb8341604148");
    // A lone CR is content, and so is every other change.
    EXPECT_NE(definition_hash("op x\r"), definition_hash("op x\n"));
    EXPECT_NE(definition_hash(lf), definition_hash(lf + " "));
    EXPECT_NE(definition_hash(lf), definition_hash("op t\nparam M\ninput X: f32[M]\n"
                                                   "output Y: f32[M]\nY[i] = X[i]  \n"));
    // Stable: the parsed source is the text as given, and hashing it twice agrees.
    ComputeDef a = parse_compute(crlf, "a.op");
    EXPECT_EQ(a.source, crlf);
    EXPECT_EQ(definition_hash(a.source), definition_hash(lf));
}

// The bundled matmul's text is part of existing cache keys: an edit to the file (even a comment)
// would orphan every kernel tuned for it, so its hash is pinned here.
TEST(Parser, BundledMatmulHashIsPinned) {
    ComputeDef m = load_op_file(ops_dir() + "/matmul.op");
    EXPECT_EQ(definition_hash(m.source), "572689c3c8606970");
}

TEST(Parser, StatementsMayWrapInsideBrackets) {
    ComputeDef def = parse_compute("op t\nparam M\ninput X: f32[M]\noutput Y: f32[M]\n"
                                   "Y[i] = max(X[i],\n"
                                   "           0.0) + (X[i]\n"
                                   "                   * 2.0)\n",
                                   "t.op");
    EXPECT_EQ(to_string(def.statements[0].body), "max(X[i], 0.0) + X[i] * 2.0");
}

TEST(Parser, LocalsAndMultipleStatements) {
    ComputeDef def = load_op_file(ops_dir() + "/softmax.op");
    ASSERT_EQ(def.statements.size(), 4u);
    EXPECT_EQ(def.statements[0].tensor, "rmax");
    EXPECT_EQ(def.statements[0].reduce, ReduceKind::Max);
    EXPECT_EQ(def.statements[2].reduce, ReduceKind::Sum);
    EXPECT_EQ(def.statement_for("Y"), &def.statements[3]);
    EXPECT_EQ(def.find_tensor("ex")->role, TensorRole::Local);
    EXPECT_EQ(def.statement_for("X"), nullptr);
}

TEST(Parser, TypesAndCasts) {
    ComputeDef def = parse_compute("op t\nparam M\ninput X: f32[M]\nlocal A: i32[M]\n"
                                   "local B: i8[M]\nlocal H: f16[M]\noutput Y: f32[M]\n"
                                   "A[i] = i32(X[i] * 10.0)\nB[i] = i8(A[i])\nH[i] = f16(B[i])\n"
                                   "Y[i] = f32(H[i]) + f32(A[i])\n",
                                   "t.op");
    EXPECT_EQ(def.find_tensor("A")->dtype, DType::I32);
    EXPECT_EQ(def.find_tensor("B")->dtype, DType::I8);
    EXPECT_EQ(def.find_tensor("H")->dtype, DType::F16);
    EXPECT_EQ(dtype_bytes(DType::F16), 2);
    EXPECT_STREQ(dtype_name(DType::I8), "i8");
}

// A view changes which shape a key names, never what a shape computes: the hash (and with it every
// cached key of the op) leaves view lines out, and every other line in.
TEST(Parser, DefinitionHashLeavesOutViewLines) {
    std::string plain = "op t\nparam M, N\ninput X: f32[M, N]\noutput Y: f32[M, N]\nY[i, j] = X[i, j]\n";
    std::string viewed = "op t\nparam M, N\n  view M > 1: M = 1, N = M*N  # rows as one\n"
                         "input X: f32[M, N]\noutput Y: f32[M, N]\nY[i, j] = X[i, j]\n";
    EXPECT_EQ(definition_hash(viewed), definition_hash(plain));
    EXPECT_EQ(parse_compute(viewed, "t.op").views.size(), 1u);
    EXPECT_NE(definition_hash(plain), definition_hash("op t\nparam M, N\nviewer\n" + plain.substr(16)));
    EXPECT_NE(definition_hash(plain), definition_hash("op t\nparam M, N\n# view M > 1: M = 1\n" + plain.substr(16)));
}
