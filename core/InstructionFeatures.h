// The target's instruction features an op's legal space can use (docs/design.md §2.4, §2.8): the
// dot-product instructions of its main reduction's types (avx512_vnni for u8 x s8 -> i32,
// avx512_bf16 for bf16 x bf16 -> f32) and AMX tiles (amx_int8) for the int8 product. They are part
// of the kernel's cache key, so a winner tuned where AMX exists is never the answer on a host
// without it: that host's key names fewer features, and it tunes (or finds) its own.
#ifndef OPGEN_CORE_INSTRUCTION_FEATURES_H
#define OPGEN_CORE_INSTRUCTION_FEATURES_H

#include "core/ComputeDef.h"
#include "core/Target.h"

#include <string>
#include <vector>

namespace opgen {

// The features of `target` that `def`'s space can use at some shape, in the fixed order
// avx512_vnni, avx512_bf16, amx_int8; empty for every op without such a product (all float32
// ops), whatever the target.
std::vector<std::string> instruction_features(const ComputeDef &def, const Target &target);

}  // namespace opgen

#endif
