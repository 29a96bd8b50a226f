#include "tuner/Contention.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <pthread.h>
#include <sched.h>

namespace opgen::tuner {

namespace {

double now_s() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// Elements per slice between clock checks: 256 KiB of each array, short next to a period.
constexpr size_t kSlice = 64 * 1024;

}  // namespace

std::string ContentionSpec::describe() const {
    char text[128];
    std::snprintf(text, sizeof text, "%d thread%s x %.0f%% streaming %zu MiB", threads, threads == 1 ? "" : "s",
                  intensity * 100, bytes_per_thread >> 20);
    return text;
}

ContentionSpec contention_for_level(double level, size_t bytes_per_thread) {
    if (!(level > 0) || !std::isfinite(level) || level > 64) {
        throw std::invalid_argument("contention level " + std::to_string(level) + " must be in (0, 64]");
    }
    ContentionSpec s;
    s.threads = static_cast<int>(std::ceil(level - 1e-9));
    s.intensity = level / s.threads;
    s.bytes_per_thread = bytes_per_thread;
    return s;
}

std::vector<int> last_cpus(int count) {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    if (static_cast<int>(cpus.size()) > count) cpus.erase(cpus.begin(), cpus.end() - count);
    return cpus;
}

Contention::Contention(const ContentionSpec &spec) : spec_(spec) {
    if (spec_.threads < 1 || !(spec_.intensity > 0 && spec_.intensity <= 1) || spec_.bytes_per_thread < (1u << 20) ||
        !(spec_.period_ms > 0)) {
        throw std::invalid_argument("contention: bad load '" + spec_.describe() + "'");
    }
    size_t n = spec_.bytes_per_thread / 2 / sizeof(float);
    for (int t = 0; t < 2 * spec_.threads; t++) {
        arrays_.emplace_back(new float[n]);
        for (size_t i = 0; i < n; i++) {
            arrays_.back()[i] = static_cast<float>(i % 7);  // touch every page now, not while timing
        }
    }
    started_ = now_s();
    for (int t = 0; t < spec_.threads; t++) {
        threads_.emplace_back([this, t] { stream(t); });
        if (spec_.cpus.empty()) continue;
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(spec_.cpus[static_cast<size_t>(t) % spec_.cpus.size()], &set);
        pthread_setaffinity_np(threads_.back().native_handle(), sizeof set, &set);  // best effort
    }
}

Contention::~Contention() {
    stop();
}

void Contention::stop() {
    if (threads_.empty()) {
        return;
    }
    stop_ = true;
    for (std::thread &t : threads_) {
        t.join();
    }
    threads_.clear();
    stopped_ = now_s();
}

uint64_t Contention::bytes_streamed() const {
    return bytes_.load();
}

double Contention::seconds() const {
    return (stopped_ >= 0 ? stopped_ : now_s()) - started_;
}

void Contention::stream(int index) {
    float *a = arrays_[2 * index].get();
    const float *b = arrays_[2 * index + 1].get();
    size_t n = spec_.bytes_per_thread / 2 / sizeof(float);
    double period = spec_.period_ms / 1e3;
    double busy = period * spec_.intensity;
    size_t pos = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
        double begin = now_s();
        // Stream for `busy` seconds of the period, then sleep out the rest.
        while (now_s() - begin < busy) {
            size_t end = std::min(n, pos + kSlice);
            for (size_t i = pos; i < end; i++) {
                a[i] = b[i] + 0.5f * a[i];
            }
            bytes_.fetch_add((end - pos) * 3 * sizeof(float), std::memory_order_relaxed);
            pos = end == n ? 0 : end;
        }
        double rest = period - (now_s() - begin);
        if (rest > 0 && spec_.intensity < 1) {
            std::this_thread::sleep_for(std::chrono::duration<double>(rest));
        }
    }
}

}  // namespace opgen::tuner
