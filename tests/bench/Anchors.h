// The vendor anchors: oneDNN (matmul, convolution, depthwise convolution as a grouped convolution,
// softmax, layer normalization) and OpenBLAS (cblas_sgemm for matmul).
//
// A convolution runs three ways, because oneDNN's speed depends on the layout it may choose:
//   "oneDNN blocked+reorders": format_tag::any, so the primitive picks its blocked layout
//       (nChw16c and friends); each call reorders the NCHW input and the OIHW weights into it and
//       the output back, and those reorders are timed. The NCHW op takes its weights on every
//       call, and opgen's kernels pack them (when they pack them) inside the timed call, so both
//       sides count the same work ("counting reorders"). This and the plain one are the
//       fair comparison for an NCHW op.
//   "oneDNN blocked+reorders, weights untimed": the same with the weights reordered once, outside
//       the timing, as a framework does at model load (the anchor before session 8); for
//       reference, beside it.
//   "oneDNN NCHW": source, weights and destination forced to plain nchw / oihw.
//   "oneDNN blocked (conv only)": the blocked primitive alone, input and weights reordered once
//       outside the timing; the output is reordered back only for the check. What a network kept
//       in oneDNN's layout end to end would see.
// The ratio "x oneDNN" of the report is taken against the faster of the variants that take and
// return the op's own layout (Entrant::counts_as_onednn).
#ifndef OPGEN_BENCH_ANCHORS_H
#define OPGEN_BENCH_ANCHORS_H

#include "tests/bench/Contender.h"

#include <string>
#include <vector>

namespace opgen::bench {

// oneDNN's contenders for `p`; one entrant with status "unsupported" for an op it is not wired to.
// A primitive oneDNN cannot create comes back with status "unsupported" and oneDNN's message.
std::vector<Entrant> make_onednn(const Problem &p);

// OpenBLAS's sgemm for a matmul; nothing for other ops.
std::vector<Entrant> make_openblas(const Problem &p);

// "oneDNN 2.6.3, ISA avx512_core_bf16" and "OpenBLAS 0.3.21 ... SkylakeX": what the anchors run on.
std::string onednn_description();
std::string openblas_description();

} // namespace opgen::bench

#endif
