// Lowering and the reference agree on the language's semantics beyond float32 arithmetic: every
// value of a statement is computed in its tensor's type (integer division rounds down, i8 wraps,
// casts round to their type and back), transcendental functions work in every type, and the
// lowered Funcs have the declared types. Kernels run on f32 inputs and outputs, so the other types
// appear as locals.
#include "core/Lower.h"
#include "core/Kernel.h"
#include "core/Parser.h"
#include "core/Reference.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace opgen;

namespace {

// An op whose local T (of `type`) is defined by `body` over inputs X in [-1, 1) and Z in
// [-100, 100), and whose output is f32(T).
ComputeDef typed_op(const std::string &type, const std::string &body) {
    return parse_compute("op t\nparam M\ninput X: f32[M]\ninput Z: f32[M]\nlocal T: " + type +
                             "[M]\noutput Y: f32[M]\nT[i] = " + body +
                             "\nY[i] = f32(T[i]) + 0.0 * X[i] * Z[i]\n",
                         "t.op");
}

HostTensor run(const ComputeDef &def, const BoundShape &shape,
               const std::map<std::string, HostTensor> &inputs, bool heuristic) {
    Target host = host_target();
    const SchedulePoint hp = heuristic_point(def, shape, host);
    LoweredOp op = lower_for_point(def, shape, heuristic ? &hp : nullptr);
    if (heuristic) {
        apply_schedule(op, hp, host);
    } else {
        apply_default_schedule(op, host);
    }
    JitKernel kernel(op, host);
    HostTensor out;
    out.dims = shape.dims.at(def.output().name);
    out.data.assign(size_t(out.elements()), 0.0f);
    kernel.bind(inputs, out);
    kernel.run();
    return out;
}

// Halide (default schedule) against the reference at every point, within `tol`.
void expect_agree(const std::string &type, const std::string &body, double tol) {
    SCOPED_TRACE(type + ": " + body);
    ComputeDef def = typed_op(type, body);
    BoundShape shape = bind_shape(def, "M=67");
    auto inputs = random_inputs(def, shape, 11);
    for (auto &v : inputs["Z"].data)
        v *= 100.0f;
    HostTensor out = run(def, shape, inputs, false);
    Verification v = verify_output(def, shape, inputs, out, tol);
    EXPECT_TRUE(v.ok) << v.first_mismatch << " (max error " << v.max_error << ")";
    EXPECT_EQ(v.points_checked, 67);
}

} // namespace

TEST(Lower, IntegerStatementsMatchTheReferenceExactly) {
    expect_agree("i32", "i32(Z[i]) / 7", 0.0);
    expect_agree("i32", "Z[i] / -7", 0.0);
    expect_agree("i32", "(i - 33) / 4 * 3 - 5 / 2", 0.0); // rounds down: (-33) / 4 is -9
    expect_agree("i32", "Z[i] / (i - 30)", 0.0);          // and x / 0 is 0
    expect_agree("i32", "i32(X[i] * 1000.0) + 3", 0.0);
    expect_agree("i32", "f32(Z[i]) * 0.5", 0.0); // 0.5 truncates to 0 in an i32 statement
    expect_agree("i32", "select(Z[i] > 0 && i < 40, Z[i] * 1000, -Z[i])", 0.0);
    expect_agree("i32", "i8(Z[i] * 3) + abs(Z[i])", 0.0); // i8() saturates
    expect_agree("i8", "Z[i] * 3", 0.0);                  // i8 arithmetic wraps
    expect_agree("i8", "Z[i] + Z[i] + 100", 0.0);
    expect_agree("i8", "abs(Z[i] - 100)", 0.0);
    expect_agree("i8", "-Z[i] / 3", 0.0);
}

TEST(Lower, TranscendentalFunctionsInEveryType) {
    // Halide's erf exists for float32 only, and exp of an integer is a float32: lowering converts.
    expect_agree("i32", "exp(X[i] * 3.0) + sqrt(abs(Z[i]))", 0.0);
    expect_agree("i8", "tanh(X[i]) * 100 + log(abs(Z[i]) + 1)", 0.0);
    // float16: the reference rounds every operation to float16; Halide may reassociate before it
    // rounds, so agreement is to a few float16 ulps.
    expect_agree("f16", "erf(X[i]) * 1000.0", 2e-3);
    expect_agree("f16", "exp(X[i] * 4.0) * 10.0 + Z[i]", 2e-3);
    expect_agree("f16", "X[i] * Z[i] + X[i] / 3.0", 2e-3);
    expect_agree("f32", "f16(X[i] * 3.0) + i32(Z[i]) + i8(Z[i] * 10.0)", 0.0);
}

TEST(Lower, ComparisonsAndLogicGiveZeroOrOne) {
    expect_agree("f32", "(Z[i] > 1.5) + !(Z[i] < -3.5) * 2 + (X[i] != X[i])", 0.0);
    expect_agree("i32", "(Z[i] >= 10 || Z[i] <= -10) * 5 + (i == 3)", 0.0);
}

TEST(Lower, FuncTypesAreTheDeclaredTypes) {
    ComputeDef def = parse_compute("op t\nparam M\ninput X: f32[M]\nlocal A: i32[M]\n"
                                   "local B: i8[M]\nlocal H: f16[M]\nlocal S: i32[M]\n"
                                   "output Y: f32[M]\nA[i] = exp(X[i])\nB[i] = erf(f32(A[i]))\n"
                                   "H[i] = tanh(f32(B[i]))\nS[i] = sum(r: M) A[r]\n"
                                   "Y[i] = f32(H[i]) + f32(S[i])\n",
                                   "t.op");
    BoundShape shape = bind_shape(def, "M=4");
    LoweredOp op = lower_to_halide(def, shape);
    EXPECT_EQ(op.stage("A").func.output_types()[0], Halide::Int(32));
    EXPECT_EQ(op.stage("B").func.output_types()[0], Halide::Int(8));
    EXPECT_EQ(op.stage("H").func.output_types()[0], Halide::Float(16));
    EXPECT_EQ(op.stage("S").acc.output_types()[0], Halide::Int(32));
    EXPECT_TRUE(op.stage("S").is_reduction());
    EXPECT_FALSE(op.stage("A").is_reduction());
    EXPECT_EQ(op.output.output_types()[0], Halide::Float(32));
    EXPECT_EQ(op.params.size(), 1u);
    EXPECT_EQ(op.param_names, (std::vector<std::string>{"X"}));
}

TEST(Lower, VariablesAreInnermostFirst) {
    ComputeDef def =
        parse_compute("op t\nparam M, N, K\ninput A: f32[M, K]\ninput B: f32[K, N]\n"
                      "output C: f32[M, N]\nC[m, n] = sum(k: K, j: 2) A[m, k] * B[k, n]"
                      "\n",
                      "t.op");
    LoweredOp op = lower_to_halide(def, bind_shape(def, "M=2,N=3,K=4"));
    const LoweredStage &s = op.stage("C");
    EXPECT_EQ(s.var_names, (std::vector<std::string>{"n", "m"}));
    EXPECT_EQ(s.rvar_names, (std::vector<std::string>{"j", "k"}));
    EXPECT_EQ(s.rdom.dimensions(), 2);
}

// A reduction over products, its pointwise epilogue and a zero_pad read agree with the reference
// under the heuristic schedule too (the bundled ops cover float32 more widely).
TEST(Lower, HeuristicScheduleOnIntegerLocals) {
    ComputeDef def = parse_compute("op t\nparam M, N\ninput X: f32[M, N] zero_pad\n"
                                   "local Q: i32[M, N]\nlocal S: i32[M]\noutput Y: f32[M]\n"
                                   "Q[m, n] = i32(X[m, n - 1] * 50.0) / 3\n"
                                   "S[m] = sum(n: N) Q[m, n] * Q[m, n]\nY[m] = f32(S[m]) * 0.5\n",
                                   "t.op");
    BoundShape shape = bind_shape(def, "M=37,N=23");
    auto inputs = random_inputs(def, shape, 3);
    for (bool heuristic : {false, true}) {
        HostTensor out = run(def, shape, inputs, heuristic);
        Verification v = verify_output(def, shape, inputs, out, 0.0);
        EXPECT_TRUE(v.ok) << (heuristic ? "heuristic: " : "default: ") << v.first_mismatch;
    }
}

// fast_exp (a schedule point's fast_math) over the whole float range softmax feeds it, including
// where exp underflows (X - rmax of a row far below its maximum): within 1e-5 of exp where exp is
// a normal float, and never a negative or large value where it underflows.
TEST(Lower, FastExpStaysWithinTheToleranceAndUnderflowsToZero) {
    ComputeDef def = parse_compute("op t\nparam M\ninput X: f32[M]\noutput Y: f32[M]\nY[i] = exp(X[i])\n", "t.op");
    BoundShape shape = bind_shape(def, "M=2400");
    std::map<std::string, HostTensor> inputs;
    inputs["X"].dims = {2400};
    for (int i = 0; i < 2400; i++) inputs["X"].data.push_back(-150.0f + 0.1f * float(i));  // up to 89.9
    Target host = host_target();
    LoweredOp op = lower_to_halide(def, shape, true);
    JitKernel kernel(op, host);
    HostTensor out;
    out.dims = {2400};
    out.data.assign(2400, -1.0f);
    kernel.bind(inputs, out);
    kernel.run();
    int normal = 0;
    for (int i = 0; i < 2400; i++) {
        double x = inputs["X"].data[size_t(i)], want = std::exp(x), got = out.data[size_t(i)];
        if (want > 1e-37 && want < 3e38) {
            normal++;
            EXPECT_LE(std::fabs(got - want), 1e-5 * want) << "exp(" << x << ")";
        } else if (want <= 1e-37) {
            EXPECT_GE(got, 0.0) << "exp(" << x << ")";
            EXPECT_LE(got, 1e-30) << "exp(" << x << ")";
        }
    }
    EXPECT_GT(normal, 1500);
}

// erf and tanh with fast math (core/FastMath.h) against the C library over [-12, 12], where both
// saturate: erf within 1e-6 (A and S 7.1.26 is within 1.5e-7, fast_exp adds its relative error),
// tanh within 2e-6; both within 1e-7 of +-1 far out.
TEST(Lower, FastErfAndTanhStayWithinTheTolerance) {
    for (const char *fn : {"erf", "tanh"}) {
        ComputeDef def = parse_compute(std::string("op t\nparam M\ninput X: f32[M]\noutput Y: f32[M]\nY[i] = ") + fn +
                                           "(X[i])\n",
                                       "t.op");
        BoundShape shape = bind_shape(def, "M=2401");
        std::map<std::string, HostTensor> inputs;
        inputs["X"].dims = {2401};
        for (int i = 0; i < 2401; i++) inputs["X"].data.push_back(-12.0f + 0.01f * float(i));
        LoweredOp op = lower_to_halide(def, shape, true);
        JitKernel kernel(op, host_target());
        HostTensor out;
        out.dims = {2401};
        out.data.assign(2401, 0.0f);
        kernel.bind(inputs, out);
        kernel.run();
        const bool is_erf = std::string(fn) == "erf";
        for (int i = 0; i < 2401; i++) {
            double x = inputs["X"].data[size_t(i)], got = out.data[size_t(i)];
            double want = is_erf ? std::erf(x) : std::tanh(x);
            EXPECT_LE(std::fabs(got - want), is_erf ? 1e-6 : 2e-6) << fn << "(" << x << ")";
        }
        EXPECT_NEAR(out.data.front(), -1.0f, 1e-7) << fn;
        EXPECT_NEAR(out.data.back(), 1.0f, 1e-7) << fn;
    }
}
