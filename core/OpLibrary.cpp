#include "core/OpLibrary.h"

#include "core/Parser.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace opgen {

namespace fs = std::filesystem;

std::string bundled_ops_dir() { return std::string(OPGEN_DATA_DIR) + "/ops"; }

OpLibrary OpLibrary::standard(const std::vector<std::string> &extra) {
    OpLibrary lib;
    lib.dirs.push_back(bundled_ops_dir());
    if (const char *env = std::getenv("OPGEN_OPS_PATH")) {
        std::stringstream ss(env);
        std::string d;
        while (std::getline(ss, d, ':')) {
            if (!d.empty()) lib.dirs.push_back(d);
        }
    }
    for (const auto &d : extra) {
        std::error_code ec;
        user_check(fs::is_directory(d, ec)) << "ops folder '" << d << "' does not exist or is not a folder";
        lib.dirs.push_back(d);
    }
    return lib;
}

std::vector<std::string> OpLibrary::list() const {
    std::set<std::string> names;
    for (const auto &d : dirs) {
        std::error_code ec;
        for (const auto &e : fs::directory_iterator(d, ec)) {
            if (e.path().extension() == ".op") names.insert(e.path().stem().string());
        }
    }
    return {names.begin(), names.end()};
}

std::string OpLibrary::find(const std::string &name) const {
    user_check(!name.empty() && name.find('/') == std::string::npos && name.find("..") == std::string::npos)
        << "'" << name << "' is not an op name";
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
        fs::path p = fs::path(*it) / (name + ".op");
        std::error_code ec;
        if (fs::is_regular_file(p, ec)) return p.string();
    }
    std::string searched;
    for (const auto &d : dirs) searched += (searched.empty() ? "" : ", ") + d;
    user_check(false) << "unknown op '" << name << "' (no " << name << ".op in " << searched << ")";
    return {};
}

ComputeDef load_op_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    user_check(in.good()) << "cannot read op file '" << path << "'";
    std::stringstream ss;
    ss << in.rdbuf();
    ComputeDef def = parse_compute(ss.str(), path);
    std::string stem = fs::path(path).stem().string();
    user_check(def.name == stem, SourceLoc{path, 1, 0})
        << "op file '" << path << "' defines op '" << def.name << "'; the file must be named " << def.name << ".op";
    return def;
}

ComputeDef OpLibrary::load(const std::string &name) const { return load_op_file(find(name)); }

}  // namespace opgen
