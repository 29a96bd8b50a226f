// Putting winners' compiled code into the kernel cache (store/KernelCode.h): right after a winner is
// stored (tune, batch, variants call store_winner_code), and for every kernel of a target that
// lacks code (`opgen db compile`, fill_missing_code). A kernel whose code cannot be compiled
// keeps its row without code: the failure is reported as data, and the next fill retries it.
#ifndef OPGEN_CODEGEN_CODE_STORE_H
#define OPGEN_CODEGEN_CODE_STORE_H

#include "store/KernelCache.h"
#include "core/ComputeDef.h"
#include "core/OpLibrary.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace opgen {

// Compiles `record`'s schedule for `target` and stores the code beside it. Returns "" when
// stored, else why not (the schedule does not parse, the compile or link failed, a faster
// winner replaced the record meanwhile). Raises db::DbError when the file fails.
std::string store_winner_code(const ComputeDef &def, const BoundShape &shape, const Target &target,
                              const db::KernelRecord &record, db::KernelCache &cache);

// Stores `record` as KernelCache::put_kernel does and, when it was stored, its compiled code
// beside it (store_winner_code). A code failure goes to `log` ("code: ...") and leaves the kernel
// without code. Returns put_kernel's answer.
bool store_winner(const ComputeDef &def, const BoundShape &shape, const Target &target,
                  const db::KernelRecord &record, db::KernelCache &cache,
                  const std::function<void(const std::string &)> &log = {});

// The kernel key's target names `target` at some thread count, with or without instruction
// features ("x86-64-avx512:t4", "x86-64-avx512+avx512_vnni:t1"), and no contention load.
bool is_on_target(const db::KernelKey &key, const Target &target);

// The op definition the kernel of `key` was tuned with: the cache's record of its op hash, else
// the library's op of that name when its hash matches; nullopt with `why` set otherwise. Raises
// UserError when the recorded text does not parse.
std::optional<ComputeDef> definition_of(db::KernelCache &cache, const OpLibrary &library,
                                        const db::KernelKey &key, std::string &why);

struct CodeFillReport {
    int compiled = 0;
    int failed = 0;                   // compile or link failures, each in `errors`
    int other_targets = 0;            // kernels lacking code on targets other than the one given
    std::vector<std::string> errors;  // "op 'matmul' at K=..,: why"
};

// Compiles and stores the code of every kernel of `target` (any thread count) that has none
// compiled from its current schedule. The op's definition is the one recorded in the cache for
// the kernel's op hash, else the library's op of that name when its hash matches; a kernel with
// neither fails with that reason. `log` gets one line per kernel when given.
CodeFillReport fill_missing_code(db::KernelCache &cache, const OpLibrary &library,
                                 const Target &target,
                                 const std::function<void(const std::string &)> &log = {});

// Compiles the generic code (codegen/GenericCode.h) of every kernel of `target` (any thread count)
// of the ops named (all ops of the library when empty) whose generic code from its schedule is not
// stored yet, checks it at generic_check_shapes and stores what passes (KernelCache::
// put_generic_code). A kernel whose generic code fails to compile or to check is counted in
// `failed` with the reason and nothing of it is stored. `log` gets one line per kernel.
CodeFillReport fill_generic_code(db::KernelCache &cache, const OpLibrary &library,
                                 const Target &target, const std::vector<std::string> &ops,
                                 const std::function<void(const std::string &)> &log = {});

}  // namespace opgen

#endif
