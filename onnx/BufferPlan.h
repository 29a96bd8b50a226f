// Where every tensor of a compiled model lives while it runs (docs/design.md §7.5: memory that
// will not be used again is released, here by giving it to the next tensor).
//
// Storage comes from four places: the caller's input buffers, the caller's output buffers, the
// weights (loaded once, tensors at fixed offsets) and one arena for the intermediates. A view
// (Reshape and its kin) takes its source's storage; an output that is a view of an intermediate
// makes that intermediate live in the output buffer. Each arena tensor is live from the kernel
// that writes it to the last kernel that reads it (or any view of it); tensors whose lives
// overlap get disjoint bytes. Offsets are assigned greedily, largest tensor first, each at the
// lowest offset that clears every placed tensor it overlaps in time ("greedy by size",
// Pisarchyk & Lee, "Efficient Memory Management for Deep Neural Net Inference", 2020). A kernel
// never writes over what it reads: its inputs' lives reach its own index.
#ifndef OPGEN_ONNX_BUFFER_PLAN_H
#define OPGEN_ONNX_BUFFER_PLAN_H

#include "onnx/ModelCompile.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace opgen::onnx_import {

enum class Storage { Input, Output, Weight, Arena };

struct TensorPlace {
    Storage storage = Storage::Arena;
    int64_t offset = 0;  // bytes into the weights or the arena
    int index = 0;       // which input or output (Input, Output)
};

struct ArenaSlot {
    std::string tensor;
    int64_t offset = 0, bytes = 0;
    int first = 0, last = 0;  // kernel indices: written by `first`, last read by `last`
};

struct BufferPlan {
    std::map<std::string, TensorPlace> place;  // every tensor a kernel reads or writes, views too
    std::vector<ArenaSlot> slots;              // the arena's tensors, by offset
    std::vector<std::string> weights;          // weight tensors kernels read, in weights-file order
    int64_t arena_bytes = 0;                   // the plan's peak: the arena's size
    int64_t intermediate_bytes = 0;            // the arena's tensors, each in its own buffer
    int64_t weight_bytes = 0;                  // the weights kernels read, aligned
    int64_t io_bytes = 0;                      // the caller's inputs and outputs
};

// Plans `m`'s buffers with every offset a multiple of `alignment` (a power of two). Raises
// UserError when a graph output is a view of an input or a weight, or two outputs share one
// buffer (the runner would have to copy; not supported), and when a tensor is not float32.
BufferPlan plan_buffers(const CompiledModel &m, int64_t alignment = 64);

}  // namespace opgen::onnx_import

#endif
