#include "tuner/Replay.h"

#include "base/Error.h"

#include <stdexcept>
#include <string>

namespace opgen::tuner {

namespace {

nlohmann::json candidate_json(const PoolCandidate &c) {
    return c.point ? c.point->to_json() : nlohmann::json(nullptr);
}

nlohmann::json candidates_json(const std::vector<PoolCandidate> &candidates) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto &c : candidates) out.push_back(candidate_json(c));
    return out;
}

nlohmann::json result_json(const MeasureResult &r) {
    return {{"status", r.status},
            {"error", r.error},
            {"median_ms", r.timing.median_ms},
            {"min_ms", r.timing.min_ms},
            {"max_ms", r.timing.max_ms},
            {"runs", r.timing.runs},
            {"spread", r.timing.spread},
            {"gflops", r.gflops},
            {"max_error", r.max_error},
            {"reference_ms", r.reference_ms},
            {"ratio", r.ratio}};
}

MeasureResult result_from_json(const nlohmann::json &j) {
    MeasureResult r;
    r.status = j.at("status").get<std::string>();
    r.error = j.at("error").get<std::string>();
    r.timing.median_ms = j.at("median_ms").get<double>();
    r.timing.min_ms = j.at("min_ms").get<double>();
    r.timing.max_ms = j.at("max_ms").get<double>();
    r.timing.runs = j.at("runs").get<int>();
    r.timing.spread = j.at("spread").get<double>();
    r.gflops = j.at("gflops").get<double>();
    r.max_error = max_error_from_json(j);
    r.reference_ms = j.at("reference_ms").get<double>();
    r.ratio = j.at("ratio").get<double>();
    return r;
}

}  // namespace

std::vector<std::vector<MeasureResult>> RecordingRunner::measure_rounds(const std::vector<PoolCandidate> &candidates,
                                                                        const PoolOptions &options, int rounds,
                                                                        double flops, const MeasuredCallback &done) {
    nlohmann::json order = nlohmann::json::array();
    auto results = inner_.measure_rounds(candidates, options, rounds, flops, [&](size_t i, const MeasureResult &r) {
        order.push_back(i);
        if (done) done(i, r);
    });
    nlohmann::json table = nlohmann::json::array();
    for (const auto &round : results) {
        nlohmann::json row = nlohmann::json::array();
        for (const auto &r : round) row.push_back(result_json(r));
        table.push_back(std::move(row));
    }
    calls_.push_back({{"candidates", candidates_json(candidates)},
                      {"rounds", rounds},
                      {"done_order", std::move(order)},
                      {"results", std::move(table)}});
    return results;
}

ReplayRunner::ReplayRunner(const nlohmann::json &recording) {
    user_check(recording.is_object() && recording.contains("calls") && recording.at("calls").is_array())
        << "replay: the recording has no \"calls\" array";
    calls_ = recording.at("calls");
}

std::vector<std::vector<MeasureResult>> ReplayRunner::measure_rounds(const std::vector<PoolCandidate> &candidates,
                                                                     const PoolOptions &, int rounds, double,
                                                                     const MeasuredCallback &done) {
    const std::string where = "replay call " + std::to_string(next_ + 1);
    if (next_ >= calls_.size()) throw std::runtime_error(where + ": the recording has only " +
                                                         std::to_string(calls_.size()) + " calls");
    const nlohmann::json &call = calls_[next_++];
    const nlohmann::json asked = candidates_json(candidates);
    if (asked != call.at("candidates") || rounds != call.at("rounds").get<int>()) {
        throw std::runtime_error(where + " diverged: asked for " + asked.dump() + " in " + std::to_string(rounds) +
                                 " rounds, recorded " + call.at("candidates").dump() + " in " +
                                 call.at("rounds").dump());
    }
    std::vector<std::vector<MeasureResult>> results;
    for (const auto &row : call.at("results")) {
        std::vector<MeasureResult> round;
        for (const auto &r : row) round.push_back(result_from_json(r));
        results.push_back(std::move(round));
    }
    if (done && !results.empty()) {
        for (const auto &i : call.at("done_order")) done(i.get<size_t>(), results[0].at(i.get<size_t>()));
    }
    return results;
}

}  // namespace opgen::tuner
