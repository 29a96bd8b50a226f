#include "tests/bench/Network.h"

#include "tests/bench/Report.h"

#include "base/Error.h"
#include "core/Shape.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace opgen::bench {

namespace {

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

// "conv 14²×256→1024 1×1" (square inputs) or "conv 56×28×...", "/2" for stride 2: the suite's
// labels, made from the shape; any other op keeps "op shape".
std::string label_for(const std::string &op, const std::string &shape) {
    std::map<std::string, int64_t> v;
    try {
        v = parse_shape_text(shape);
    } catch (const UserError &) {
        return op + " " + shape;
    }
    auto has = [&](std::initializer_list<const char *> names) {
        for (const char *n : names) {
            if (!v.count(n))
                return false;
        }
        return true;
    };
    if (op != "conv2d_nchw" || !has({"C", "H", "W", "F", "KH", "KW"}))
        return op + " " + shape;
    std::string s = "conv ";
    s += v["H"] == v["W"] ? std::to_string(v["H"]) + "²"
                          : std::to_string(v["H"]) + "×" + std::to_string(v["W"]);
    s += "×" + std::to_string(v["C"]) + "→" + std::to_string(v["F"]) + " " +
         std::to_string(v["KH"]) + "×" + std::to_string(v["KW"]);
    if (v.count("stride") && v["stride"] != 1)
        s += " /" + std::to_string(v["stride"]);
    return s;
}

} // namespace

Network load_network(const std::string &path) {
    std::ifstream in(path);
    user_check(in.good()) << "cannot read network manifest '" << path << "'";
    nlohmann::json m;
    try {
        m = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception &e) {
        user_check(false) << "network manifest '" << path << "': " << e.what();
    }
    user_check(m.is_object() && m.contains("entries") && m["entries"].is_array())
        << "network manifest '" << path << "': expected an object with an array \"entries\"";
    Network net;
    net.path = path;
    net.name = m.value("name", path);
    if (m.contains("defaults") && m["defaults"].is_object())
        net.trials = m["defaults"].value("trials", 0);
    for (size_t i = 0; i < m["entries"].size(); i++) {
        const nlohmann::json &e = m["entries"][i];
        if (!e.is_object() || !e.contains("counts"))
            continue;
        std::string where = "network manifest '" + path + "' entry " + std::to_string(i);
        user_check(e.contains("op") && e["op"].is_string())
            << where << ": field \"op\" must be a string";
        user_check(e.contains("shapes") && e["shapes"].is_array())
            << where << ": field \"shapes\" must be an array";
        const nlohmann::json &shapes = e["shapes"], &counts = e["counts"];
        user_check(counts.is_array() && counts.size() == shapes.size())
            << where << ": field \"counts\" must be an array with one count per shape ("
            << shapes.size() << " shapes)";
        for (size_t s = 0; s < shapes.size(); s++) {
            user_check(shapes[s].is_string())
                << where << " shapes[" << s << "]: a counted shape must be one shape string";
            user_check(counts[s].is_number_integer() && counts[s].get<int64_t>() > 0)
                << where << " counts[" << s << "]: expected a positive integer, found "
                << counts[s].dump();
            SuiteEntry entry;
            entry.op = e["op"].get<std::string>();
            entry.shape = shapes[s].get<std::string>();
            entry.label = label_for(entry.op, entry.shape);
            entry.count = counts[s].get<int>();
            net.entries.push_back(entry);
        }
    }
    user_check(!net.entries.empty())
        << "network manifest '" << path
        << "': no entry has \"counts\" (one occurrence count per shape)";
    return net;
}

std::vector<NetworkTotal> network_totals(const BenchRun &run) {
    std::vector<NetworkTotal> out;
    for (int t : run.threads) {
        NetworkTotal total;
        total.threads = t;
        for (const auto &e : run.entries) {
            if (e.threads != t)
                continue;
            const ContenderResult *opgen = e.find("opgen"), *dnn = e.onednn();
            if (e.status != "ok" || !opgen || !opgen->ok() || !dnn) {
                total.missing++;
                continue;
            }
            total.opgen_ms += e.count * opgen->median_ms;
            total.onednn_ms += e.count * dnn->median_ms;
            total.shapes++;
            total.layers += e.count;
        }
        out.push_back(total);
    }
    return out;
}

std::string network_markdown(const BenchRun &run) {
    std::ostringstream s;
    std::vector<NetworkTotal> totals = network_totals(run);
    s << "## Network total: " << run.network << "\n\n"
      << "Each entry's median time weighted by how often its shape occurs in the network; "
         "oneDNN's figure per entry is its faster variant that takes and returns the op's own "
         "layout (reorders counted), as in the summary.\n\n";
    s << "| threads | shapes | layers | opgen ms | oneDNN ms | opgen ÷ oneDNN (speed) | left out "
         "|\n"
      << "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for (const auto &t : totals) {
        s << "| " << t.threads << " | " << t.shapes << " | " << t.layers << " | "
          << fixed(t.opgen_ms, 3) << " | " << fixed(t.onednn_ms, 3) << " | "
          << (t.opgen_ms > 0 ? fixed(t.onednn_ms / t.opgen_ms, 2) + "×" : std::string("-")) << " | "
          << t.missing << " |\n";
    }
    s << "\n";
    for (const auto &t : totals) {
        s << "### " << t.threads << " thread" << (t.threads > 1 ? "s" : "") << ": per entry\n\n"
          << "| entry | count | opgen ms × count | oneDNN ms × count | share of opgen total | "
             "opgen ÷ oneDNN |\n"
          << "| --- | ---: | ---: | ---: | ---: | ---: |\n";
        for (const auto &e : run.entries) {
            if (e.threads != t.threads)
                continue;
            const ContenderResult *opgen = e.find("opgen"), *dnn = e.onednn();
            bool ok = e.status == "ok" && opgen && opgen->ok() && dnn;
            s << "| " << e.label << " | " << e.count << " | "
              << (ok ? fixed(e.count * opgen->median_ms, 3) : std::string("-")) << " | "
              << (dnn ? fixed(e.count * dnn->median_ms, 3) : std::string("-")) << " | "
              << (ok && t.opgen_ms > 0
                      ? fixed(100 * e.count * opgen->median_ms / t.opgen_ms, 1) + "%"
                      : std::string("-"))
              << " | " << (ok ? fixed(dnn->median_ms / opgen->median_ms, 2) + "×" : "-") << " |\n";
        }
        s << "\n";
    }
    return s.str();
}

} // namespace opgen::bench
