#include "tests/bench/Report.h"

#include "tests/bench/Network.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace opgen::bench {

double EntryResult::gflops(const ContenderResult &c) const {
    return c.ok() && c.median_ms > 0 ? flops / (c.median_ms * 1e6) : 0;
}

const ContenderResult *EntryResult::onednn() const {
    const ContenderResult *best = nullptr;
    for (const auto &c : contenders) {
        if (c.ok() && c.counts_as_onednn && (!best || c.median_ms < best->median_ms))
            best = &c;
    }
    return best;
}

const ContenderResult *EntryResult::best_autoscheduler() const {
    const ContenderResult *best = nullptr;
    for (const auto &c : contenders) {
        if (c.ok() && c.family == "Halide autoscheduler" &&
            (!best || c.median_ms < best->median_ms))
            best = &c;
    }
    return best;
}

const ContenderResult *EntryResult::find(const std::string &name) const {
    for (const auto &c : contenders) {
        if (c.name == name)
            return &c;
    }
    return nullptr;
}

MachineFigure BenchRun::ceiling(int threads) const {
    MachineFigure m;
    m.threads = threads;
    for (const MachineFigures &f : machine) {
        for (const auto &x : f.figures) {
            if (x.threads != threads)
                continue;
            m.peak_gflops = std::max(m.peak_gflops, x.peak_gflops);
            m.triad_gbs = std::max(m.triad_gbs, x.triad_gbs);
            m.peak_gflops_median = std::max(m.peak_gflops_median, x.peak_gflops_median);
            m.triad_gbs_median = std::max(m.triad_gbs_median, x.triad_gbs_median);
        }
    }
    return m;
}

double BenchRun::roofline_ms(const EntryResult &e) const {
    return bench::roofline_ms(e.flops, e.bytes, ceiling(e.threads));
}

namespace {

// Three significant digits, as a speed reads best.
std::string num(double v) {
    char buf[32];
    if (!std::isfinite(v))
        return "-";
    if (std::fabs(v) >= 100) {
        std::snprintf(buf, sizeof buf, "%.0f", v);
    } else if (std::fabs(v) >= 10) {
        std::snprintf(buf, sizeof buf, "%.1f", v);
    } else {
        std::snprintf(buf, sizeof buf, "%.2f", v);
    }
    return buf;
}

std::string fixed(double v, int digits) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string percent(double fraction) {
    return fixed(100 * fraction, fraction < 0.1 ? 1 : 0) + "%";
}

std::string ratio(double v) {
    return v > 0 ? fixed(v, 2) + "×" : "-";
}

// What a contender that was not timed shows in a speed cell.
std::string status_cell(const std::string &status) {
    static const std::map<std::string, std::string> short_names = {
        {"wrong_result", "WRONG"},
        {"compile_error", "fails to compile"},
        {"runtime_error", "fails to run"},
        {"unsupported", "n/a"},
        {"not_in_cache", "not in cache"},
        {"tune_failed", "tuning failed"},
        {"skipped", "skipped"},
        {"out_of_bounds", "over its search bounds"}};
    auto it = short_names.find(status);
    return it == short_names.end() ? status : it->second;
}

std::string one_line(std::string s, size_t max = 160) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    if (s.size() > max)
        s = s.substr(0, max) + "…";
    return s;
}

struct Table {
    std::vector<std::string> header;
    std::vector<bool> right; // right-aligned columns
    std::vector<std::vector<std::string>> rows;
};

std::string md_cell(std::string s) {
    std::string out;
    for (char c : s) {
        if (c == '|')
            out += "\\|";
        else if (c != '\n')
            out += c;
    }
    return out;
}

std::string to_markdown(const Table &t) {
    std::ostringstream s;
    s << "|";
    for (const auto &h : t.header)
        s << " " << md_cell(h) << " |";
    s << "\n|";
    for (size_t i = 0; i < t.header.size(); i++)
        s << (t.right[i] ? " ---: |" : " --- |");
    s << "\n";
    for (const auto &r : t.rows) {
        s << "|";
        for (const auto &c : r)
            s << " " << md_cell(c) << " |";
        s << "\n";
    }
    return s.str();
}

std::string esc(const std::string &s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string to_html(const Table &t) {
    std::ostringstream s;
    s << "<table>\n<tr>";
    for (const auto &h : t.header)
        s << "<th>" << esc(h) << "</th>";
    s << "</tr>\n";
    for (const auto &r : t.rows) {
        s << "<tr>";
        for (size_t i = 0; i < r.size(); i++)
            s << "<td" << (t.right[i] ? " class=\"r\"" : "") << ">" << esc(r[i]) << "</td>";
        s << "</tr>\n";
    }
    s << "</table>\n";
    return s.str();
}

// The columns of the summary, in the order contenders are run.
const std::vector<std::string> &summary_names() {
    static const std::vector<std::string> names = {"opgen",         "OpenBLAS", "Adams2019",
                                                   "Mullapudi2016", "Li2018",   "naive"};
    return names;
}

// Turns that spread more than this (slowest over fastest) mean something else took the core for a
// while; such figures carry a mark.
constexpr double kNoisySpread = 2.0;

std::string noisy_mark(const ContenderResult &c) {
    return c.max_ms > kNoisySpread * c.min_ms ? " ~" : "";
}

std::string speed_cell(const EntryResult &e, const ContenderResult *c) {
    if (!c)
        return "-";
    if (!c->ok())
        return status_cell(c->status);
    return num(e.gflops(*c)) + noisy_mark(*c);
}

Table machine_table(const BenchRun &run) {
    Table t;
    t.header = {"threads", "FMA peak GFLOP/s: start (best / median)", "end (best / median)",
                "ceiling", "triad GB/s: start (best / median)",       "end (best / median)",
                "ceiling"};
    t.right = {true, true, true, true, true, true, true};
    auto cell = [&](const MachineFigures &f, int th, bool peak) {
        for (const auto &x : f.figures) {
            if (x.threads != th)
                continue;
            return peak ? num(x.peak_gflops) + " / " + num(x.peak_gflops_median)
                        : num(x.triad_gbs) + " / " + num(x.triad_gbs_median);
        }
        return std::string("-");
    };
    if (run.machine.empty())
        return t;
    for (int th : run.threads) {
        MachineFigure c = run.ceiling(th);
        t.rows.push_back({std::to_string(th), cell(run.machine.front(), th, true),
                          cell(run.machine.back(), th, true), num(c.peak_gflops),
                          cell(run.machine.front(), th, false), cell(run.machine.back(), th, false),
                          num(c.triad_gbs)});
    }
    return t;
}

Table summary_table(const BenchRun &run) {
    Table t;
    t.header = {"entry",
                "thr",
                "opgen",
                "oneDNN",
                "OpenBLAS",
                "Adams2019",
                "Mullapudi2016",
                "Li2018",
                "naive",
                "opgen ÷ oneDNN",
                "opgen ÷ best AS",
                "opgen % roofline",
                "roofline GFLOP/s",
                "FMA scaling"};
    t.right = {false, true, true, true, true, true, true, true, true, true, true, true, true, true};
    for (const auto &e : run.entries) {
        if (e.status != "ok") {
            std::vector<std::string> row{e.label, std::to_string(e.threads), e.status};
            row.resize(t.header.size(), "-");
            t.rows.push_back(row);
            continue;
        }
        const ContenderResult *opgen = e.find("opgen"), *dnn = e.onednn(),
                              *as = e.best_autoscheduler();
        std::vector<std::string> row{e.label, std::to_string(e.threads), speed_cell(e, opgen)};
        if (dnn) {
            std::string variant = dnn->name == "oneDNN"           ? ""
                                  : dnn->name == "oneDNN NCHW"    ? " (nchw)"
                                  : dnn->name == "oneDNN blocked" ? " (blocked)"
                                                                  : " (blocked+r)";
            row.push_back(num(e.gflops(*dnn)) + noisy_mark(*dnn) + variant);
        } else {
            const ContenderResult *any = nullptr;
            for (const auto &c : e.contenders) {
                if (c.family == "oneDNN" && !any)
                    any = &c;
            }
            row.push_back(speed_cell(e, any));
        }
        for (size_t i = 1; i < summary_names().size(); i++)
            row.push_back(speed_cell(e, e.find(summary_names()[i])));
        bool opgen_ok = opgen && opgen->ok();
        row.push_back(opgen_ok && dnn ? ratio(dnn->median_ms / opgen->median_ms) : "-");
        row.push_back(opgen_ok && as ? ratio(as->median_ms / opgen->median_ms) : "-");
        double bound = run.roofline_ms(e);
        row.push_back(opgen_ok && bound > 0 ? percent(bound / opgen->median_ms) : "-");
        row.push_back(bound > 0 ? num(e.flops / (bound * 1e6)) : "-");
        row.push_back(e.fma_scaling > 0 ? ratio(e.fma_scaling) : "-");
        t.rows.push_back(row);
    }
    return t;
}

// The geometric mean of opgen's speed over an anchor's, across the rows where both ran: over all
// rows, then per thread count. `anchor` picks the row's anchor (null where it did not run).
struct GeoMean {
    std::string what;
    double all = 0;
    int rows = 0, of = 0;
    std::map<int, double> by_threads;
};

GeoMean geomean_over(const BenchRun &run, const std::string &what,
                     const ContenderResult *(EntryResult::*anchor)() const) {
    GeoMean g{what, 0, 0, int(run.entries.size()), {}};
    double sum = 0;
    std::map<int, std::pair<double, int>> per;
    for (const auto &e : run.entries) {
        const ContenderResult *opgen = e.find("opgen"), *a = (e.*anchor)();
        if (e.status != "ok" || !opgen || !opgen->ok() || !a || opgen->median_ms <= 0)
            continue;
        double l = std::log(a->median_ms / opgen->median_ms);
        sum += l;
        g.rows++;
        per[e.threads].first += l;
        per[e.threads].second++;
    }
    if (g.rows > 0)
        g.all = std::exp(sum / g.rows);
    for (const auto &[t, p] : per)
        g.by_threads[t] = std::exp(p.first / p.second);
    return g;
}

std::vector<GeoMean> geomeans(const BenchRun &run) {
    return {geomean_over(run, "opgen ÷ the best Halide autoscheduler",
                         &EntryResult::best_autoscheduler),
            geomean_over(run, "opgen ÷ oneDNN", &EntryResult::onednn)};
}

std::string geomean_line(const GeoMean &g) {
    std::string line = g.what + ", geometric mean over " + std::to_string(g.rows) + " of " +
                       std::to_string(g.of) + " rows: " + ratio(g.all);
    for (const auto &[t, v] : g.by_threads)
        line += "; " + std::to_string(t) + " thread" + (t > 1 ? "s" : "") + ": " + ratio(v);
    return line;
}

Table detail_table(const BenchRun &run, const EntryResult &e) {
    Table t;
    t.header = {"contender", "GFLOP/s",    "min–max", "ms",      "× oneDNN",
                "× best AS", "% roofline", "rounds",  "setup s", "notes"};
    t.right = {false, true, true, true, true, true, true, true, true, false};
    const ContenderResult *dnn = e.onednn(), *as = e.best_autoscheduler();
    double bound = run.roofline_ms(e);
    for (const auto &c : e.contenders) {
        std::string setup = c.setup_s > 0 ? fixed(c.setup_s, 2) : "-";
        if (c.tune_s > 0)
            setup += " (+" + fixed(c.tune_s, 0) + " tuning)";
        if (!c.ok()) {
            t.rows.push_back({c.name, status_cell(c.status), "-", "-", "-", "-", "-", "-", setup,
                              one_line(c.detail)});
            continue;
        }
        t.rows.push_back({c.name, num(e.gflops(c)) + noisy_mark(c),
                          num(e.flops / (c.max_ms * 1e6)) + "–" + num(e.flops / (c.min_ms * 1e6)),
                          fixed(c.median_ms, 3), dnn ? ratio(dnn->median_ms / c.median_ms) : "-",
                          as ? ratio(as->median_ms / c.median_ms) : "-",
                          bound > 0 ? percent(bound / c.median_ms) : "-", std::to_string(c.rounds),
                          setup, one_line(c.detail)});
    }
    return t;
}

std::string entry_heading(const BenchRun &run, const EntryResult &e) {
    std::ostringstream s;
    s << e.label << " — " << e.threads << " thread" << (e.threads > 1 ? "s" : "") << " (" << e.op
      << " " << e.shape << "; " << num(e.flops / 1e9) << " GFLOP";
    double bound = run.roofline_ms(e);
    if (bound > 0) {
        MachineFigure m = run.ceiling(e.threads);
        bool memory = e.bytes / (m.triad_gbs * 1e6) >= e.flops / (m.peak_gflops * 1e6);
        s << "; roofline " << num(e.flops / (bound * 1e6)) << " GFLOP/s, "
          << (memory ? "memory" : "compute") << "-bound";
        if (e.fma_scaling > 0)
            s << "; FMA scaling just before: " << ratio(e.fma_scaling);
    }
    s << ")";
    return s.str();
}

std::vector<std::string> notes(const BenchRun &run) {
    std::ostringstream timing;
    timing << "Timing: contenders interleaved round by round (A B C … A B C …), " << run.rounds
           << " rounds; each turn is one warm-up call and then calls for at least "
           << fixed(run.min_turn_ms, 0)
           << " ms. A figure is the median over rounds of each turn's median call; min–max is "
              "the fastest and slowest turn. The clock of this kind of machine wanders by 15–25%: "
              "read ratios within a row, not absolute figures across runs.";
    return {
        "opgen: the kernel cache's winner for (op, shape, host target, thread count), "
        "JIT-compiled in this process from its SchedulePoint with apply_schedule — the same "
        "lowering and schedule that `opgen emit` compiles ahead of time with "
        "compile_to_static_library. A key missing from the cache is tuned in this run with the "
        "tuner library and stored (its tuning time is shown in the setup column).",
        "Halide autoschedulers: the same Halide algorithm (lower_to_halide), estimates set from "
        "the shape on every input and the output, Pipeline::auto_schedule(name, host, "
        "MachineParams(threads, last-level cache, 40)), JIT-compiled; scheduling plus compile "
        "time is in the setup column.",
        "oneDNN: convolutions run as 'blocked+reorders' (format_tag::any; the NCHW input and the "
        "OIHW weights reordered into the layouts oneDNN picks and the output back, on every call, "
        "timed, as opgen's kernels pack inside the timed call) and 'NCHW' (plain layouts forced); "
        "'blocked+reorders, weights untimed' (weights reordered once, as a framework does at model "
        "load; the anchor before session 8) and 'blocked (conv only)' (the primitive alone) are "
        "for reference. The oneDNN column and every '× oneDNN' ratio use the faster of the first "
        "two; depthwise runs as a grouped convolution.",
        "Every contender's output is checked against opgen's reference interpreter (check_output "
        "on the reference sample, tolerance 1e-3 relative to 1 + |want|, output poisoned with NaN "
        "first) before it is timed; a wrong or failing contender is reported by its status and "
        "never timed.",
        timing.str(),
        "A '~' after a figure marks a contender whose slowest turn took more than twice its "
        "fastest: another process held a core for a while (this machine's cores are shared), so "
        "read that figure with its min–max.",
        "Roofline: max(FLOPs / FMA peak, compulsory bytes / triad bandwidth) for the column's "
        "thread count, with the ceilings the best of every machine measurement in the run (start, "
        "a short probe before each all-thread column and after each entry, end; each repetition "
        "is about 5 ms, like a kernel call); compulsory bytes are every input read once and the "
        "output written once. '% roofline' is the bound's time over the measured time.",
        "Threads: Halide via its JIT runtime (the pool shut down and restarted at the new size "
        "with halide_set_num_threads), oneDNN via omp_set_num_threads (Debian builds it on "
        "OpenMP), OpenBLAS via openblas_set_num_threads. Idle workers sleep instead of spinning "
        "(OMP_WAIT_POLICY=passive, OPENBLAS_THREAD_TIMEOUT=4, unless set otherwise): spinning "
        "workers took the core from the calling thread and made oneDNN's two-thread calls "
        "10–100× slower on this shared machine. 'FMA scaling' is the FMA peak on all threads "
        "over one thread, measured just before each all-thread column: near 1× means another "
        "process held the other core, and that column's figures say little. The naive loop is "
        "serial and runs in the 1-thread column only.",
        "GFLOP/s use opgen's FLOP count of the op for every contender (a multiply-add is two; "
        "softmax and layernorm count their arithmetic as written in the op file), so a row "
        "compares like with like.",
    };
}

std::string header_lines_md(const BenchRun &run) {
    std::ostringstream s;
    if (!run.progress.empty())
        s << "- **" << run.progress << "**\n";
    s << "- run: " << run.started_at << ", " << fixed(run.wall_s, 0) << " s, `" << run.command
      << "`\n";
    s << "- CPU: " << run.cpu << "; FMA microbenchmark "
      << (run.machine.empty() ? std::string("-") : run.machine.front().fma_isa) << "; opgen target "
      << run.opgen_target << "\n";
    s << "- Halide target: `" << run.halide_target << "`\n";
    s << "- " << run.onednn << "\n";
    s << "- OpenBLAS: " << run.openblas << "\n";
    s << "- kernel cache: " << run.cache_path << "\n";
    s << "- load average (1, 5, 15 min) at start: " << run.load_start
      << "; at end: " << run.load_end << "\n";
    s << "- threading environment: `" << run.environment << "`\n";
    return s.str();
}

// The chart: one group of bars per entry and thread count, bar length = fraction of the roofline
// bound (so every group shares one scale), labelled with GFLOP/s.
std::string svg_chart(const BenchRun &run) {
    static const std::map<std::string, std::string> colour = {{"opgen", "#c0392b"},
                                                              {"oneDNN", "#1f77b4"},
                                                              {"OpenBLAS", "#2ca02c"},
                                                              {"Halide autoscheduler", "#ff7f0e"},
                                                              {"naive", "#7f7f7f"}};
    const int label_w = 250, bar_w = 520, value_w = 190, width = label_w + bar_w + value_w;
    const int bar_h = 13, gap = 3, group_gap = 12, head_h = 18;
    std::ostringstream body;
    int y = 24;
    double max_fraction = 1.0;
    for (const auto &e : run.entries) {
        double bound = run.roofline_ms(e);
        for (const auto &c : e.contenders) {
            if (c.ok() && bound > 0)
                max_fraction = std::max(max_fraction, bound / c.median_ms);
        }
    }
    for (const auto &e : run.entries) {
        body << "<text x=\"4\" y=\"" << y + 12 << "\" class=\"g\">" << esc(e.label) << " — "
             << e.threads << " thr" << (e.status == "ok" ? "" : " — " + esc(e.status))
             << "</text>\n";
        y += head_h;
        double bound = run.roofline_ms(e);
        for (const auto &c : e.contenders) {
            body << "<text x=\"" << label_w - 6 << "\" y=\"" << y + bar_h - 2
                 << "\" text-anchor=\"end\">" << esc(c.name) << "</text>";
            if (c.ok() && bound > 0) {
                double f = bound / c.median_ms;
                int w = std::max(1, int(std::lround(bar_w * f / max_fraction)));
                auto col = colour.find(c.family);
                body << "<rect x=\"" << label_w << "\" y=\"" << y << "\" width=\"" << w
                     << "\" height=\"" << bar_h << "\" fill=\""
                     << (col == colour.end() ? "#999" : col->second) << "\"><title>" << esc(c.name)
                     << ": " << num(e.gflops(c)) << " GFLOP/s, " << percent(f)
                     << " of roofline</title></rect>";
                body << "<text x=\"" << label_w + w + 4 << "\" y=\"" << y + bar_h - 2 << "\">"
                     << num(e.gflops(c)) << " GFLOP/s · " << percent(f) << "</text>\n";
            } else {
                body << "<text x=\"" << label_w + 4 << "\" y=\"" << y + bar_h - 2
                     << "\" class=\"bad\">" << esc(status_cell(c.status)) << "</text>\n";
            }
            y += bar_h + gap;
        }
        y += group_gap;
    }
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << y + 10
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
    s << "<style>.g{font-weight:bold;font-size:12px}.bad{fill:#a00;font-style:italic}.ax{fill:#666}"
         "</style>\n";
    for (int k = 0; k <= 4; k++) {
        double frac = max_fraction * k / 4;
        int x = label_w + int(std::lround(bar_w * k / 4.0));
        s << "<line x1=\"" << x << "\" y1=\"16\" x2=\"" << x << "\" y2=\"" << y
          << "\" stroke=\"#ddd\"/>";
        s << "<text x=\"" << x << "\" y=\"12\" text-anchor=\"middle\" class=\"ax\">"
          << percent(frac) << "</text>\n";
    }
    s << "<text x=\"4\" y=\"12\" class=\"ax\">fraction of the roofline bound →</text>\n";
    s << body.str() << "</svg>\n";
    return s.str();
}

} // namespace

std::string markdown_report(const BenchRun &run) {
    std::ostringstream s;
    s << "# opgen against the anchors\n\n" << header_lines_md(run) << "\n";
    s << "## Machine ceilings (measured in this run)\n\n"
      << to_markdown(machine_table(run)) << "\n";
    s << "## Summary (GFLOP/s, median of interleaved rounds)\n\n"
      << to_markdown(summary_table(run)) << "\n";
    for (const auto &g : geomeans(run))
        s << "- " << geomean_line(g) << "\n";
    s << "\n";
    if (!run.network.empty())
        s << network_markdown(run);
    s << "## Details\n\n";
    for (const auto &e : run.entries) {
        s << "### " << entry_heading(run, e) << "\n\n";
        if (e.status != "ok") {
            s << e.status << ": " << e.detail << "\n\n";
            continue;
        }
        s << to_markdown(detail_table(run, e)) << "\n";
    }
    s << "## How this was measured\n\n";
    for (const auto &n : notes(run))
        s << "- " << n << "\n";
    return s.str();
}

std::string html_report(const BenchRun &run) {
    std::ostringstream s;
    s << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>opgen against the "
         "anchors</title>\n"
      << "<style>body{font-family:sans-serif;max-width:1200px;margin:1em auto;padding:0 "
         "1em;color:#222}"
      << "table{border-collapse:collapse;margin:0.5em 0 1.2em;font-size:13px}"
      << "th,td{border:1px solid #ccc;padding:2px 6px;vertical-align:top}th{background:#f0f0f0}"
      << "td.r{text-align:right;white-space:nowrap}h3{font-size:15px;margin-bottom:0.2em}"
      << ".legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 "
         "12px;vertical-align:middle}"
      << "</style></head><body>\n";
    s << "<h1>opgen against the anchors</h1>\n<ul>\n";
    if (!run.progress.empty())
        s << "<li><b>" << esc(run.progress) << "</b></li>\n";
    s << "<li>run: " << esc(run.started_at) << ", " << fixed(run.wall_s, 0) << " s, <code>"
      << esc(run.command) << "</code></li>\n";
    s << "<li>CPU: " << esc(run.cpu) << "; FMA microbenchmark "
      << esc((run.machine.empty() ? std::string("-") : run.machine.front().fma_isa))
      << "; opgen target " << esc(run.opgen_target) << "</li>\n";
    s << "<li>Halide target: <code>" << esc(run.halide_target) << "</code></li>\n";
    s << "<li>" << esc(run.onednn) << "</li>\n<li>OpenBLAS: " << esc(run.openblas) << "</li>\n";
    s << "<li>kernel cache: " << esc(run.cache_path) << "</li>\n";
    s << "<li>load average (1, 5, 15 min) at start: " << esc(run.load_start)
      << "; at end: " << esc(run.load_end) << "</li>\n";
    s << "<li>threading environment: <code>" << esc(run.environment) << "</code></li>\n</ul>\n";
    s << "<h2>Machine ceilings (measured in this run)</h2>\n" << to_html(machine_table(run));
    s << "<h2>Summary (GFLOP/s, median of interleaved rounds)</h2>\n"
      << to_html(summary_table(run));
    s << "<ul>\n";
    for (const auto &g : geomeans(run))
        s << "<li>" << esc(geomean_line(g)) << "</li>\n";
    s << "</ul>\n";
    s << "<h2>Chart</h2>\n<p class=\"legend\"><span style=\"background:#c0392b\"></span>opgen"
      << "<span style=\"background:#1f77b4\"></span>oneDNN<span "
         "style=\"background:#2ca02c\"></span>OpenBLAS"
      << "<span style=\"background:#ff7f0e\"></span>Halide autoscheduler<span "
         "style=\"background:#7f7f7f\"></span>naive</p>\n";
    s << svg_chart(run);
    s << "<h2>Details</h2>\n";
    for (const auto &e : run.entries) {
        s << "<h3>" << esc(entry_heading(run, e)) << "</h3>\n";
        if (e.status != "ok") {
            s << "<p>" << esc(e.status + ": " + e.detail) << "</p>\n";
            continue;
        }
        s << to_html(detail_table(run, e));
    }
    s << "<h2>How this was measured</h2>\n<ul>\n";
    for (const auto &n : notes(run))
        s << "<li>" << esc(n) << "</li>\n";
    s << "</ul>\n</body></html>\n";
    return s.str();
}

nlohmann::json json_report(const BenchRun &run) {
    nlohmann::json j;
    j["started_at"] = run.started_at;
    j["command"] = run.command;
    j["cpu"] = run.cpu;
    j["opgen_target"] = run.opgen_target;
    j["halide_target"] = run.halide_target;
    j["onednn"] = run.onednn;
    j["openblas"] = run.openblas;
    j["cache"] = run.cache_path;
    j["load_start"] = run.load_start;
    j["load_end"] = run.load_end;
    j["environment"] = run.environment;
    j["progress"] = run.progress;
    j["rounds"] = run.rounds;
    j["min_turn_ms"] = run.min_turn_ms;
    j["wall_s"] = run.wall_s;
    for (const auto &g : geomeans(run)) {
        nlohmann::json gj{{"what", g.what}, {"all", g.all}, {"rows", g.rows}, {"of", g.of}};
        for (const auto &[t, v] : g.by_threads)
            gj["by_threads"][std::to_string(t)] = v;
        j["geomeans"].push_back(gj);
    }
    j["machine"] = nlohmann::json::array();
    for (const MachineFigures &m : run.machine) {
        nlohmann::json mj;
        mj["fma_isa"] = m.fma_isa;
        mj["triad_bytes"] = m.triad_bytes;
        for (const auto &f : m.figures) {
            mj["figures"].push_back({{"threads", f.threads},
                                     {"peak_gflops", f.peak_gflops},
                                     {"peak_gflops_median", f.peak_gflops_median},
                                     {"triad_gbs", f.triad_gbs},
                                     {"triad_gbs_median", f.triad_gbs_median}});
        }
        j["machine"].push_back(mj);
    }
    if (!run.network.empty()) {
        j["network"] = {{"name", run.network}, {"totals", nlohmann::json::array()}};
        for (const NetworkTotal &t : network_totals(run)) {
            j["network"]["totals"].push_back({{"threads", t.threads},
                                              {"opgen_ms", t.opgen_ms},
                                              {"onednn_ms", t.onednn_ms},
                                              {"shapes", t.shapes},
                                              {"layers", t.layers},
                                              {"missing", t.missing}});
        }
    }
    j["entries"] = nlohmann::json::array();
    for (const auto &e : run.entries) {
        nlohmann::json ej{{"label", e.label},
                          {"count", e.count},
                          {"op", e.op},
                          {"shape", e.shape},
                          {"threads", e.threads},
                          {"flops", e.flops},
                          {"bytes", e.bytes},
                          {"status", e.status},
                          {"detail", e.detail},
                          {"roofline_ms", run.roofline_ms(e)},
                          {"fma_scaling", e.fma_scaling}};
        ej["contenders"] = nlohmann::json::array();
        for (const auto &c : e.contenders) {
            ej["contenders"].push_back({{"name", c.name},
                                        {"family", c.family},
                                        {"status", c.status},
                                        {"detail", c.detail},
                                        {"setup_s", c.setup_s},
                                        {"tune_s", c.tune_s},
                                        {"counts_as_onednn", c.counts_as_onednn},
                                        {"median_ms", c.median_ms},
                                        {"min_ms", c.min_ms},
                                        {"max_ms", c.max_ms},
                                        {"gflops", e.gflops(c)},
                                        {"rounds", c.rounds},
                                        {"calls", c.calls},
                                        {"max_error", c.max_error}});
        }
        j["entries"].push_back(ej);
    }
    return j;
}

} // namespace opgen::bench
