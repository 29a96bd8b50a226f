// The buffer plan of a deployed model (onnx/BufferPlan.h) on hand-built graphs: tensors
// whose lives do not overlap share bytes, those that do never do, views and outputs take their
// sources' storage, weights get aligned offsets, and what the runner cannot serve is refused.
#include "onnx/BufferPlan.h"

#include "base/Error.h"

#include <gtest/gtest.h>

namespace {

using namespace opgen::onnx_import;

// A graph of float tensors of `elements` each; `kernels` lists each kernel's read tensors then
// its written one.
CompiledModel chain(const std::vector<std::vector<std::string>> &kernels, int64_t elements = 256) {
    CompiledModel m;
    m.graph.path = "chain.onnx";
    m.graph.inputs = {"x"};
    m.graph.outputs = {"y"};
    for (const auto &k : kernels) {
        SubgraphKernel sk;
        for (size_t i = 0; i < k.size(); i++) {
            sk.args.emplace_back("T" + std::to_string(i), k[i]);
            GraphTensor &t = m.graph.tensors[k[i]];
            t.name = k[i];
            t.dims = {elements};
            if (k[i] == "x") t.kind = TensorKind::Input;
            if (k[i] == "y") t.kind = TensorKind::Output;
            if (k[i][0] == 'w') t.kind = TensorKind::Weight;
        }
        m.partition.kernels.push_back(sk);
    }
    return m;
}

// No two arena tensors alive at the same kernel share a byte.
void expect_disjoint_when_live_together(const BufferPlan &p) {
    for (const ArenaSlot &a : p.slots)
        for (const ArenaSlot &b : p.slots) {
            if (&a == &b || a.last < b.first || b.last < a.first) continue;
            EXPECT_TRUE(a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset) << a.tensor << " " << b.tensor;
        }
}

TEST(BufferPlan, AChainReusesTwoBuffers) {
    BufferPlan p = plan_buffers(chain({{"x", "a"}, {"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "y"}}));
    ASSERT_EQ(p.slots.size(), 4u);
    EXPECT_EQ(p.intermediate_bytes, 4 * 1024);
    EXPECT_EQ(p.arena_bytes, 2 * 1024);  // a and c share, b and d share
    EXPECT_EQ(p.place.at("a").offset, p.place.at("c").offset);
    EXPECT_EQ(p.place.at("b").offset, p.place.at("d").offset);
    EXPECT_NE(p.place.at("a").offset, p.place.at("b").offset);
    EXPECT_EQ(p.place.at("x").storage, Storage::Input);
    EXPECT_EQ(p.place.at("y").storage, Storage::Output);
    EXPECT_EQ(p.io_bytes, 2 * 1024);
    expect_disjoint_when_live_together(p);
}

TEST(BufferPlan, AResidualStaysLiveUntilItsLastReader) {
    // a is read again by the last kernel (a residual add): it may share with nothing.
    BufferPlan p = plan_buffers(chain({{"x", "a"}, {"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "a", "y"}}));
    EXPECT_EQ(p.arena_bytes, 3 * 1024);
    for (const ArenaSlot &s : p.slots)
        if (s.tensor == "a") {
            EXPECT_EQ(s.last, 4);
        }
    expect_disjoint_when_live_together(p);
}

TEST(BufferPlan, ViewsAndOutputsTakeTheirSourcesStorage) {
    CompiledModel m = chain({{"x", "w1", "a"}, {"a2", "w2", "b"}, {"b", "w1", "c"}});
    m.graph.tensors["a2"] = {"a2", {16, 16}, TensorKind::Intermediate, 1, {}, {}, {}, {}};
    m.graph.tensors["y"] = {"y", {16, 16}, TensorKind::Output, 1, {}, {}, {}, {}};
    m.graph.tensors["w1"].dims = {10};  // 40 bytes: the next weight starts at 64
    m.partition.views = {{"a2", "a", 1}, {"y", "c", 3}};
    BufferPlan p = plan_buffers(m);
    EXPECT_EQ(p.place.at("a2").offset, p.place.at("a").offset);
    EXPECT_EQ(p.place.at("c").storage, Storage::Output);  // written straight into the output
    EXPECT_EQ(p.weights, (std::vector<std::string>{"w1", "w2"}));
    EXPECT_EQ(p.place.at("w2").offset, 64);
    EXPECT_EQ(p.weight_bytes, 64 + 1024);
    EXPECT_EQ(p.slots.size(), 2u);  // a and b; c lives in the output
}

TEST(BufferPlan, AnOutputThatViewsAnInputIsRefused) {
    CompiledModel m = chain({{"x", "a"}});
    m.graph.tensors["y"] = {"y", {256}, TensorKind::Output, 1, {}, {}, {}, {}};
    m.partition.views = {{"y", "x", 1}};
    try {
        plan_buffers(m);
        FAIL() << "no error";
    } catch (const opgen::UserError &e) {
        EXPECT_EQ(std::string(e.what()), "model 'chain.onnx': output 'y' is a view of 'x', an input, a weight or another "
                                          "output; the runner does not copy tensors");
    }
}

}  // namespace
