// The runner of a deployed model (docs/design.md §3.5: a runner that loads the model, checks it,
// and times it): a C main linked with the model's library into DIR/<model>-runner, which
// `opgen run DIR` starts. It loads the weights, reads the inputs from .npy files (each of its
// input's type: float32, int32, int64, bool, uint8 or int8; C order; dims checked against the
// model's), runs once and warns of float outputs that are not finite (`--finite` refuses them),
// then times
// `--iterations` runs and prints the median latency, the peak resident memory, and with `--profile`
// every kernel's share of the time; `--output` files receive the outputs as .npy.
// Before timing, `<model>_calibrate` chooses the kernels whose weights are read ahead
// (`--calibrate R`: R runs with and R without, 5 by default; 0 reads none ahead).
//
//   <model>-runner WEIGHTS --input FILE... [--output FILE...] [--threads N] [--iterations K]
//                  [--warmup W] [--calibrate R] [--profile] [--finite]
// Bad arguments and files give one `error: ...` line and exit status 1. The source depends on the
// model's name alone (it reads the counts from `<model>_counts`, not the header's macros), so
// one compiled object serves every model of a name.
#ifndef OPGEN_ONNX_MODEL_RUNNER_H
#define OPGEN_ONNX_MODEL_RUNNER_H

#include <string>

namespace opgen::onnx_import {

// The runner's C source for the model named `name` (its header is "<name>.h").
std::string runner_source(const std::string &name);

}  // namespace opgen::onnx_import

#endif
