#include "tuner/Progress.h"

#include <unistd.h>

#include <cmath>
#include <sstream>

namespace opgen::tuner {

ProgressMode progress_mode(bool quiet, FILE *stream) {
    if (quiet) return ProgressMode::Quiet;
    return isatty(fileno(stream)) ? ProgressMode::Live : ProgressMode::Lines;
}

std::string format_duration(double s) {
    if (s < 0) return "?";
    long t = std::lround(s);
    char buf[32];
    if (t >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t / 60) % 60);
    else if (t >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
    else std::snprintf(buf, sizeof buf, "%lds", t);
    return buf;
}

std::string format_progress(const TuneProgress &p) {
    std::ostringstream o;
    o << p.done << "/" << p.planned << " trials  best ";
    o.setf(std::ios::fixed);
    o.precision(1);
    o << p.best_gflops << " GFLOP/s  " << format_duration(p.elapsed_s) << " elapsed  ETA "
      << format_duration(p.eta_s);
    return o.str();
}

void ProgressPrinter::message(const std::string &line) {
    if (mode_ == ProgressMode::Quiet) return;
    if (mode_ == ProgressMode::Live && !live_.empty()) std::fputs("\r\033[K", out_);
    std::fprintf(out_, "%s\n", line.c_str());
    if (mode_ == ProgressMode::Live && !live_.empty()) std::fputs(live_.c_str(), out_);
    std::fflush(out_);
}

void ProgressPrinter::update(const TuneProgress &p) {
    if (mode_ != ProgressMode::Live) return;
    live_ = "[tune] " + format_progress(p);
    std::fprintf(out_, "\r\033[K%s", live_.c_str());
    std::fflush(out_);
    if (p.finished) finish();
}

void ProgressPrinter::finish() {
    if (mode_ != ProgressMode::Live || live_.empty()) return;
    std::fputs("\n", out_);
    std::fflush(out_);
    live_.clear();
}

}  // namespace opgen::tuner
