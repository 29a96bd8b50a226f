// key new/public, db sign and db verify: the signing keys of cached code and who vouches for each
// code row (store/CodeSignature.h, runtime/CodeTrust.h, docs/design.md §2.9).
#include "cli/Cli.h"
#include "runtime/CodeTrust.h"
#include "store/KeyFiles.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>

namespace opgen::cli {

namespace {

void add_key_new(CLI::App *key_cmd) {
    auto path = std::make_shared<std::string>();
    auto *cmd = key_cmd->add_subcommand("new", "make an Ed25519 key pair: FILE (private, mode 0600) and FILE.pub");
    cmd->add_option("file", *path, "the private key file to write (must not exist)")->required();
    cmd->callback([path] {
        db::SigningKey key = db::write_new_key_files(*path);
        std::printf("%s: private key (keep it out of every cache and repository)\n%s.pub: %s\n", path->c_str(),
                    path->c_str(), db::public_key_text(key.public_key).c_str());
    });
}

void add_key_public(CLI::App *key_cmd) {
    auto path = std::make_shared<std::string>();
    auto *cmd = key_cmd->add_subcommand("public", "print the public key of a private key file");
    cmd->add_option("file", *path, "the private key file")->required();
    cmd->callback([path] {
        std::printf("%s\n", db::public_key_text(db::read_signing_key_file(*path).public_key).c_str());
    });
}

void add_db_sign(CLI::App *db_cmd) {
    struct Args {
        std::string db_path = "opgen.db", key;
        bool only_unsigned = false;
    };
    auto a = std::make_shared<Args>();
    auto *cmd = db_cmd->add_subcommand("sign", "sign every code row of a cache with a key (replacing other signatures)");
    cmd->add_option("--db", a->db_path, "kernel cache file (default: opgen.db)");
    add_signing_key_option(cmd, a->key);
    cmd->add_flag("--only-unsigned", a->only_unsigned, "leave rows that carry a signature as they are");
    cmd->callback([a] {
        std::optional<db::SigningKey> key = signing_key_of(a->key);
        user_check(key.has_value()) << "db sign needs a key: --signing-key FILE or OPGEN_SIGNING_KEY";
        user_check(std::ifstream(a->db_path).good()) << "no cache file '" << a->db_path << "'";
        auto cache = db::open_kernel_cache(a->db_path, db::OpenMode::ReadWrite);
        db::CodeSigningReport r = cache->sign_code_rows(*key, a->only_unsigned);
        std::printf("%s: signed %lld code row(s) with %s; %lld already signed kept; %lld not matching their "
                    "digest left unsigned\n",
                    a->db_path.c_str(), static_cast<long long>(r.signed_rows),
                    db::public_key_text(key->public_key).c_str(), static_cast<long long>(r.kept),
                    static_cast<long long>(r.not_matching));
        user_check(r.not_matching == 0) << r.not_matching << " code row(s) do not match their own digest";
    });
}

// The verdict of one row: its own digest first, then its signature against the trusted keys.
std::string row_status(const db::KernelKey &key, const db::KernelCode &code,
                       const std::vector<db::PublicKey> &trusted) {
    if (!db::code_matches_itself(code)) return "digest mismatch";
    return db::signature_status_name(db::signature_status(key, code, trusted));
}

void add_db_verify(CLI::App *db_cmd) {
    struct Args {
        std::string db_path = "opgen.db";
        std::vector<std::string> trust;
    };
    auto a = std::make_shared<Args>();
    auto *cmd = db_cmd->add_subcommand(
        "verify", "list every code row with its signer and status against trusted keys; exit 1 unless all are trusted");
    cmd->add_option("--db", a->db_path, "kernel cache file (default: opgen.db)");
    cmd->add_option("--trust", a->trust, "trusted public keys (ed25519:...) or trust files (default: OPGEN_TRUST_FILE)");
    cmd->callback([a] {
        std::vector<db::PublicKey> trusted =
            a->trust.empty() ? db::trust_from_environment().keys : db::read_trusted_keys(a->trust);
        user_check(std::ifstream(a->db_path).good()) << "no cache file '" << a->db_path << "'";
        auto cache = db::open_kernel_cache(a->db_path, db::OpenMode::ReadOnly);
        long long rows = 0, good = 0;
        std::printf("%-8s %-16s %-28s %-15s %s\n", "kind", "op", "shape", "status", "signer");
        cache->visit_code_rows([&](const db::KernelKey &key, const db::KernelCode &code) {
            std::string status = row_status(key, code, trusted);
            rows++;
            good += status == "trusted" ? 1 : 0;
            std::printf("%-8s %-16s %-28s %-15s %s\n", code.generic ? "generic" : "exact", key.op_name.c_str(),
                        key.shape.c_str(), status.c_str(), code.signed_by.empty() ? "-" : code.signed_by.c_str());
        });
        std::printf("%s: %lld of %lld code row(s) signed by a trusted key\n", a->db_path.c_str(), good, rows);
        if (good != rows) std::exit(1);
    });
}

}  // namespace

void add_signing_key_option(CLI::App *cmd, std::string &path) {
    cmd->add_option("--signing-key", path, "sign the code stored with this private key file (also OPGEN_SIGNING_KEY)");
}

std::optional<db::SigningKey> signing_key_of(const std::string &path) {
    std::string file = path;
    if (file.empty()) {
        const char *env = std::getenv("OPGEN_SIGNING_KEY");
        file = env ? env : "";
    }
    if (file.empty()) return std::nullopt;
    return db::read_signing_key_file(file);
}

void add_key_commands(CLI::App &app) {
    auto *cmd = app.add_subcommand("key", "signing keys for cached code: new, public");
    cmd->require_subcommand(1);
    add_key_new(cmd);
    add_key_public(cmd);
}

void add_signing_commands(CLI::App *db_cmd) {
    add_db_sign(db_cmd);
    add_db_verify(db_cmd);
}

}  // namespace opgen::cli
