// The lookup's shape-generic answers (schema version 5, GenericSignature.h): a shape no kernel was
// tuned for is served at once by generic code of its op, checked against the reference when it
// was built, bound to the shape with no compiler. Among the generic rows that serve the shape
// (same target, op, dtype, filters and fixed values) the one compiled from the tuned shape nearest
// to it answers (the sum of |log2| differences over the symbols; ties in key order).
// Used only inside db/, by Lookup.cpp, under the lookup's lock.
#ifndef OPGEN_DB_GENERIC_KERNELS_H
#define OPGEN_DB_GENERIC_KERNELS_H

#include "db/CodeLoader.h"
#include "db/KernelCache.h"
#include "db/Lookup.h"
#include "db/Sqlite.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace opgen::db {

class GenericKernels {
public:
    // The chosen generic row for the request's shape, as an answer of kind Generic (the key's
    // shape the canonical shape, from_shape the tuned shape, schedule_json its schedule);
    // nullopt, with `why`, when no generic code serves the shape. Raises DbError with the
    // refusal when only refused code could have.
    std::optional<LookupAnswer> answer(SqliteConnection &connection, const LookupRequest &request,
                                       std::string &why);
    // The chosen row's code loaded (once per digest) and bound to the shape; nullptr with `why`
    // when none serves it. Raises DbError when its code is refused or cannot be loaded.
    std::shared_ptr<const LoadedKernel> kernel(SqliteConnection &connection,
                                               const LookupRequest &request, std::string &why);
    // Forgets the rows read and their checks (the file changed); loaded code stays, found again
    // by digest once a row of that digest passes its checks again.
    void forget() {
        rows_.clear();
        refusals_.clear();
    }

private:
    const GenericCodeRecord *choose(SqliteConnection &connection, const LookupRequest &request,
                                    std::string &why);

    std::map<std::string, std::vector<GenericCodeRecord>> rows_;  // by request, without shape
    // code_refusal of the row, computed once per digest (a digest names the row's whole contents).
    const std::string &refusal_of(const GenericCodeRecord &row);

    std::map<std::string, std::shared_ptr<const LoadedKernel>> loaded_;  // unbound, by digest
    std::map<std::string, std::string> refusals_;                        // by stored digest
};

} // namespace opgen::db

#endif
