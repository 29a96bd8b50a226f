#include "onnx/BufferPlan.h"

#include "base/Error.h"

#include <algorithm>
#include <set>

namespace opgen::onnx_import {

namespace {

int64_t align_up(int64_t v, int64_t alignment) { return (v + alignment - 1) & ~(alignment - 1); }

// The tensor whose storage `name` uses, following views to their source.
std::string root_of(const std::map<std::string, std::string> &view_of, std::string name) {
    for (auto it = view_of.find(name); it != view_of.end(); it = view_of.find(name)) name = it->second;
    return name;
}

// The caller's inputs and outputs: outputs first, so that an intermediate that an output views
// is written straight into the output buffer.
void place_io(const CompiledModel &m, const std::map<std::string, std::string> &view_of, BufferPlan &p) {
    const ModelGraph &g = m.graph;
    for (size_t i = 0; i < g.inputs.size(); i++) {
        p.place[g.inputs[i]] = {Storage::Input, 0, int(i)};
        p.io_bytes += g.tensor(g.inputs[i]).bytes();
    }
    for (size_t i = 0; i < g.outputs.size(); i++) {
        std::string root = root_of(view_of, g.outputs[i]);
        user_check(!g.is_weight(root) && !p.place.count(root))
            << "model '" << g.path << "': output '" << g.outputs[i] << "' is a view of '" << root
            << "', an input, a weight or another output; the runner does not copy tensors";
        p.place[root] = {Storage::Output, 0, int(i)};
        p.io_bytes += g.tensor(g.outputs[i]).bytes();
    }
}

// Weights in first-use order, each at an aligned offset of the weights file.
void place_weights(const CompiledModel &m, const std::map<std::string, std::string> &view_of, int64_t alignment,
                   BufferPlan &p) {
    for (const SubgraphKernel &k : m.partition.kernels)
        for (const auto &arg : k.args) {
            std::string root = root_of(view_of, arg.second);
            if (!m.graph.is_weight(root) || p.place.count(root)) continue;
            p.place[root] = {Storage::Weight, p.weight_bytes, 0};
            p.weights.push_back(root);
            p.weight_bytes = align_up(p.weight_bytes + m.graph.tensor(root).bytes(), alignment);
        }
}

// The arena's tensors with their lives in kernel indices.
std::vector<ArenaSlot> arena_lives(const CompiledModel &m, const std::map<std::string, std::string> &view_of,
                                   const BufferPlan &p) {
    std::map<std::string, ArenaSlot> lives;
    for (size_t i = 0; i < m.partition.kernels.size(); i++) {
        const SubgraphKernel &k = m.partition.kernels[i];
        for (size_t a = 0; a < k.args.size(); a++) {
            std::string root = root_of(view_of, k.args[a].second);
            if (p.place.count(root)) continue;
            auto [it, fresh] = lives.try_emplace(root);
            if (fresh) it->second = {root, 0, m.graph.tensor(root).bytes(), int(i), int(i)};
            it->second.last = std::max(it->second.last, int(i));
            internal_check(!fresh || a + 1 == k.args.size())
                << "tensor '" << root << "' is read by kernel " << i << " before anything writes it";
        }
    }
    std::vector<ArenaSlot> slots;
    for (auto &[name, slot] : lives) slots.push_back(slot);
    return slots;
}

// Greedy by size: largest first (ties by first use, then name), each at the lowest aligned offset
// clear of the placed slots whose lives overlap its own.
int64_t assign_offsets(std::vector<ArenaSlot> &slots, int64_t alignment) {
    std::stable_sort(slots.begin(), slots.end(), [](const ArenaSlot &a, const ArenaSlot &b) {
        return a.bytes != b.bytes ? a.bytes > b.bytes : a.first < b.first;
    });
    int64_t arena = 0;
    for (size_t i = 0; i < slots.size(); i++) {
        std::vector<std::pair<int64_t, int64_t>> taken;
        for (size_t j = 0; j < i; j++)
            if (slots[j].first <= slots[i].last && slots[i].first <= slots[j].last)
                taken.emplace_back(slots[j].offset, slots[j].offset + slots[j].bytes);
        std::sort(taken.begin(), taken.end());
        int64_t offset = 0;
        for (const auto &[begin, end] : taken) {
            if (offset + slots[i].bytes <= begin) break;
            offset = std::max(offset, align_up(end, alignment));
        }
        slots[i].offset = offset;
        arena = std::max(arena, align_up(offset + slots[i].bytes, alignment));
    }
    std::sort(slots.begin(), slots.end(), [](const ArenaSlot &a, const ArenaSlot &b) {
        return a.offset != b.offset ? a.offset < b.offset : a.first < b.first;
    });
    return arena;
}

}  // namespace

BufferPlan plan_buffers(const CompiledModel &m, int64_t alignment) {
    internal_check(alignment > 0 && (alignment & (alignment - 1)) == 0) << "alignment " << alignment;
    for (const SubgraphKernel &k : m.partition.kernels)
        for (const auto &arg : k.args) {
            const GraphTensor &t = m.graph.tensor(arg.second);
            user_check(t.dtype().has_value()) << "model '" << m.graph.path << "': tensor '" << t.name
                                              << "' has ONNX type " << t.elem_type << ", which no kernel computes";
        }
    std::map<std::string, std::string> view_of;
    for (const TensorView &v : m.partition.views) view_of[v.tensor] = v.source;
    BufferPlan p;
    place_io(m, view_of, p);
    place_weights(m, view_of, alignment, p);
    p.slots = arena_lives(m, view_of, p);
    for (const ArenaSlot &s : p.slots) p.intermediate_bytes += s.bytes;
    p.arena_bytes = assign_offsets(p.slots, alignment);
    for (const ArenaSlot &s : p.slots) p.place[s.tensor] = {Storage::Arena, s.offset, 0};
    for (const auto &[view, source] : view_of) {
        auto found = p.place.find(root_of(view_of, source));
        if (found != p.place.end()) p.place[view] = found->second;
    }
    return p;
}

}  // namespace opgen::onnx_import
