// `opgen compile model.onnx -o DIR`, its partitioning half (docs/design.md §3): the model's graph
// (ModelGraph), its fused subgraphs (Partition), every subgraph's op bound at its shape, and the
// folder that records them:
//   DIR/manifest.json  one entry per op with its distinct shapes: `opgen batch DIR/manifest.json
//                      --ops-dir DIR/ops` tunes every kernel the model needs
//   DIR/graph.json     the kernels in execution order (op, where its text is, canonical shape,
//                      the ONNX nodes it covers, which graph tensor each op tensor is), the
//                      tensors between them (dimensions, bytes, kind, views), and totals
//   DIR/ops/*.op       the generated ops, readable and re-tunable like any op file
// The deployable library (kernels from the cache, a buffer plan, a runner) is not built here.
#ifndef OPGEN_ONNX_MODEL_COMPILE_H
#define OPGEN_ONNX_MODEL_COMPILE_H

#include "core/OpLibrary.h"
#include "core/Shape.h"
#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace opgen::onnx_import {

struct CompiledModel {
    ModelGraph graph;
    Partition partition;
    std::vector<ComputeDef> defs;        // per kernel: its op
    std::vector<BoundShape> bounds;      // per kernel: the op bound at its shape
    std::vector<std::string> canonical;  // per kernel: its shape as bound, as in cache keys
    std::vector<double> flops;           // per kernel
    int64_t weight_bytes = 0;
    int64_t activation_bytes = 0;  // inputs, outputs and intermediates, views not counted twice
};

// How compile_model lays the activations out: `blocked` keeps convolutions' activations
// channel-blocked from one to the next (ChannelBlocking.h), otherwise every kernel reads ONNX's
// row-major layouts, except weights read transposed (Partition.h); `winograd` runs the blocked
// 3 x 3 convolutions Winograd.h takes as Winograd F(2x2, 3x3).
struct Layouts {
    bool blocked = true;
    bool winograd = true;
};

// Reads, partitions and binds the model at `path` (`dims` as for read_model_graph). Every op,
// bundled from `lib` or generated, is bound at its subgraph's shape. Raises UserError for what
// read_model_graph and partition_graph refuse (`fixed` as for read_model_graph), and when the tensors together need more than
// `max_bytes` (checked before anything is allocated or written). `with_weights` keeps the weights'
// elements in the graph (for evaluate_compiled_model).
CompiledModel compile_model(const std::string &path, const std::map<std::string, int64_t> &dims,
                            const OpLibrary &lib, int64_t max_bytes, bool with_weights = false,
                            Layouts layouts = {}, const FixedInputs &fixed = {});

// The batch manifest and the graph description written to DIR. The manifest of `m` and `more` (a
// model with dynamic dims at its specializations) lists every shape of all of them.
nlohmann::json compiled_manifest(const CompiledModel &m, const std::vector<const CompiledModel *> &more = {});
nlohmann::json compiled_graph(const CompiledModel &m);

// Writes manifest.json, graph.json and ops/ into `dir` whole or not at all: everything goes to a
// fresh sibling folder renamed into place. An existing `dir` is replaced only when it holds an
// earlier compile's graph.json; otherwise UserError, and nothing is written. `extra` adds files
// (path relative to `dir` -> bytes) to the same atomic write; the manifest lists `specialized`'s
// kernels too (compiled_manifest).
void write_model_dir(const CompiledModel &m, const std::string &dir,
                     const std::map<std::string, std::string> &extra = {},
                     const std::vector<const CompiledModel *> &specialized = {});

// The op tensors kernel k of `m` calls its pipeline with: the op's inputs in declaration order,
// then its output.
std::vector<const TensorDecl *> kernel_call_tensors(const CompiledModel &m, size_t k);

// This machine's physical memory in bytes (the default for max_bytes).
int64_t physical_memory_bytes();

}  // namespace opgen::onnx_import

#endif
