// The naive loop: what a programmer writes first, for each op of the suite (matmul, conv2d_nchw,
// depthwise_conv2d, softmax, layernorm). Plain C++ loops in the op's own layout, serial, compiled
// like the rest of the bench (-O3 for baseline x86-64, so at most SSE2 vectors), in a
// cache-friendly order (matmul i-k-j, convolutions accumulate over the output plane) so that the
// big shapes finish in seconds rather than minutes. The floor every generated kernel must clear.
#ifndef OPGEN_BENCH_NAIVE_H
#define OPGEN_BENCH_NAIVE_H

#include "tests/bench/Contender.h"

namespace opgen::bench {

// The naive loop for `p`, or an entrant with status "unsupported" for an op it does not know.
Entrant make_naive(const Problem &p);

} // namespace opgen::bench

#endif
