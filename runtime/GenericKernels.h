// The lookup's shape-generic answers (schema version 5, GenericSignature.h): a shape no kernel was
// tuned for is served at once by generic code of its op, checked against the reference when it
// was built, bound to the shape with no compiler. Among the generic rows that serve the shape
// (same target, op, dtype, filters and fixed values) the one the cost model ranks fastest at the
// shape answers (a GenericScorer, from the lookup's extension); without scores, the one compiled
// from the tuned shape nearest to it (the sum of |log2| differences over the symbols; ties in key
// order).
//
// Measured first (schema version 6): where `opgen db compile --generic` timed the generic kernels
// at the op's tuned shapes (GenericTimingRecord), each serving row's ratio over a full tune at the
// requested shape is estimated from its measured ratios at the tuned shapes nearest to it (a
// geometric mean weighted by closeness, each ratio carried to the requested shape by the work
// its register tiles waste at a ragged edge: see GenericKernels.cpp), and the lowest estimate
// answers; a row never timed ranks after every
// timed one. Only without timings do the scores or the
// distance decide. Whatever the ranking, a row whose register tiles are wider than the shape's
// loop extents (GenericFit.h) is not offered while one that fits serves the shape.
// Used only inside runtime/, by Lookup.cpp, under the lookup's lock.
#ifndef OPGEN_RUNTIME_GENERIC_KERNELS_H
#define OPGEN_RUNTIME_GENERIC_KERNELS_H

#include "runtime/CodeLoader.h"
#include "runtime/CodeTrust.h"
#include "store/KernelCache.h"
#include "runtime/Lookup.h"
#include "store/Sqlite.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace opgen::db {

// The cost model's scores of `rows`' schedules at the requested shape, in order, higher faster
// (LookupExtension::rank); empty when it cannot rank them.
using GenericScorer = std::function<std::vector<double>(const std::vector<const GenericCodeRecord *> &rows)>;

// What the lookup's extension knows about the requested shape, for ranking generic rows: the
// cost model's scores (empty: none) and the shape's loop extents (empty: unknown). A row whose
// register tiles are wider than the shape's extents (GenericFit.h) is not offered while a row
// that fits serves the shape.
struct GenericRanking {
    GenericScorer scorer;
    std::map<std::string, int64_t> extents;
};

// The answer of kind Generic of `row` at `canonical` (the requested shape, canonical): from_shape
// the tuned shape, schedule_json its schedule, verified (checked when built), time_ms NaN.
LookupAnswer generic_answer(const GenericCodeRecord &row, const std::string &canonical);

class GenericKernels {
public:
    // Every generic row that serves the request's shape and passes the checks that read no code
    // (code_header_refusal), in key order; empty, with `why`, when none does. Raises DbError with
    // the refusal when only refused code could have. Its digest is checked only when chosen. The pointers stay valid until forget().
    std::vector<const GenericCodeRecord *> serving(SqliteConnection &connection,
                                                   const LookupRequest &request, std::string &why);
    // serving()'s rows that fit the shape (all of them when none fits), best first (measured_ratio,
    // rows never timed last; without any timing the scorer's scores, else shape distance; key
    // order among equals), the first one's code
    // checked in full (code_refusal): a refused row is dropped and the next checked. Empty, with
    // `why`, when none serves the shape; raises DbError with the refusal when only refused code
    // could have.
    std::vector<const GenericCodeRecord *> ranked_serving(SqliteConnection &connection,
                                                          const LookupRequest &request, std::string &why,
                                                          const GenericRanking &ranking = {});
    // The chosen generic row (the best ranked whose code passes code_refusal: the first load of
    // an op hashes one row's code, not every row's) for the request's shape, as an answer of kind Generic (the key's
    // shape the canonical shape, from_shape the tuned shape, schedule_json its schedule);
    // nullopt, with `why`, when no generic code serves the shape. Raises DbError with the
    // refusal when only refused code could have.
    std::optional<LookupAnswer> answer(SqliteConnection &connection, const LookupRequest &request,
                                       std::string &why, const GenericRanking &ranking = {});
    // The estimated ratio of `row` (one of serving()'s) over a full tune at `shape` (canonical,
    // or NAME=INT pairs), from its timings at the tuned shapes nearest to it where its register
    // tiles fit, each carried to `shape` by their overwork (GenericKernels.cpp); nullopt when it was
    // never timed or it cannot be bound to the shape. Call serving() for the request first.
    std::optional<double> measured_ratio(const GenericCodeRecord &row, const std::string &shape) const;
    // The chosen row's code loaded (once per digest) and bound to the shape; nullptr with `why`
    // when none serves it. Raises DbError when its code is refused or cannot be loaded.
    std::shared_ptr<const LoadedKernel> kernel(SqliteConnection &connection,
                                               const LookupRequest &request, std::string &why,
                                               const GenericRanking &ranking = {});
    // Code runs only when `trust` lets it (CodeTrust.h): part of every row's refusal_of.
    void set_trust(TrustPolicy trust) { trust_ = std::move(trust); }
    // How many rows were refused (untrusted, or a check of CodeLoader.h failed), each counted once
    // per reading of the file.
    int64_t refused() const { return refused_; }
    // Forgets the rows read and their checks (the file changed); loaded code stays, found again
    // by digest once a row of that digest passes its checks again.
    void forget() {
        rows_.clear();
        timings_.clear();
        tiles_.clear();
        output_dims_.clear();
        refusals_.clear();
        header_refusals_.clear();
        full_code_.clear();
    }

private:
    const GenericCodeRecord *choose(SqliteConnection &connection, const LookupRequest &request,
                                    std::string &why, const GenericRanking &ranking);

    std::map<std::string, std::vector<GenericCodeRecord>> rows_;  // by request, without shape
    // One timing of a generic row: the tuned shape's values, log(ratio), and the row's register
    // tiles' overwork there and whether they fit there (GenericFit.h).
    struct Timing {
        std::map<std::string, int64_t> at;
        double log_ratio = 0;
        double log_overwork = 0;
        bool fits = true;
    };
    // The timings of every row read into rows_ that passes code_header_refusal, by the row's key
    // and digest (timing_key); a timing at a shape the row cannot be bound to is dropped.
    std::map<std::string, std::vector<Timing>> timings_;
    // Reads the timings of the rows of `rows_[key]`, each placed against its row's register tiles.
    void read_timings(SqliteConnection &connection, const LookupRequest &request, const std::string &key);
    // The register tiles of every row read (GenericFit.h), by timing_key.
    std::map<std::string, std::vector<int64_t>> tiles_;
    // The output's dims, innermost first, of generic code bound to a shape (nullopt: it cannot be),
    // by signature, symbols and shape: rows of one op share their signature, and binding is the
    // costly part of placing an op's timings (about 10 us a row and shape).
    mutable std::map<std::string, std::optional<std::vector<int64_t>>> output_dims_;
    const std::optional<std::vector<int64_t>> &output_dims(const KernelCode &code, const std::string &shape) const;
    // `rows` (serving()'s) that fit the shape (all of them when none fits) best first: by
    // measured_ratio, rows never timed last; without any timing by the scorer's scores, else by
    // shape distance; key order among equals.
    std::vector<const GenericCodeRecord *> ranked(std::vector<const GenericCodeRecord *> rows,
                                                  const LookupRequest &request,
                                                  const GenericRanking &ranking) const;
    // Why the row's code may not run: its trust (trust_refusal), then code_refusal (its bytes
    // read); computed once per key and stored digest.
    const std::string &refusal_of(SqliteConnection &connection, const GenericCodeRecord &row);
    // The row's code with its bytes (rows_ holds them without), read once per key and stored digest.
    const KernelCode &full_code(SqliteConnection &connection, const GenericCodeRecord &row);
    // code_header_refusal of the row (no code bytes read), once per digest.
    const std::string &header_refusal_of(const GenericCodeRecord &row);

    std::map<std::string, std::shared_ptr<const LoadedKernel>> loaded_;  // unbound, by digest
    std::map<std::string, std::string> refusals_;                        // by key and stored digest
    std::map<std::string, std::string> header_refusals_;                 // by stored digest
    std::map<std::string, KernelCode> full_code_;                        // by key and stored digest
    TrustPolicy trust_;
    int64_t refused_ = 0;
};

} // namespace opgen::db

#endif
