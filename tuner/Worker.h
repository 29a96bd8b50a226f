// The measurement worker: a separate process (the `opgen-worker` executable) that compiles,
// verifies and times candidates for the tuner, so that a candidate that crashes or hangs takes
// down only its worker (docs/design.md §7.3: compile parts in parallel in several compile
// workers).
//
// The protocol is one JSON object per line over a socket, the parent asking and the worker
// answering in order:
//   {"cmd":"task", "op_source", "op_file", "shape", "target", "seed", "threads", "reference"}
//       -> {"ok":true} or {"ok":false,"error":...}; drops every held kernel.
//   {"cmd":"compile", "id", "point" (null: Halide's default schedule), "fault"}
//       -> {"id", "status", "error", "max_error", "rss_kb", "hwm_kb"}; an ok kernel stays held.
//   {"cmd":"time", "id", "min_time_ms", "min_runs", "max_runs"}
//       -> {"id", "status", "error", "median_ms", "min_ms", "max_ms", "spread", "runs",
//           "reference_ms", "ratio", "rss_kb", "hwm_kb"}
//   {"cmd":"release", "id"} (no answer): frees the held kernel's JIT module and buffers.
// "fault" is a test-only hook: "crash" (SIGSEGV while compiling), "hang" (never answers),
// "crash-timing" (SIGSEGV when timed).
#ifndef OPGEN_TUNER_WORKER_H
#define OPGEN_TUNER_WORKER_H

#include <cstdint>
#include <string>

namespace opgen::tuner {

// Serves requests on `fd` until it is closed; returns the process exit code.
int run_worker(int fd);

// Line framing on a socket. write_line sends the whole line (MSG_NOSIGNAL: a dead peer is an
// error, not a SIGPIPE) and returns false when the peer is gone.
bool write_line(int fd, const std::string &line);

class LineReader {
public:
    explicit LineReader(int fd) : fd_(fd) {}
    // Reads what is available (blocking until something is); false on end of stream or error.
    bool fill();
    // Takes one complete line from what has been read, if there is one.
    bool pop_line(std::string &line);
    // Blocks until a full line arrives; false on end of stream.
    bool read_line(std::string &line);

private:
    int fd_;
    std::string buf_;
};

// This process's resident memory and its peak (VmRSS, VmHWM) in KiB; 0 when unknown.
int64_t current_rss_kb();
int64_t peak_rss_kb();

}  // namespace opgen::tuner

#endif
