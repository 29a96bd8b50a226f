#include "store/CodeSignature.h"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "store/KernelCache.h"

namespace opgen::db {

namespace {

constexpr const char *kPublicPrefix = "ed25519:";
constexpr const char *kPrivateHeader = "opgen-ed25519-private-key";
constexpr const char *kDomain = "opgen-code-signature-v1";

// libsodium's functions are safe to call once it is initialised; sodium_init() is idempotent and
// thread-safe, so every entry point calls it.
void ensure_sodium() {
    if (sodium_init() < 0) {
        throw std::runtime_error("libsodium could not be initialised");
    }
}

std::string to_hex(const uint8_t *bytes, size_t size) {
    static const char digits[] = "0123456789abcdef";
    std::string text;
    text.reserve(size * 2);
    for (size_t i = 0; i < size; i++) {
        text += digits[bytes[i] >> 4];
        text += digits[bytes[i] & 15];
    }
    return text;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Exactly `size` bytes written as 2 * size hex digits, else false.
bool from_hex(const std::string &text, uint8_t *bytes, size_t size) {
    if (text.size() != size * 2) {
        return false;
    }
    for (size_t i = 0; i < size; i++) {
        int high = hex_value(text[2 * i]);
        int low = hex_value(text[2 * i + 1]);
        if (high < 0 || low < 0) {
            return false;
        }
        bytes[i] = uint8_t(high * 16 + low);
    }
    return true;
}

std::string trimmed(const std::string &text) {
    size_t begin = text.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos) {
        return "";
    }
    size_t end = text.find_last_not_of(" \t\r\n");
    return text.substr(begin, end - begin + 1);
}

}  // namespace

SigningKey new_signing_key() {
    ensure_sodium();
    SigningKey key;
    crypto_sign_keypair(key.public_key.data(), key.secret.data());
    return key;
}

std::string public_key_text(const PublicKey &key) {
    return kPublicPrefix + to_hex(key.data(), key.size());
}

std::optional<PublicKey> parse_public_key(const std::string &text) {
    std::string t = trimmed(text);
    if (t.rfind(kPublicPrefix, 0) != 0) {
        return std::nullopt;
    }
    PublicKey key;
    if (!from_hex(t.substr(std::strlen(kPublicPrefix)), key.data(), key.size())) {
        return std::nullopt;
    }
    return key;
}

std::string signing_key_text(const SigningKey &key) {
    return std::string(kPrivateHeader) + "\n" + to_hex(key.secret.data(), key.secret.size()) + "\n";
}

std::optional<SigningKey> parse_signing_key(const std::string &text) {
    std::string t = trimmed(text);
    size_t newline = t.find('\n');
    if (newline == std::string::npos || trimmed(t.substr(0, newline)) != kPrivateHeader) {
        return std::nullopt;
    }
    SigningKey key;
    if (!from_hex(trimmed(t.substr(newline + 1)), key.secret.data(), key.secret.size())) {
        return std::nullopt;
    }
    ensure_sodium();
    // The secret carries its public half; it must be the one its seed makes.
    PublicKey derived;
    if (crypto_sign_ed25519_sk_to_pk(derived.data(), key.secret.data()) != 0) {
        return std::nullopt;
    }
    std::array<uint8_t, 64> remade;
    PublicKey from_seed;
    crypto_sign_seed_keypair(from_seed.data(), remade.data(), key.secret.data());
    if (from_seed != derived) {
        return std::nullopt;
    }
    key.public_key = derived;
    return key;
}

std::string signed_message(const KernelKey &key, const KernelCode &code) {
    std::string message;
    for (const std::string &field :
         {std::string(kDomain), std::string(code.generic ? "generic" : "exact"), key.op_name,
          key.op_hash, key.shape, key.dtype, key.target, key.halide_version, key.tuner_version,
          code.digest}) {
        message += field;
        message += '\0';
    }
    return message;
}

void sign_code(const KernelKey &key, KernelCode &code, const SigningKey &signer) {
    ensure_sodium();
    std::string message = signed_message(key, code);
    std::array<uint8_t, crypto_sign_BYTES> signature;
    crypto_sign_detached(signature.data(), nullptr, reinterpret_cast<const uint8_t *>(message.data()),
                         message.size(), signer.secret.data());
    code.signed_by = public_key_text(signer.public_key);
    code.ed25519_signature = to_hex(signature.data(), signature.size());
}

SignatureStatus signature_status(const KernelKey &key, const KernelCode &code,
                                 const std::vector<PublicKey> &trusted) {
    if (code.signed_by.empty() && code.ed25519_signature.empty()) {
        return SignatureStatus::Unsigned;
    }
    std::optional<PublicKey> signer = parse_public_key(code.signed_by);
    std::array<uint8_t, crypto_sign_BYTES> signature;
    if (!signer || !from_hex(code.ed25519_signature, signature.data(), signature.size())) {
        return SignatureStatus::Invalid;
    }
    ensure_sodium();
    std::string message = signed_message(key, code);
    if (crypto_sign_verify_detached(signature.data(), reinterpret_cast<const uint8_t *>(message.data()),
                                    message.size(), signer->data()) != 0) {
        return SignatureStatus::Invalid;
    }
    bool known = std::find(trusted.begin(), trusted.end(), *signer) != trusted.end();
    return known ? SignatureStatus::Trusted : SignatureStatus::UnknownSigner;
}

const char *signature_status_name(SignatureStatus status) {
    switch (status) {
    case SignatureStatus::Trusted: return "trusted";
    case SignatureStatus::Unsigned: return "unsigned";
    case SignatureStatus::UnknownSigner: return "unknown signer";
    case SignatureStatus::Invalid: return "bad signature";
    }
    return "bad signature";
}

}  // namespace opgen::db
