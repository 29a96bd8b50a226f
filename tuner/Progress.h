// Progress of a tuning run as a person sees it: on a terminal one live line, redrawn in place
// (trials done and planned, best GFLOP/s so far, ETA); elsewhere plain log lines, one per event;
// nothing with --quiet. The tuner reports numbers (TuneProgress); this file only formats them.
#ifndef OPGEN_TUNER_PROGRESS_H
#define OPGEN_TUNER_PROGRESS_H

#include <cstdio>
#include <string>

namespace opgen::tuner {

struct TuneProgress {
    int done = 0;        // trials measured (or reused from the cache)
    int planned = 0;     // the trial budget
    double best_gflops = 0;
    double elapsed_s = 0;
    double eta_s = -1;   // -1 until it can be estimated
    bool finished = false;  // the last report of the run
};

enum class ProgressMode { Quiet, Lines, Live };

// Live when `stream` is a terminal, else Lines; Quiet when `quiet`.
ProgressMode progress_mode(bool quiet, FILE *stream);

// "1h02m", "2m10s", "7s"; "?" for a negative time (not known yet).
std::string format_duration(double s);

// "12/64 trials  best 85.3 GFLOP/s  1m05s elapsed  ETA 2m10s"
std::string format_progress(const TuneProgress &p);

class ProgressPrinter {
public:
    ProgressPrinter(ProgressMode mode, FILE *stream) : mode_(mode), out_(stream) {}
    ~ProgressPrinter() { finish(); }
    // A log line (Lines and Live; Live clears its line first and redraws it after).
    void message(const std::string &line);
    // The live line (Live only; Lines get the tuner's own per-trial messages); ended when
    // p.finished.
    void update(const TuneProgress &p);
    // Ends the live line.
    void finish();

private:
    ProgressMode mode_;
    FILE *out_;
    std::string live_;
};

}  // namespace opgen::tuner

#endif
