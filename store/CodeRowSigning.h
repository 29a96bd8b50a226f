// Reading every code row of a cache file and signing them in place (KernelCodeStore's
// visit_code_rows and sign_code_rows over SQLite; `opgen db verify`, `opgen db sign` and merges
// that sign what they bring in). Used only inside store/.
#ifndef OPGEN_STORE_CODE_ROW_SIGNING_H
#define OPGEN_STORE_CODE_ROW_SIGNING_H

#include <functional>

#include "store/KernelCache.h"
#include "store/Sqlite.h"

namespace opgen::db {

// Every row of kernel_code, then of generic_code, in key order, bytes read.
void visit_stored_code(SqliteConnection &connection,
                       const std::function<void(const KernelKey &, const KernelCode &)> &visit);

// One row of KernelCodeStore::sign_code_rows, for every store: signs `code` as the row of `key`
// and returns true, unless `only_unsigned` and it carries a signature (counted as kept) or its code
// does not match its own digest (counted as not matching).
bool sign_row(const KernelKey &key, KernelCode &code, const SigningKey &signer, bool only_unsigned,
              CodeSigningReport &report);

// Signs the rows as KernelCodeStore::sign_code_rows says; the caller holds the transaction.
CodeSigningReport sign_stored_code(SqliteConnection &connection, const SigningKey &key,
                                   bool only_unsigned);

}  // namespace opgen::db

#endif
