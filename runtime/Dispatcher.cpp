#include "runtime/Dispatcher.h"

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace opgen::db {

DispatchClock steady_dispatch_clock() {
    return [] {
        using namespace std::chrono;
        return duration<double>(steady_clock::now().time_since_epoch()).count();
    };
}

Dispatcher::Dispatcher(std::vector<DispatchVariant> variants, DispatchPolicy policy, DispatchClock clock)
    : variants_(std::move(variants)), policy_(policy), clock_(std::move(clock)) {
    if (variants_.empty()) {
        throw std::invalid_argument("dispatcher: no variants");
    }
    for (const DispatchVariant &v : variants_) {
        if (!v.run) {
            throw std::invalid_argument("dispatcher: variant '" + v.name + "' has nothing to run");
        }
        if (!(v.expected_ms > 0)) {
            throw std::invalid_argument("dispatcher: variant '" + v.name + "' has expected time " +
                                        std::to_string(v.expected_ms) + " ms; it must be positive");
        }
    }
    if (!(policy_.down_ratio < policy_.up_ratio)) {
        throw std::invalid_argument("dispatcher: down ratio " + std::to_string(policy_.down_ratio) +
                                    " must be below up ratio " + std::to_string(policy_.up_ratio));
    }
    if (policy_.window_s < 0 || policy_.min_calls < 1) {
        throw std::invalid_argument("dispatcher: window must be >= 0 s and min calls >= 1");
    }
    if (!clock_) {
        throw std::invalid_argument("dispatcher: no clock");
    }
}

int Dispatcher::call() {
    int ran = current_;
    double start = clock_();
    variants_[static_cast<size_t>(ran)].run();
    observe(start, clock_());
    return ran;
}

void Dispatcher::observe(double start_s, double end_s) {
    calls_++;
    const DispatchVariant &v = variants_[static_cast<size_t>(current_)];
    last_ratio_ = (end_s - start_s) * 1e3 / v.expected_ms;
    int condition = 0;
    if (last_ratio_ >= policy_.up_ratio && current_ + 1 < size()) {
        condition = +1;
    } else if (last_ratio_ < policy_.down_ratio && current_ > 0) {
        condition = -1;
    }
    // Hysteresis: the same condition on every call of the window; one call outside it restarts.
    if (condition != pending_) {
        pending_ = condition;
        pending_since_ = start_s;
        pending_calls_ = 0;
    }
    if (condition == 0) {
        return;
    }
    pending_calls_++;
    double held = end_s - pending_since_;
    if (pending_calls_ < policy_.min_calls || held < policy_.window_s) {
        return;
    }
    DispatchDecision d;
    d.call = calls_;
    d.at_s = end_s;
    d.from = current_;
    d.to = current_ + condition;
    d.ratio = last_ratio_;
    d.calls_held = pending_calls_;
    d.held_s = held;
    d.reason = condition > 0 ? "contention heavier" : "contention lighter";
    current_ = d.to;
    pending_ = 0;
    pending_calls_ = 0;
    decisions_.push_back(d);
    if (log_) {
        log_(d);
    }
}

std::string describe(const Dispatcher &dispatcher, const DispatchDecision &d) {
    char buffer[256];
    std::snprintf(buffer, sizeof buffer, "call %lld at %.3f s: %s -> %s (ratio %.2f, %s for %d calls, %.3f s)",
                  static_cast<long long>(d.call), d.at_s, dispatcher.variant(d.from).name.c_str(),
                  dispatcher.variant(d.to).name.c_str(), d.ratio, d.reason.c_str(), d.calls_held, d.held_s);
    return buffer;
}

}  // namespace opgen::db
