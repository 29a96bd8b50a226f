#include "tests/bench/Suite.h"

#include "base/Error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

namespace opgen::bench {

std::vector<SuiteEntry> load_suite(const std::string &path) {
    std::ifstream in(path);
    user_check(in.good()) << "cannot read suite '" << path << "'";
    nlohmann::json m;
    try {
        m = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception &e) {
        user_check(false) << "suite '" << path << "': " << e.what();
    }
    user_check(m.is_object() && m.contains("entries") && m["entries"].is_array())
        << "suite '" << path << "': expected an object with an array \"entries\"";
    std::vector<SuiteEntry> out;
    for (size_t i = 0; i < m["entries"].size(); i++) {
        const nlohmann::json &e = m["entries"][i];
        std::string where = "suite '" + path + "' entry " + std::to_string(i);
        user_check(e.is_object() && e.contains("op") && e["op"].is_string())
            << where << ": field \"op\" must be a string";
        user_check(e.contains("shapes") && e["shapes"].is_array())
            << where << ": field \"shapes\" must be an array of shape strings";
        std::vector<std::string> shapes, labels, quick;
        try {
            shapes = e["shapes"].get<std::vector<std::string>>();
            labels = e.value("labels", std::vector<std::string>{});
            quick = e.value("quick", std::vector<std::string>{});
        } catch (const nlohmann::json::exception &x) {
            user_check(false) << where << ": " << x.what();
        }
        user_check(labels.empty() || labels.size() == shapes.size())
            << where << ": " << labels.size() << " labels for " << shapes.size() << " shapes";
        for (const auto &q : quick) {
            user_check(std::find(shapes.begin(), shapes.end(), q) != shapes.end())
                << where << ": quick shape '" << q << "' is not among the shapes";
        }
        for (size_t s = 0; s < shapes.size(); s++) {
            SuiteEntry entry;
            entry.op = e["op"].get<std::string>();
            entry.shape = shapes[s];
            entry.label = labels.empty() ? entry.op + " " + shapes[s] : labels[s];
            entry.quick = std::find(quick.begin(), quick.end(), shapes[s]) != quick.end();
            out.push_back(entry);
        }
    }
    return out;
}

std::vector<SuiteEntry> select_entries(const std::vector<SuiteEntry> &all, bool quick,
                                       const std::vector<std::string> &only) {
    std::vector<SuiteEntry> out;
    for (const auto &e : all) {
        if (quick && !e.quick)
            continue;
        bool wanted = only.empty();
        for (const auto &o : only) {
            wanted |= e.label.find(o) != std::string::npos || e.op == o;
        }
        if (wanted)
            out.push_back(e);
    }
    return out;
}

} // namespace opgen::bench
