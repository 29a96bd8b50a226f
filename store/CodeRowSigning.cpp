#include "store/CodeRowSigning.h"

#include <vector>

#include "store/Rows.h"

namespace opgen::db {

namespace {

// The two code tables; generic rows carry three fields more, which their digest covers.
struct CodeTable {
    const char *name;
    bool generic;
};
constexpr CodeTable kCodeTables[] = {{"kernel_code", false}, {"generic_code", true}};

// Each row of `table` with its rowid, key and code (columns: rowid, key, code, generic fields).
void visit_table(SqliteConnection &connection, const CodeTable &table,
                 const std::function<void(int64_t, const KernelKey &, const KernelCode &)> &visit) {
    std::string sql = std::string("SELECT rowid, ") + kKeyColumns + ", " + kCodeColumns +
                      (table.generic ? ", symbols, fixed, defaults" : "") + " FROM " + table.name +
                      " ORDER BY target, op_name, op_hash, shape, dtype, halide_version, tuner_version";
    SqliteQuery query(connection, sql, std::string("reading the rows of ") + table.name);
    while (query.step()) {
        KernelKey key = read_key(query, 1);
        KernelCode code = read_code(query, 8);
        if (table.generic) {
            code.generic = true;
            code.symbols = query.text(22);
            code.fixed = query.text(23);
            code.defaults = query.text(24);
        }
        visit(query.integer(0), key, code);
    }
}

}  // namespace

bool sign_row(const KernelKey &key, KernelCode &code, const SigningKey &signer, bool only_unsigned,
              CodeSigningReport &report) {
    if (only_unsigned && !(code.signed_by.empty() && code.ed25519_signature.empty())) {
        report.kept++;
        return false;
    }
    if (!code_matches_itself(code)) {
        report.not_matching++;
        return false;
    }
    sign_code(key, code, signer);
    report.signed_rows++;
    return true;
}

void visit_stored_code(SqliteConnection &connection,
                       const std::function<void(const KernelKey &, const KernelCode &)> &visit) {
    for (const CodeTable &table : kCodeTables) {
        visit_table(connection, table,
                    [&](int64_t, const KernelKey &key, const KernelCode &code) { visit(key, code); });
    }
}

CodeSigningReport sign_stored_code(SqliteConnection &connection, const SigningKey &key,
                                   bool only_unsigned) {
    CodeSigningReport report;
    for (const CodeTable &table : kCodeTables) {
        struct Update {
            int64_t rowid;
            std::string signed_by, signature;
        };
        std::vector<Update> updates;
        visit_table(connection, table, [&](int64_t rowid, const KernelKey &row_key, const KernelCode &code) {
            KernelCode signed_code = code;
            if (sign_row(row_key, signed_code, key, only_unsigned, report)) {
                updates.push_back({rowid, signed_code.signed_by, signed_code.ed25519_signature});
            }
        });
        const std::string sql = std::string("UPDATE ") + table.name +
                                " SET signed_by = ?1, ed25519_signature = ?2 WHERE rowid = ?3";
        for (const Update &u : updates) {
            SqliteQuery update(connection, sql, std::string("signing the rows of ") + table.name);
            update.bind(1, u.signed_by).bind(2, u.signature).bind(3, u.rowid);
            update.run();
        }
    }
    return report;
}

}  // namespace opgen::db
