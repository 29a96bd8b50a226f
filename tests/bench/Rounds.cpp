#include "tests/bench/Rounds.h"

#include <Halide.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

namespace opgen::bench {

namespace {

using Clock = std::chrono::steady_clock;

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Poison, run once, check. Returns "" when the output matches the reference, else why not.
std::string check(const Problem &p, Entrant &e, const RoundOptions &o, double &max_error) {
    HostTensor &out = e.contender->output();
    std::fill(out.data.begin(), out.data.end(), std::numeric_limits<float>::quiet_NaN());
    e.contender->run();
    e.contender->sync_output();
    Verification v = check_output(p.reference, out, o.tolerance);
    max_error = v.max_error;
    if (v.ok)
        return "";
    std::ostringstream s;
    s << v.first_mismatch << " (max error " << v.max_error << " over " << v.points_checked
      << " points)";
    return s.str();
}

// Runs `f`, turning each library's failure into a status and message.
template <typename F> bool guarded(Entrant &e, F f) {
    try {
        f();
        return true;
    } catch (const Halide::RuntimeError &x) {
        e.status = "runtime_error";
        e.detail = x.what();
    } catch (const Halide::Error &x) {
        e.status = "runtime_error";
        e.detail = x.what();
    } catch (const dnnl::error &x) {
        e.status = "runtime_error";
        e.detail = std::string("oneDNN: ") + x.what();
    }
    e.contender.reset();
    return false;
}

} // namespace

std::vector<ContenderResult> run_rounds(const Problem &p, std::vector<Entrant> &entrants,
                                        const RoundOptions &o,
                                        const std::function<void(const std::string &)> &log) {
    std::vector<ContenderResult> results(entrants.size());
    std::vector<std::vector<double>> turns(entrants.size());
    std::vector<double> total_s(entrants.size(), 0), last_call_ms(entrants.size(), 0);
    for (size_t i = 0; i < entrants.size(); i++) {
        Entrant &e = entrants[i];
        if (e.status != "ok")
            continue;
        guarded(e, [&] {
            auto t0 = Clock::now();
            std::string why = check(p, e, o, results[i].max_error);
            last_call_ms[i] = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
            if (!why.empty()) {
                e.status = "wrong_result";
                e.detail = why;
                e.contender.reset();
            }
        });
        if (log && e.status != "ok")
            log(e.name + ": " + e.status + ": " + e.detail.substr(0, 200));
    }
    for (int r = 0; r < o.rounds; r++) {
        for (size_t i = 0; i < entrants.size(); i++) {
            Entrant &e = entrants[i];
            if (e.status != "ok" || total_s[i] > o.max_total_s)
                continue;
            guarded(e, [&] {
                // A call that takes half a second warms the caches by itself.
                if (last_call_ms[i] < 500)
                    e.contender->run();
                std::vector<double> calls;
                double spent = 0;
                while ((spent < o.min_turn_ms || calls.empty()) &&
                       int(calls.size()) < o.max_calls) {
                    auto t0 = Clock::now();
                    e.contender->run();
                    double ms =
                        std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
                    calls.push_back(ms);
                    spent += ms;
                }
                last_call_ms[i] = calls.back();
                total_s[i] += spent / 1000;
                results[i].calls += int(calls.size());
                turns[i].push_back(median_of(calls));
            });
        }
    }
    for (size_t i = 0; i < entrants.size(); i++) {
        Entrant &e = entrants[i];
        ContenderResult &c = results[i];
        c.name = e.name;
        c.family = e.family;
        c.detail = e.detail;
        c.setup_s = e.setup_s;
        c.tune_s = e.tune_s;
        c.counts_as_onednn = e.counts_as_onednn;
        c.status = e.status;
        if (e.status == "ok" && turns[i].empty())
            c.status = "runtime_error";
        if (c.status != "ok")
            continue;
        c.rounds = int(turns[i].size());
        c.median_ms = median_of(turns[i]);
        c.min_ms = *std::min_element(turns[i].begin(), turns[i].end());
        c.max_ms = *std::max_element(turns[i].begin(), turns[i].end());
    }
    return results;
}

} // namespace opgen::bench
