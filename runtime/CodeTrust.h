// Which code an application lets run (docs/design.md §2.9): code rows signed by a key it trusts.
// The checks of CodeLoader.h (size, digest, format, ABI, target, CPU features, ELF headers) say
// the code is whole and fits the host; the signature says who vouches for it, which a digest
// stored beside the bytes cannot.
//
// The policy comes from the application (opgen_cache_open_trusted, opgen_cache_open_with,
// open_kernel_lookup's TrustPolicy) or, for opgen_cache_open and open_kernel_lookup(path), from the
// environment: OPGEN_TRUST_FILE names a trust file (store/KeyFiles.h). Without one no code runs.
// OPGEN_TRUST_UNSIGNED=1 (or allow_unsigned) is the opt-out for local development: unsigned code
// and code of unknown signers run too; a signature that does not verify is refused even then.
#ifndef OPGEN_RUNTIME_CODE_TRUST_H
#define OPGEN_RUNTIME_CODE_TRUST_H

#include <string>
#include <vector>

#include "store/CodeSignature.h"
#include "store/KernelCache.h"

namespace opgen::db {

struct TrustPolicy {
    std::vector<PublicKey> keys;  // the signers whose code may run
    bool allow_unsigned = false;  // the development opt-out (see the top of this file)
};

// OPGEN_TRUST_FILE's keys and OPGEN_TRUST_UNSIGNED. Raises KeyFileError when the trust file cannot
// be read or holds a line that is not a key, and DbError when OPGEN_TRUST_UNSIGNED is set to
// anything but 0 or 1.
TrustPolicy trust_from_environment();

// Why the code of the row `key` may not run under `policy`, as the tail of an error message
// ("it is unsigned, and no unsigned code is trusted"), or "" when it may.
std::string trust_refusal(const KernelKey &key, const KernelCode &code, const TrustPolicy &policy);

}  // namespace opgen::db

#endif
