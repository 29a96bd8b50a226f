// Targets: the machine a kernel is generated for, described by its buffer hierarchy (docs/design.md
// §7.1, targets in §6.5; on an accelerator DDR -> UB -> L1 -> L0A/L0B -> compute -> L0C -> UB ->
// DDR). On a CPU the buffers are the cache levels and the vector register file. The host is
// detected at run time from sysfs and the CPU's flags; other targets are JSON files under
// core/targets/.
#ifndef OPGEN_CORE_TARGET_H
#define OPGEN_CORE_TARGET_H

#include <Halide.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace opgen {

struct BufferLevel {
    std::string name;       // "DRAM", "L2", "L1", "REG"
    int64_t capacity = 0;   // bytes; 0 means unbounded (main memory)
    bool double_buffered = false;
    // How a schedule stores data it places in this buffer: "auto" (Halide decides), "heap",
    // "stack" or "register" (Halide's MemoryType, through Func::store_in).
    std::string memory = "auto";
};

struct Target {
    std::string name;         // "x86-64-avx512"
    std::string description;
    std::string halide_target;  // "host" or a Halide target string
    int vector_bits = 128;
    int vector_registers = 16;
    int cores = 1;
    bool measurable = true;   // kernels for it can run on this machine
    // Buffers are scratchpads that hold exactly what a stage copies in (the accelerator target,
    // docs/design.md §7.1), not caches: a broadcast operand is expanded to its consumer's tile
    // there.
    bool explicit_buffers = false;
    std::vector<BufferLevel> buffers;  // outermost (main memory) first
    // The buffers each tensor role passes through, in order: "input", "output", and optionally
    // "input0", "input1", ... for the main statement's inputs by position (on the accelerator
    // target, A through L0A and B through L0B); a missing positional path falls back to "input".
    std::map<std::string, std::vector<std::string>> paths;
    // Instruction features the legal space uses, by their Linux /proc/cpuinfo names:
    // "avx512_vnni" (vpdpbusd: 4 u8 x s8 products summed into each i32 lane), "avx512_bf16"
    // (vdpbf16ps: 2 bf16 products into each f32 lane), "amx_int8", "amx_bf16". The host lists those
    // its CPU reports and its Halide target can emit (Halide 14 emits the dot products only with
    // avx512_sapphirerapids); a JSON target lists them in "features".
    std::vector<std::string> features;

    // The path of the main statement's `index`-th input, and of the output.
    std::vector<std::string> input_path(size_t index) const;
    std::vector<std::string> output_path() const;
    // The cache-tile level of input `index`'s path, the third buffer from its innermost (L2 on a
    // CPU: where its packed panels and a blocked accumulator live); "" when the path is shorter.
    std::string cache_tile_buffer(size_t index) const;

    int vector_lanes(int element_bytes) const { return vector_bits / 8 / element_bytes; }
    bool has_feature(const std::string &feature) const;
    const BufferLevel *find_buffer(const std::string &buffer) const;
    // Identifies the hardware: Halide target, caches and cores; part of the targets table.
    std::string fingerprint() const;
    nlohmann::json to_json() const;
};

// The machine this process runs on.
Target host_target();

// Halide's host target, minus features the CPU does not report. Halide 14 infers
// avx512_sapphirerapids from the CPU model and then emits VEX-encoded AVX-VNNI, which some virtual
// machines mask (their /proc/cpuinfo lacks avx_vnni): the kernels die with SIGILL.
Halide::Target checked_host_halide_target();

// A target by name ("host", or a JSON file's name under the targets folder) or by path to a JSON
// file. Raises UserError for an unknown name or a malformed file (naming the file and field).
Target load_target(const std::string &name_or_path);
Target parse_target(const nlohmann::json &j, const std::string &where);

// Names of the bundled targets (the JSON files under the targets folder), sorted.
std::vector<std::string> bundled_target_names();
std::string targets_dir();

}  // namespace opgen

#endif
