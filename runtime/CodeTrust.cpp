#include "runtime/CodeTrust.h"

#include <cstdlib>

#include "store/KeyFiles.h"

namespace opgen::db {

TrustPolicy trust_from_environment() {
    TrustPolicy policy;
    if (const char *file = std::getenv("OPGEN_TRUST_FILE"); file && *file) {
        policy.keys = read_trust_file(file);
    }
    if (const char *unsigned_ok = std::getenv("OPGEN_TRUST_UNSIGNED"); unsigned_ok && *unsigned_ok) {
        std::string value = unsigned_ok;
        if (value != "0" && value != "1") {
            throw DbError("OPGEN_TRUST_UNSIGNED must be 0 or 1, not '" + value + "'");
        }
        policy.allow_unsigned = value == "1";
    }
    return policy;
}

std::string trust_refusal(const KernelKey &key, const KernelCode &code, const TrustPolicy &policy) {
    switch (signature_status(key, code, policy.keys)) {
    case SignatureStatus::Trusted:
        return "";
    case SignatureStatus::Unsigned:
        return policy.allow_unsigned
                   ? ""
                   : "it is unsigned, and only code signed by a trusted key runs (sign it with "
                     "'opgen db sign', or set OPGEN_TRUST_UNSIGNED=1 for local development)";
    case SignatureStatus::UnknownSigner:
        return policy.allow_unsigned ? ""
                                     : "its signer " + code.signed_by + " is not a trusted key";
    case SignatureStatus::Invalid:
        break;
    }
    return "its signature does not verify for this row (signer '" + code.signed_by + "')";
}

}  // namespace opgen::db
