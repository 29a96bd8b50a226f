// The runner of a deployed model (docs/design.md §3.5: a runner that loads the model, checks it,
// and times it): a C main linked with the model's library into DIR/<model>-runner, which
// `opgen run DIR` starts. It loads the weights, reads the inputs from .npy files (float32, C order,
// dims checked against the model's), runs once and refuses outputs that are not finite, then times
// `--iterations` runs and prints the median latency, the peak resident memory, and with `--profile`
// every kernel's share of the time; `--output` files receive the outputs as .npy.
// Before timing, `<model>_calibrate` chooses the kernels whose weights are read ahead
// (`--calibrate R`: R runs with and R without, 5 by default; 0 reads none ahead).
//
//   <model>-runner WEIGHTS --input FILE... [--output FILE...] [--threads N] [--iterations K]
//                  [--warmup W] [--calibrate R] [--profile]
// Bad arguments and files give one `error: ...` line and exit status 1.
#ifndef OPGEN_ONNX_MODEL_RUNNER_H
#define OPGEN_ONNX_MODEL_RUNNER_H

#include <string>

namespace opgen::onnx_import {

// The runner's C source for the model named `name` (its header is "<name>.h").
std::string runner_source(const std::string &name);

}  // namespace opgen::onnx_import

#endif
