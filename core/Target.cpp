#include "core/Target.h"

#include "base/Error.h"

#include <Halide.h>

#include <algorithm>
#include <filesystem>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <fstream>
#include <sstream>
#include <thread>

namespace opgen {

namespace fs = std::filesystem;

const BufferLevel *Target::find_buffer(const std::string &buffer) const {
    for (const auto &b : buffers) {
        if (b.name == buffer) return &b;
    }
    return nullptr;
}

std::vector<std::string> Target::input_path(size_t index) const {
    auto it = paths.find("input" + std::to_string(index));
    if (it == paths.end()) it = paths.find("input");
    return it == paths.end() ? std::vector<std::string>{"DRAM"} : it->second;
}

std::string Target::cache_tile_buffer(size_t index) const {
    std::vector<std::string> path = input_path(index);
    return path.size() >= 3 ? path[path.size() - 3] : "";
}

std::vector<std::string> Target::output_path() const {
    auto it = paths.find("output");
    return it == paths.end() ? std::vector<std::string>{"DRAM"} : it->second;
}

std::string Target::fingerprint() const {
    std::ostringstream f;
    f << halide_target << ";cores=" << cores;
    for (const auto &b : buffers) f << ";" << b.name << "=" << b.capacity;
    return f.str();
}

bool Target::has_feature(const std::string &feature) const {
    return std::find(features.begin(), features.end(), feature) != features.end();
}

nlohmann::json Target::to_json() const {
    nlohmann::json j;
    j["name"] = name;
    j["description"] = description;
    j["halide_target"] = halide_target;
    j["vector_bits"] = vector_bits;
    j["vector_registers"] = vector_registers;
    j["cores"] = cores;
    j["measurable"] = measurable;
    j["explicit_buffers"] = explicit_buffers;
    for (const auto &b : buffers) {
        j["buffers"].push_back({{"name", b.name}, {"capacity", b.capacity}, {"double_buffered", b.double_buffered},
                                {"memory", b.memory}});
    }
    j["paths"] = paths;
    if (!features.empty()) j["features"] = features;
    return j;
}

namespace {

int64_t read_size(const fs::path &p) {
    std::ifstream in(p);
    std::string s;
    if (!(in >> s) || s.empty()) return 0;
    int64_t mult = 1;
    char last = s.back();
    if (last == 'K') mult = 1024;
    if (last == 'M') mult = 1024 * 1024;
    if (mult > 1) s.pop_back();
    try {
        return std::stoll(s) * mult;
    } catch (...) {
        return 0;
    }
}

std::string read_word(const fs::path &p) {
    std::ifstream in(p);
    std::string s;
    in >> s;
    return s;
}

// The L1 data and L2 cache sizes the CPU itself reports, for a guest whose sysfs lists no cache
// (a KVM guest on an AMD EPYC host has no cpu0/cache folder): the deterministic cache leaf (4 on
// Intel, 0x8000001D on AMD), else AMD's older leaves 0x80000005 (L1d) and 0x80000006 (L2).
// Leaves 0 where the CPU says nothing.
void cpuid_cache_sizes(int64_t &l1, int64_t &l2) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    for (unsigned leaf : {4u, 0x8000001Du}) {
        for (unsigned sub = 0; sub < 8 && __get_cpuid_count(leaf, sub, &a, &b, &c, &d); sub++) {
            const unsigned type = a & 31, level = (a >> 5) & 7;
            if (type == 0) break;
            if (type == 2) continue;  // instructions
            const int64_t size = int64_t((b >> 22) + 1) * (((b >> 12) & 0x3ff) + 1) * ((b & 0xfff) + 1) * (int64_t(c) + 1);
            if (level == 1 && l1 == 0) l1 = size;
            if (level == 2 && l2 == 0) l2 = size;
        }
    }
    if (l1 == 0 && __get_cpuid(0x80000005, &a, &b, &c, &d)) l1 = int64_t(c >> 24) * 1024;
    if (l2 == 0 && __get_cpuid(0x80000006, &a, &b, &c, &d)) l2 = int64_t(c >> 16) * 1024;
#else
    (void)l1;
    (void)l2;
#endif
}

}  // namespace

namespace {

// The CPU's flags as /proc/cpuinfo lists them, with a space before and after each; empty when
// there is no such file.
std::string cpu_flags() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("flags", 0) == 0) return " " + line.substr(line.find(':') + 1) + " ";
    }
    return "";
}

// The low-precision features of the host (Target::features): those the CPU reports, where the
// Halide target `ht` can use them.
std::vector<std::string> host_features(const Halide::Target &ht) {
    const std::string flags = cpu_flags();
    std::vector<std::string> out;
    const bool spr = ht.has_feature(Halide::Target::AVX512_SapphireRapids);
    for (const char *f : {"avx512_vnni", "avx512_bf16", "amx_int8", "amx_bf16"}) {
        if (spr && flags.find(std::string(" ") + f + " ") != std::string::npos) out.push_back(f);
    }
    return out;
}

}  // namespace

Halide::Target checked_host_halide_target() {
    Halide::Target ht = Halide::get_host_target();
    const std::string flags = cpu_flags();
    if (!flags.empty() && ht.has_feature(Halide::Target::AVX512_SapphireRapids) &&
        flags.find(" avx_vnni ") == std::string::npos) {
        ht = ht.without_feature(Halide::Target::AVX512_SapphireRapids);
    }
    return ht;
}

Target host_target() {
    Target t;
    Halide::Target ht = checked_host_halide_target();
    t.halide_target = ht.to_string();
    t.features = host_features(ht);
    if (ht.arch == Halide::Target::X86) {
        if (ht.has_feature(Halide::Target::AVX512_Skylake) || ht.has_feature(Halide::Target::AVX512)) {
            t.vector_bits = 512;
            t.vector_registers = 32;
            t.name = "x86-64-avx512";
        } else if (ht.has_feature(Halide::Target::AVX2)) {
            t.vector_bits = 256;
            t.vector_registers = 16;
            t.name = "x86-64-avx2";
        } else {
            t.vector_bits = 128;
            t.vector_registers = 16;
            t.name = "x86-64-sse";
        }
    } else if (ht.arch == Halide::Target::ARM) {
        t.vector_bits = 128;
        t.vector_registers = 32;
        t.name = "arm64-neon";
    } else {
        t.name = "generic";
    }
    t.description = "this machine, detected at run time";
    t.cores = std::max(1u, std::thread::hardware_concurrency());
    // Cache sizes from sysfs, else from the CPU (cpuid), else typical ones.
    int64_t l1 = 0, l2 = 0, l3 = 0;
    fs::path base = "/sys/devices/system/cpu/cpu0/cache";
    std::error_code ec;
    if (fs::exists(base, ec)) {
        for (const auto &entry : fs::directory_iterator(base, ec)) {
            std::string leaf = entry.path().filename().string();
            if (leaf.rfind("index", 0) != 0) continue;
            std::string type = read_word(entry.path() / "type");
            std::string level = read_word(entry.path() / "level");
            int64_t size = read_size(entry.path() / "size");
            if (size <= 0 || type == "Instruction") continue;
            if (level == "1") l1 = size;
            if (level == "2") l2 = size;
            if (level == "3") l3 = size;
        }
    }
    if (l1 == 0 || l2 == 0) cpuid_cache_sizes(l1, l2);
    if (l1 <= 0) l1 = 32 * 1024;
    if (l2 <= 0) l2 = 1024 * 1024;
    // Register tiles live on the stack (LLVM keeps them in registers); cache-tile panels on the heap.
    t.buffers.push_back({"DRAM", 0, false, "auto"});
    if (l3 > 0) t.buffers.push_back({"L3", l3, false, "auto"});
    t.buffers.push_back({"L2", l2, false, "heap"});
    t.buffers.push_back({"L1", l1, false, "auto"});
    t.buffers.push_back({"REG", int64_t(t.vector_registers) * (t.vector_bits / 8), false, "stack"});
    t.paths["input"] = {"DRAM", "L2", "L1", "REG"};
    t.paths["output"] = {"REG", "DRAM"};
    t.measurable = true;
    return t;
}

std::string targets_dir() {
    if (const char *env = std::getenv("OPGEN_TARGETS_DIR")) return env;
    return std::string(OPGEN_DATA_DIR) + "/core/targets";
}

std::vector<std::string> bundled_target_names() {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(targets_dir(), ec)) {
        if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

Target parse_target(const nlohmann::json &j, const std::string &where) {
    auto field = [&](const char *name) -> const nlohmann::json & {
        user_check(j.contains(name)) << "target " << where << ": missing field '" << name << "'";
        return j.at(name);
    };
    Target t;
    try {
        t.name = field("name").get<std::string>();
        t.description = j.value("description", "");
        t.halide_target = field("halide_target").get<std::string>();
        t.vector_bits = field("vector_bits").get<int>();
        t.vector_registers = j.value("vector_registers", 16);
        t.cores = field("cores").get<int>();
        t.measurable = j.value("measurable", true);
        t.explicit_buffers = j.value("explicit_buffers", false);
        for (const auto &b : field("buffers")) {
            BufferLevel level;
            level.name = b.at("name").get<std::string>();
            level.capacity = b.at("capacity").get<int64_t>();
            level.double_buffered = b.value("double_buffered", false);
            level.memory = b.value("memory", "auto");
            user_check(level.memory == "auto" || level.memory == "heap" || level.memory == "stack" ||
                       level.memory == "register")
                << "target " << where << ": buffer '" << level.name << "' has memory '" << level.memory
                << "' (expected auto, heap, stack or register)";
            user_check(level.capacity >= 0) << "target " << where << ": buffer '" << level.name << "' has negative capacity";
            t.buffers.push_back(level);
        }
        t.paths = field("paths").get<std::map<std::string, std::vector<std::string>>>();
        t.features = j.value("features", std::vector<std::string>{});
    } catch (const nlohmann::json::exception &e) {
        user_check(false) << "target " << where << ": " << e.what();
    }
    user_check(t.vector_bits >= 32 && t.vector_bits % 32 == 0) << "target " << where << ": vector_bits " << t.vector_bits << " must be a positive multiple of 32";
    user_check(t.cores >= 1) << "target " << where << ": cores must be at least 1";
    for (const auto &[role, path] : t.paths) {
        for (const auto &b : path) {
            user_check(t.find_buffer(b)) << "target " << where << ": path '" << role << "' names unknown buffer '" << b << "'";
        }
    }
    if (t.halide_target != "host") {
        user_check(Halide::Target::validate_target_string(t.halide_target))
            << "target " << where << ": '" << t.halide_target << "' is not a Halide target string";
    }
    return t;
}

Target load_target(const std::string &name_or_path) {
    if (name_or_path.empty() || name_or_path == "host") return host_target();
    fs::path p = name_or_path;
    if (p.extension() != ".json") p = fs::path(targets_dir()) / (name_or_path + ".json");
    std::ifstream in(p);
    if (!in) {
        std::string known;
        for (const auto &n : bundled_target_names()) known += (known.empty() ? "" : ", ") + n;
        user_check(false) << "unknown target '" << name_or_path << "' (known: host" << (known.empty() ? "" : ", ") << known << ")";
    }
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception &e) {
        user_check(false) << "target file " << p.string() << ": " << e.what();
    }
    return parse_target(j, p.string());
}

}  // namespace opgen
