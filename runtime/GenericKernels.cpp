#include "runtime/GenericKernels.h"

#include "store/GenericCodeRows.h"
#include "runtime/GenericFit.h"
#include "runtime/GenericSignature.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace opgen::db {

namespace {

// Sum of |log2(a) - log2(b)| over the symbols; infinity when a value is missing.
double log_distance(const std::vector<std::string> &symbols,
                    const std::map<std::string, int64_t> &a, const std::map<std::string, int64_t> &b) {
    double d = 0;
    for (const std::string &s : symbols) {
        auto x = a.find(s), y = b.find(s);
        if (x == a.end() || y == b.end() || x->second < 1 || y->second < 1) {
            return std::numeric_limits<double>::infinity();
        }
        d += std::fabs(std::log2(double(x->second)) - std::log2(double(y->second)));
    }
    return d;
}

// A generic kernel's ratio at a requested shape is estimated from its measured log ratios at the
// tuned shapes where its register tiles fit (all of them when it fits at none): their mean over the
// kMeasuredNeighbours tuned shapes nearest to the request, each weighted 1 / (kNearWeight +
// log-distance), after each is carried from its shape to the request by the register tiles'
// overwork (GenericFit.h): a tile of 7 computes 21 columns of a 16-wide plane and 28 of a 28-wide
// one. Replayed over every generic kernel timed at 13 conv shapes on an Intel Xeon host, each left
// out in turn, the kernels chosen so ran at a geometric mean of 1.11x a full tune, where the plain
// mean plus half the ratios' spread (the rule before) chose 1.28x: that penalty kept off kernels
// whose ragged tiles made them erratic, and also every kernel timed at a shape it does not fit,
// which it is never offered for.
constexpr size_t kMeasuredNeighbours = 6;
constexpr double kNearWeight = 0.25;

// A generic row's timings are those of its key and its code.
std::string timing_key(const KernelKey &key, const std::string &digest) {
    return key.target + '\n' + key.op_hash + '\n' + key.dtype + '\n' + key.halide_version + '\n' +
           key.tuner_version + '\n' + key.shape + '\n' + digest;
}

// The rows whose register tiles fit `extents` (GenericFit.h), in order; all of them when none
// does, so that a shape some row serves is still served.
std::vector<const GenericCodeRecord *> fitting(std::vector<const GenericCodeRecord *> rows,
                                               const std::map<std::string, int64_t> &extents) {
    std::vector<const GenericCodeRecord *> fit;
    for (const GenericCodeRecord *row : rows) {
        if (register_tiles_fit(row->code.schedule_json, extents)) fit.push_back(row);
    }
    return fit.empty() ? rows : fit;
}

std::string describe(const GenericCodeRecord &row) {
    return "generic kernel of op '" + row.key.op_name + "' from shape " + row.key.shape +
           " on target '" + row.key.target + "'";
}

} // namespace

const KernelCode &GenericKernels::full_code(SqliteConnection &connection, const GenericCodeRecord &row) {
    std::string id = timing_key(row.key, row.code.digest);
    auto found = full_code_.find(id);
    if (found == full_code_.end()) {
        KernelCode code = row.code;
        code.bytes = read_generic_code_bytes(connection, row.key, row.code.digest);
        found = full_code_.emplace(id, std::move(code)).first;
    }
    return found->second;
}

const std::string &GenericKernels::refusal_of(SqliteConnection &connection, const GenericCodeRecord &row) {
    // By key and stored digest: a row changed behind the cache's back keeps the digest of another.
    std::string id = timing_key(row.key, row.code.digest);
    auto found = refusals_.find(id);
    if (found == refusals_.end()) {
        std::string refusal = trust_refusal(row.key, row.code, trust_);
        if (refusal.empty()) {
            refusal = code_refusal(full_code(connection, row));
        }
        refused_ += refusal.empty() ? 0 : 1;
        found = refusals_.emplace(id, std::move(refusal)).first;
    }
    return found->second;
}

const std::string &GenericKernels::header_refusal_of(const GenericCodeRecord &row) {
    auto found = header_refusals_.find(row.code.digest);
    if (found == header_refusals_.end()) {
        found = header_refusals_.emplace(row.code.digest, code_header_refusal(row.code)).first;
    }
    return found->second;
}

const std::optional<std::vector<int64_t>> &GenericKernels::output_dims(const KernelCode &code,
                                                                       const std::string &shape) const {
    std::string id = code.signature + '\n' + code.symbols + '\n' + code.fixed + '\n' + code.defaults + '\n' + shape;
    auto [it, fresh] = output_dims_.try_emplace(id);
    if (fresh) {
        if (std::optional<GenericBinding> binding = bind_generic(code, shape)) {
            for (const CodeArgument &a : binding->arguments) {
                if (a.is_output) it->second = std::vector<int64_t>(a.dims.rbegin(), a.dims.rend());
            }
        }
    }
    return it->second;
}

void GenericKernels::read_timings(SqliteConnection &connection, const LookupRequest &request,
                                  const std::string &key) {
    std::map<std::string, const GenericCodeRecord *> rows;  // by timing_key
    for (const GenericCodeRecord &row : rows_.at(key)) {
        if (header_refusal_of(row).empty()) rows[timing_key(row.key, row.code.digest)] = &row;
    }
    for (const auto &[id, row] : rows) {
        tiles_[id] = register_tiles(row->code.schedule_json);
    }
    for (const GenericTimingRecord &t :
         read_generic_timings(connection, request.target, request.op_name, request.dtype, request.op_hash,
                              request.halide_version, request.tuner_version)) {
        std::string id = timing_key(t.key, t.digest);
        auto row = rows.find(id);
        std::optional<std::map<std::string, int64_t>> at = parse_values(t.at_shape);
        if (row == rows.end() || !at || !(t.ratio > 0) || !std::isfinite(t.ratio)) continue;
        const std::optional<std::vector<int64_t>> &dims = output_dims(row->second->code, t.at_shape);
        if (!dims) continue;
        const std::vector<int64_t> &tiles = tiles_[id];
        timings_[id].push_back({std::move(*at), std::log(t.ratio), register_tile_overwork(tiles, *dims),
                                register_tiles_fit_dims(tiles, *dims)});
    }
}

std::vector<const GenericCodeRecord *> GenericKernels::serving(SqliteConnection &connection,
                                                               const LookupRequest &request,
                                                               std::string &why) {
    std::string key = request.target + '\n' + request.op_name + '\n' + request.dtype + '\n' +
                      request.op_hash + '\n' + request.halide_version + '\n' + request.tuner_version;
    auto found = rows_.find(key);
    if (found == rows_.end()) {
        // Without their bytes: an op's rows hold megabytes of conv code, and only the chosen
        // row's are read (full_code), to be checked and loaded.
        found = rows_.emplace(key, read_generic_code(connection, request.target, request.op_name,
                                                     request.dtype, request.op_hash,
                                                     request.halide_version, request.tuner_version,
                                                     CodeBytes::Leave))
                    .first;
        read_timings(connection, request, key);
    }
    std::vector<const GenericCodeRecord *> rows, unbound;
    std::string first_why;
    std::string refused;
    for (const GenericCodeRecord &row : found->second) {
        std::string reason;
        // Only the checks that read no code here: the digest of every row of an op (megabytes of
        // conv code) would be most of a first call's time; choose() checks the chosen row's.
        if (const std::string &refusal = header_refusal_of(row); !refusal.empty()) {
            // Refused code is never chosen, and never bound: its fields may be anything.
            if (refused.empty()) refused = describe(row) + ": refused: " + refusal;
            continue;
        }
        if (!bind_generic(row.code, request.shape, &reason)) {
            if (first_why.empty()) first_why = reason;
            unbound.push_back(&row);
            continue;
        }
        rows.push_back(&row);
    }
    // None serves: a row whose fields were changed behind the cache's back (its fixed values, say)
    // is reported as refused, not as serving other shapes. Only on this path is every row hashed.
    for (size_t i = 0; rows.empty() && refused.empty() && i < unbound.size(); i++) {
        if (const std::string &refusal = refusal_of(connection, *unbound[i]); !refusal.empty()) {
            refused = describe(*unbound[i]) + ": refused: " + refusal;
        }
    }
    if (rows.empty() && !refused.empty()) {
        throw DbError("database '" + connection.path() + "': " + refused);
    }
    if (rows.empty()) {
        why = found->second.empty()
                  ? "no generic code of op '" + request.op_name + "' on target '" + request.target +
                        "'; run 'opgen db compile --generic' on the cache"
                  : "no generic code of op '" + request.op_name + "' serves shape '" +
                        request.shape + "': " + first_why;
    }
    return rows;
}

std::vector<const GenericCodeRecord *> GenericKernels::ranked(std::vector<const GenericCodeRecord *> rows,
                                                              const LookupRequest &request,
                                                              const GenericRanking &ranking) const {
    rows = fitting(std::move(rows), ranking.extents);
    const GenericScorer &scorer = ranking.scorer;
    // Measured evidence first: the lowest estimated ratio; rows never timed after every timed one.
    std::vector<double> estimate;
    bool any_measured = false;
    for (const GenericCodeRecord *row : rows) {
        std::optional<double> r = measured_ratio(*row, request.shape);
        estimate.push_back(r.value_or(std::numeric_limits<double>::infinity()));
        any_measured = any_measured || r.has_value();
    }
    // Then the cost model's scores (higher faster), else the shape distance to the tuned shape.
    std::vector<double> score;
    if (!any_measured && scorer && rows.size() > 1) {
        score = scorer(rows);
        if (score.size() != rows.size() ||
            *std::max_element(score.begin(), score.end()) == -std::numeric_limits<double>::infinity()) {
            score.clear();
        }
    }
    std::optional<std::map<std::string, int64_t>> wanted = parse_values(request.shape);
    std::vector<double> distance;
    for (const GenericCodeRecord *row : rows) {
        std::optional<std::map<std::string, int64_t>> from = parse_values(row->key.shape);
        distance.push_back(wanted && from ? log_distance(split_names(row->code.symbols), *wanted, *from)
                                          : std::numeric_limits<double>::infinity());
    }
    std::vector<size_t> order(rows.size());
    for (size_t i = 0; i < order.size(); i++) {
        order[i] = i;
    }
    // Stable: among equals, key order.
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (estimate[a] != estimate[b]) return estimate[a] < estimate[b];
        if (!score.empty() && score[a] != score[b]) return score[a] > score[b];
        return distance[a] < distance[b];
    });
    std::vector<const GenericCodeRecord *> out;
    for (size_t i : order) {
        out.push_back(rows[i]);
    }
    return out;
}

std::vector<const GenericCodeRecord *> GenericKernels::ranked_serving(SqliteConnection &connection,
                                                                      const LookupRequest &request,
                                                                      std::string &why,
                                                                      const GenericRanking &ranking) {
    std::vector<const GenericCodeRecord *> rows = ranked(serving(connection, request, why), request, ranking);
    // The first whose code passes every check leads: one digest computed, unless a better-ranked
    // row is refused (then dropped).
    std::string refused;
    while (!rows.empty()) {
        const std::string &refusal = refusal_of(connection, *rows.front());
        if (refusal.empty()) {
            return rows;
        }
        if (refused.empty()) refused = describe(*rows.front()) + ": refused: " + refusal;
        rows.erase(rows.begin());
    }
    if (!refused.empty()) {
        throw DbError("database '" + connection.path() + "': " + refused);
    }
    return rows;
}

const GenericCodeRecord *GenericKernels::choose(SqliteConnection &connection,
                                                const LookupRequest &request, std::string &why,
                                                const GenericRanking &ranking) {
    std::vector<const GenericCodeRecord *> rows = ranked_serving(connection, request, why, ranking);
    return rows.empty() ? nullptr : rows.front();
}

std::optional<double> GenericKernels::measured_ratio(const GenericCodeRecord &row,
                                                     const std::string &shape) const {
    const std::string id = timing_key(row.key, row.code.digest);
    auto found = timings_.find(id);
    auto tiles = tiles_.find(id);
    std::optional<std::map<std::string, int64_t>> wanted = parse_values(shape);
    if (found == timings_.end() || found->second.empty() || tiles == tiles_.end() || !wanted) {
        return std::nullopt;
    }
    const std::optional<std::vector<int64_t>> &dims = output_dims(row.code, shape);
    if (!dims) {
        return std::nullopt;
    }
    const std::vector<Timing> &timings = found->second;
    const bool fits_somewhere =
        std::any_of(timings.begin(), timings.end(), [](const Timing &t) { return t.fits; });
    std::vector<std::string> symbols = split_names(row.code.symbols);
    std::vector<std::pair<double, double>> near;  // (distance, log ratio without the overwork)
    for (const Timing &t : timings) {
        if (t.fits || !fits_somewhere) near.emplace_back(log_distance(symbols, *wanted, t.at), t.log_ratio - t.log_overwork);
    }
    size_t keep = std::min(near.size(), kMeasuredNeighbours);
    std::partial_sort(near.begin(), near.begin() + ptrdiff_t(keep), near.end());
    double sum = 0, weights = 0;
    for (size_t i = 0; i < keep; i++) {
        if (!std::isfinite(near[i].first)) {
            continue;
        }
        double w = 1 / (kNearWeight + near[i].first);
        sum += w * near[i].second;
        weights += w;
    }
    if (weights <= 0) {
        return std::nullopt;
    }
    return std::exp(sum / weights + register_tile_overwork(tiles->second, *dims));
}

std::optional<LookupAnswer> GenericKernels::answer(SqliteConnection &connection,
                                                   const LookupRequest &request, std::string &why,
                                                   const GenericRanking &ranking) {
    const GenericCodeRecord *row = choose(connection, request, why, ranking);
    if (!row) {
        return std::nullopt;
    }
    return generic_answer(*row, bind_generic(row->code, request.shape)->canonical);
}

LookupAnswer generic_answer(const GenericCodeRecord &row, const std::string &canonical) {
    LookupAnswer answer;
    answer.kind = AnswerKind::Generic;
    answer.from_shape = row.key.shape;
    answer.kernel.key = row.key;
    answer.kernel.key.shape = canonical;
    answer.kernel.schedule_json = row.code.schedule_json;
    answer.kernel.verified = true;  // checked against the reference when it was built
    answer.kernel.time_ms = std::numeric_limits<double>::quiet_NaN();
    return answer;
}

std::shared_ptr<const LoadedKernel> GenericKernels::kernel(SqliteConnection &connection,
                                                           const LookupRequest &request,
                                                           std::string &why,
                                                           const GenericRanking &ranking) {
    const GenericCodeRecord *row = choose(connection, request, why, ranking);
    if (!row) {
        return nullptr;
    }
    std::shared_ptr<const LoadedKernel> &loaded = loaded_[row->code.digest];
    if (!loaded) {
        // choose() had refusal_of(*row) pass on this very row: its digest is not computed again.
        loaded = load_checked_kernel_code(full_code(connection, *row),
                                          "database '" + connection.path() + "': " + describe(*row));
    }
    return bind_generic_kernel(loaded, row->code, request.shape, &why);
}

} // namespace opgen::db
