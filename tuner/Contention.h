// A background memory-streaming load of opgen's own, to tune and test kernels under controlled
// memory-bandwidth contention (docs/design.md §7.6: DDR bandwidth taken by another module).
//
// Each load thread owns two arrays much larger than the last-level cache and streams through them
// (a[i] = b[i] + s * a[i], a read-modify-write triad with two streams) in slices of a short period:
// it streams for `intensity` of each period and sleeps for the rest, so intensity 1 is a thread
// streaming flat out and 0.5 one streaming half the time. A contention level is written
// threads x intensity (1.0: one thread flat out).
#ifndef OPGEN_TUNER_CONTENTION_H
#define OPGEN_TUNER_CONTENTION_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace opgen::tuner {

struct ContentionSpec {
    int threads = 1;
    double intensity = 1.0;            // share of each period spent streaming, in (0, 1]
    size_t bytes_per_thread = 64 << 20;  // two arrays of half this size each
    double period_ms = 2.0;
    // CPUs the load threads are pinned to, thread i to cpus[i % size] (empty: not pinned). A model
    // run beside the load (`opgen run --load`) keeps the load on the last CPUs, off its own.
    std::vector<int> cpus;

    // threads x intensity.
    double level() const { return threads * intensity; }
    // "1 thread x 100% streaming 64 MiB".
    std::string describe() const;
};

// The spec of a level: ceil(level) threads sharing it evenly ({1 x 0.5} for 0.5, {2 x 0.75} for
// 1.5). Raises std::invalid_argument for a level that is not positive and finite or above 64.
ContentionSpec contention_for_level(double level, size_t bytes_per_thread = 64 << 20);

// The last `count` CPUs this process may run on, highest last (fewer when it may run on fewer).
std::vector<int> last_cpus(int count);

// The running load; stopping (or destroying) it joins its threads.
class Contention {
public:
    // Allocates and touches the arrays, then starts the threads. Raises std::invalid_argument for
    // a spec with no threads, an intensity outside (0, 1] or arrays under 1 MiB.
    explicit Contention(const ContentionSpec &spec);
    ~Contention();
    Contention(const Contention &) = delete;
    Contention &operator=(const Contention &) = delete;

    void stop();
    const ContentionSpec &spec() const { return spec_; }
    // Bytes streamed (read + written) so far by all threads.
    uint64_t bytes_streamed() const;
    // Seconds since start (to stop, once stopped).
    double seconds() const;

private:
    void stream(int index);

    ContentionSpec spec_;
    std::vector<std::unique_ptr<float[]>> arrays_;  // two per thread
    std::vector<std::thread> threads_;
    std::atomic<bool> stop_{false};
    std::atomic<uint64_t> bytes_{0};
    double started_ = 0;
    double stopped_ = -1;
};

}  // namespace opgen::tuner

#endif
