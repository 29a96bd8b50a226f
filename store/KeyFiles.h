// The files that hold signing keys and trusted keys (docs/design.md §2.9).
//
// A private key file (`opgen key new`) is written with mode 0600 and read only when no one but
// its owner can read or write it: a key others can read is a key others may have. Beside it,
// FILE.pub holds the public key. A trust file lists the public keys an application trusts, one
// "ed25519:<hex>" a line; blank lines and lines starting with '#' are ignored.
//
// Every failure raises KeyFileError with one message naming the file and what is wrong.
#ifndef OPGEN_STORE_KEY_FILES_H
#define OPGEN_STORE_KEY_FILES_H

#include <stdexcept>
#include <string>
#include <vector>

#include "store/CodeSignature.h"
#include "store/KernelCache.h"

namespace opgen::db {

class KeyFileError : public DbError {
public:
    using DbError::DbError;
};

// Writes a fresh key pair: `path` (the private key, mode 0600, never over an existing file) and
// `path`.pub. Returns the key.
SigningKey write_new_key_files(const std::string &path);

// The private key of `path`; refused when the file is readable or writable by group or others,
// is not a regular file, or does not hold a key.
SigningKey read_signing_key_file(const std::string &path);

// The keys of a trust file; a line that is not a public key is an error naming its number. A
// file of no keys is allowed (it trusts nothing).
std::vector<PublicKey> read_trust_file(const std::string &path);

// Keys given as text: each a public key "ed25519:<hex>" or the path of a trust file (or of a
// FILE.pub). Raises KeyFileError naming the one that is neither.
std::vector<PublicKey> read_trusted_keys(const std::vector<std::string> &keys_or_files);

}  // namespace opgen::db

#endif
