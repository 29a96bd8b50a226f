// The cache keys kernels are stored and looked up under: one binder from an op, a shape, a target
// and a thread count to a db::KernelKey, used by the tuner, the code store, the kernel library and
// the model compiler alike.
#ifndef OPGEN_CODEGEN_KERNEL_KEYS_H
#define OPGEN_CODEGEN_KERNEL_KEYS_H

#include "core/ComputeDef.h"
#include "core/Shape.h"
#include "core/Target.h"
#include "store/KernelCache.h"

#include <string>
#include <vector>

namespace opgen {

// The tuner's version; part of every cache key.
const char *tuner_version();
std::string halide_version();

// The target part of a cache key: the target's name, then "+feature" for each instruction
// feature the op's space can use there (core/InstructionFeatures.h), then ":t<threads>":
// "x86-64-avx512:t1" for a float32 op, "x86-64-avx512+avx512_vnni+amx_int8:t1" for the int8
// matmul on an AMX host (docs/design.md §2.8). A kernel tuned for two threads is not the one for
// one, and one tuned with AMX tiles is not the one for a host without them.
std::string target_key(const ComputeDef &def, const Target &target, int threads);
// Every target part a kernel of some op can have on a target named `target_name` at `threads`
// (any instruction features): "x86-64-avx512:t1", "x86-64-avx512+avx512_vnni:t1", ... The cost
// model's data (`opgen model train`) reads the measurements of all of them.
std::vector<std::string> target_keys_of(const std::string &target_name, int threads);
// Whether a key's target part is one of `target`'s: its name, then features or the thread count.
bool names_target(const std::string &target_key, const Target &target);

// The cache key of a tuning task (its target part: target_key); the op is identified by the hash
// of its definition text.
db::KernelKey kernel_key(const ComputeDef &def, const BoundShape &shape, const Target &target, int threads);
// The key that measurements of `key`'s task taken under a memory-bandwidth contention load of
// `level` (the tuner's contention loads) are recorded under: its target with ":load<level>" appended
// ("x86-64-avx512:t1:load1"), as the thread count is. So they are never reused as quiet
// measurements of `key`, they are training data of the same target (KernelCache::measurements_on),
// and their level comes back with contention_level_of. Level 0 (or below): `key` itself.
db::KernelKey loaded_key(const db::KernelKey &key, double level);
// The contention level a measurement's target key names (0 when it names none).
double contention_level_of(const std::string &target_key);

}  // namespace opgen

#endif
