// Ed25519 signatures over the code rows of a cache (docs/design.md §2.9). A code row's digest
// (KernelCode.h) guards against corruption only: it sits beside the bytes, so whoever edits the
// blob can store the matching digest. A signature made with a private key that never enters the
// file is what an application trusts instead: it covers the code's digest (which covers every
// field the loader checks: format, ABI, target, CPU features, function, argument signature,
// schedule, size, the bytes) and the row's key (op, op hash, shape, dtype, target, versions), so
// neither another row's code nor another row's signature passes for this row's.
//
// libsodium does the cryptography (crypto_sign_detached / crypto_sign_verify_detached); keys are
// written as text: a public key "ed25519:<64 hex digits>", a private key file of two lines,
// "opgen-ed25519-private-key" and 128 hex digits (libsodium's 64-byte secret, seed then public).
#ifndef OPGEN_STORE_CODE_SIGNATURE_H
#define OPGEN_STORE_CODE_SIGNATURE_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/KernelCode.h"

namespace opgen::db {

struct KernelKey;

using PublicKey = std::array<uint8_t, 32>;

struct SigningKey {
    std::array<uint8_t, 64> secret{};
    PublicKey public_key{};
};

// A fresh key pair from the system's random source.
SigningKey new_signing_key();

// "ed25519:<hex>", as signed rows name their signer and trust files list keys.
std::string public_key_text(const PublicKey &key);
// The key of such a text (surrounding blanks ignored); nullopt when it is not one.
std::optional<PublicKey> parse_public_key(const std::string &text);

// The private key file's text (see the top of this file), and its key back; nullopt when the text
// is not one or its public half does not belong to its seed.
std::string signing_key_text(const SigningKey &key);
std::optional<SigningKey> parse_signing_key(const std::string &text);

// The message a code row's signature covers: a domain tag, whether the code is generic, the row's
// seven key fields and the code's digest, each ended by a NUL.
std::string signed_message(const KernelKey &key, const KernelCode &code);

// Signs `code` (whose digest is already set) as the row of `key`: sets signed_by and signature.
void sign_code(const KernelKey &key, KernelCode &code, const SigningKey &signer);

// What a row's signature says, read against the keys an application trusts.
enum class SignatureStatus {
    Trusted,        // signed by a trusted key, and the signature verifies
    Unsigned,       // no signature at all
    UnknownSigner,  // a signature that verifies, by a key not trusted
    Invalid,        // a signature that does not verify for this row (or is not well formed)
};
SignatureStatus signature_status(const KernelKey &key, const KernelCode &code,
                                 const std::vector<PublicKey> &trusted);
// "trusted", "unsigned", "unknown signer", "bad signature".
const char *signature_status_name(SignatureStatus status);

}  // namespace opgen::db

#endif
