// The cache benchmarks' command lines (opgen_generic_bench, opgen_choice_bench): "--name value"
// pairs, each name one the benchmark knows. A bad command line (an unknown name, a name without a
// value, a number that does not parse, a required name missing) prints one `error: ...` line and
// the usage, and exits with status 2.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace opgen::bench {

class BenchArgs {
public:
    // Reads argv[first..] as pairs; `known` are the names without their "--".
    BenchArgs(int argc, char **argv, const std::set<std::string> &known, std::string usage, int first = 1)
        : usage_(std::move(usage)) {
        for (int i = first; i < argc; i += 2) {
            std::string name = argv[i];
            if (name.rfind("--", 0) != 0 || !known.count(name.substr(2))) fail("unknown option '" + name + "'");
            if (i + 1 >= argc) fail("option '" + name + "' needs a value");
            values_[name.substr(2)] = argv[i + 1];
        }
    }

    // The value of --name; `fallback` when not given (fails when it is required).
    std::string text(const std::string &name, const std::string &fallback = "") const {
        auto it = values_.find(name);
        return it == values_.end() ? fallback : it->second;
    }
    std::string required(const std::string &name) const {
        auto it = values_.find(name);
        if (it == values_.end() || it->second.empty()) fail("option '--" + name + "' is required");
        return it->second;
    }
    int integer(const std::string &name, int fallback) const {
        auto it = values_.find(name);
        if (it == values_.end()) return fallback;
        char *end = nullptr;
        long v = std::strtol(it->second.c_str(), &end, 10);
        if (it->second.empty() || *end || v < 1 || v > 1000000) {
            fail("option '--" + name + "' needs a whole number from 1 to 1000000, not '" + it->second + "'");
        }
        return int(v);
    }
    double number(const std::string &name, double fallback) const {
        auto it = values_.find(name);
        if (it == values_.end()) return fallback;
        char *end = nullptr;
        double v = std::strtod(it->second.c_str(), &end);
        if (it->second.empty() || *end || !(v > 0) || v > 1e9) {
            fail("option '--" + name + "' needs a positive number, not '" + it->second + "'");
        }
        return v;
    }
    // --name 1 or 0.
    bool flag(const std::string &name) const {
        std::string v = text(name, "0");
        if (v != "0" && v != "1") fail("option '--" + name + "' takes 0 or 1, not '" + v + "'");
        return v == "1";
    }

private:
    [[noreturn]] void fail(const std::string &message) const {
        std::fprintf(stderr, "error: %s\nusage: %s\n", message.c_str(), usage_.c_str());
        std::exit(2);
    }

    std::string usage_;
    std::map<std::string, std::string> values_;
};

// What both benchmarks take: the cache with the full tune, the target, the op and shape, and the
// interleaved rounds (how many, and the least time each kernel's calls add up to per round).
struct ShapeBenchArgs {
    std::string tuned_db, target, op, shape;
    int rounds = 7;
    double min_ms = 40;
};

// The names ShapeBenchArgs reads, for a benchmark's list of known names.
inline std::set<std::string> shape_bench_names(std::set<std::string> more) {
    more.insert({"tuned-db", "target", "op", "shape", "rounds", "min-ms"});
    return more;
}

inline void read_shape_bench_args(const BenchArgs &f, ShapeBenchArgs &a) {
    a.tuned_db = f.required("tuned-db");
    a.target = f.required("target");
    a.op = f.required("op");
    a.shape = f.required("shape");
    a.rounds = f.integer("rounds", a.rounds);
    a.min_ms = f.number("min-ms", a.min_ms);
}

}  // namespace opgen::bench
