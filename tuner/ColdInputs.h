// Cold inputs: a timing mode in which some of a kernel's inputs (a model's weights) come from
// memory on every call, as they do inside a model, where the other layers' weights pass through
// the caches between two calls of one kernel. The tuner otherwise calls a kernel on the same
// buffers again and again, so weights larger than L2 are hot from the second call, and it ranks
// schedules by a time the model never sees (measured on an AMD EPYC host: stage-4 convolutions
// 1.9-2.2x their tuned time in ResNet-50).
//
// Before each timed call the named inputs' cache lines are written back and dropped from every
// level of every core's caches (x86 `clflush`; elsewhere a buffer larger than the last-level
// cache is streamed through, which drops everything); the other inputs and the output stay as the
// previous call left them, as the previous layer leaves a model's activations.
#ifndef OPGEN_TUNER_COLDINPUTS_H
#define OPGEN_TUNER_COLDINPUTS_H

#include "store/KernelCache.h"
#include "core/Reference.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace opgen::tuner {

// Drops every cache line of `t`'s data from the whole cache hierarchy; returns once it is done.
void flush_from_caches(const HostTensor &t);

// A call that flushes the inputs of `inputs` named in `names` (the hook time_paired runs before
// each timed call); an empty function when `names` is empty. UserError naming the op's inputs when
// a name is not one of them.
std::function<void()> cold_inputs_hook(const std::map<std::string, HostTensor> &inputs,
                                       const std::vector<std::string> &names);

// The cache key of winners timed with cold inputs: `key` with ":cold" appended to its target (as
// the thread count and a contention level are), so they are never taken for winners timed hot.
db::KernelKey cold_key(const db::KernelKey &key);

}  // namespace opgen::tuner

#endif
