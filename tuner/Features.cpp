#include "tuner/Features.h"

#include "core/ParallelLoops.h"
#include "core/StagePlacement.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace opgen::tuner {

const std::vector<std::string> &feature_names() {
    static const std::vector<std::string> names = {
        "stage_type_copy_in", "stage_type_compute", "stage_type_copy_out", "buffer_level",
        "store_bit",          "store_num",          "compute_bit",         "compute_num",
        "emit_bit",           "emit_num",           "footprint_log2",      "footprint_over_capacity",
        "arith_intensity",    "vector_lane_use",    "tail_waste",          "tasks_per_core",
        "unroll_size",        "packed",             "reduction_blocked",   "total_flops_log2",
        "reg_tile_accumulators", "tile_outer_log2", "roofline_ns_log2",
        "unrolled",           "prefetch_distance",  "tile_order_changed",  "reg_vectors",
        "reg_rows_log2",      "reduce_block_log2",  "inner_tile_log2",     "packed_inputs",
        // The point's loop nest axis by axis (slot i = the op's i-th output axis, innermost
        // first; j = its j-th reduction): a convolution's x, y and f tiles reuse different
        // operands, which the products above cannot tell apart.
        "axis0_reg_log2", "axis0_tile_log2", "axis0_tiles_log2", "axis0_outer_pos",
        "axis1_reg_log2", "axis1_tile_log2", "axis1_tiles_log2", "axis1_outer_pos",
        "axis2_reg_log2", "axis2_tile_log2", "axis2_tiles_log2", "axis2_outer_pos",
        "axis3_reg_log2", "axis3_tile_log2", "axis3_tiles_log2", "axis3_outer_pos",
        "reduce0_block_log2", "reduce0_blocks_log2", "reduce1_block_log2", "reduce1_blocks_log2",
        "reduce2_block_log2", "reduce2_blocks_log2", "vector_registers_live",
        // The point's other choices (docs/design.md §2.4): where the op's other statements are
        // computed, how many partial-sum lanes their reductions keep, the exp form, the channel
        // order and which axis is vectorized; then statement by statement (slot i = the i-th
        // statement of the stage plan; absent: -1), as the loop nest is axis by axis.
        "stages_inline", "stages_root", "stages_tile", "stages_row", "stage_lanes_log2",
        "fast_math", "channels_innermost", "vector_axis",
        "stage0_depth", "stage0_lanes_log2", "stage1_depth", "stage1_lanes_log2",
        "stage2_depth", "stage2_lanes_log2", "stage3_depth", "stage3_lanes_log2",
        // The element types and the instructions (docs/design.md §2.4): the narrowest input's
        // bytes, the dot-product group summed inside each lane (0, 2 for vdpbf16ps, 4 for
        // vpdpbusd) and whether the accumulator is an AMX tile. Without them an int8 point's
        // rows read as a float32 point's of the same loop nest, whose speed is a quarter of it.
        "input_bytes_min", "dot_product_group", "amx_tile",
        // Last, so that the columns before it keep their meaning: the memory-bandwidth contention
        // level the candidate was measured under (tuner/Contention.h; 0 on a quiet machine).
        "contention_level"};
    return names;
}

int num_features() { return int(feature_names().size()); }

namespace {

double lg(double x) { return std::log2(std::max(1.0, x)); }

struct Shape2 {
    double flops = 0;
    double reg_elems = 1;      // accumulator elements of a register tile
    double lane_use = 1;       // useful fraction of vector lanes on the innermost axis
    double tail_waste = 0;     // fraction of recomputed points from shifted tail tiles
    double tiles = 1;          // number of cache tiles
    double reg_tiles = 1;      // number of register tiles
    double reduce_extent = 1;  // total reduction points per output point
    double reduce_block = 1;   // reduction points per cache block
    bool blocked = false;
};

Shape2 summarize(const ComputeDef &def, const BoundShape &shape, const TilingRules &space, const SchedulePoint &p) {
    Shape2 s;
    s.flops = flop_count(def, shape);
    double done = 1, needed = 1;
    for (size_t i = 0; i < p.axes.size(); i++) {
        const auto &a = p.axes[i];
        double e = double(space.axes[i].extent);
        double nt = std::ceil(e / double(a.tile));
        double nr = nt * std::ceil(double(a.tile) / double(a.reg));
        s.tiles *= nt;
        s.reg_tiles *= nr;
        s.reg_elems *= double(a.reg);
        done *= nr * double(a.reg);
        needed *= e;
    }
    s.tail_waste = done / needed - 1.0;
    if (p.vector_width > 1) {
        double e0 = double(p.axes[size_t(p.vector_axis)].reg);
        s.lane_use = e0 / (std::ceil(e0 / p.vector_width) * p.vector_width);
    }
    for (size_t j = 0; j < p.reduce.size(); j++) {
        s.reduce_extent *= double(space.reduce[j].extent);
        s.reduce_block *= double(p.reduce[j].block);
        s.blocked |= p.reduce[j].block < space.reduce[j].extent;
    }
    return s;
}

constexpr size_t nest_axes = 4, nest_reduce = 3;

// How deep a statement's placement is, as a feature: 0 inline, then root, tile and row
// (core/StagePlacement.h's depth, shifted so inline is 0).
double feature_depth(const std::string &at) { return 1.0 + opgen::placement_depth(at); }

constexpr size_t plan_slots = 4;

// The bytes of the narrowest input's elements: 1 for an int8 operand, 2 for bf16, 4 for float32.
int narrowest_input_bytes(const ComputeDef &def) {
    int bytes = 8;
    for (const TensorDecl &t : def.tensors) {
        if (t.role == TensorRole::Input) bytes = std::min(bytes, dtype_bytes(t.dtype));
    }
    return bytes;
}

// The point's stage plan and knobs, the same on every group row of it.
std::vector<float> stage_plan_features(const SchedulePoint &p) {
    double at[4] = {0, 0, 0, 0}, lanes = 0;
    for (const auto &st : p.stages) {
        at[size_t(feature_depth(st.at))] += 1;
        lanes += lg(st.lanes);
    }
    std::vector<float> f = {float(at[0]), float(at[1]), float(at[2]), float(at[3]),
                            float(p.stages.empty() ? 0.0 : lanes / double(p.stages.size())), float(p.fast_math),
                            float(p.channels_innermost), float(p.vector_axis)};
    for (size_t i = 0; i < plan_slots; i++) {
        const bool here = i < p.stages.size();
        f.push_back(here ? float(feature_depth(p.stages[i].at)) : -1.0f);
        f.push_back(here ? float(lg(p.stages[i].lanes)) : -1.0f);
    }
    return f;
}

// The per-axis features of `p`, the same on every group row of it; absent axes are -1.
std::vector<float> loop_nest_features(const TilingRules &space, const SchedulePoint &p) {
    std::vector<float> f;
    for (size_t i = 0; i < nest_axes; i++) {
        if (i >= p.axes.size()) {
            f.insert(f.end(), {-1, -1, -1, -1});
            continue;
        }
        const auto &a = p.axes[i];
        const double extent = double(space.axes[i].extent);
        auto pos = std::find(p.outer_order.begin(), p.outer_order.end(), a.var);
        f.push_back(float(lg(double(a.reg))));
        f.push_back(float(lg(double(a.tile))));
        f.push_back(float(lg(std::ceil(extent / double(a.tile)))));
        f.push_back(pos == p.outer_order.end() ? -1.0f : float(pos - p.outer_order.begin()));
    }
    for (size_t j = 0; j < nest_reduce; j++) {
        if (j >= p.reduce.size()) {
            f.insert(f.end(), {-1, -1});
            continue;
        }
        f.push_back(float(lg(double(p.reduce[j].block))));
        f.push_back(float(lg(std::ceil(double(space.reduce[j].extent) / double(p.reduce[j].block)))));
    }
    // Vector registers a register tile keeps live: its accumulators, plus one vector of the
    // innermost operand per row of vectors; above the ISA's 32 they spill.
    double accumulators = 1;
    for (const auto &a : p.axes) accumulators *= double(a.reg);
    const double lanes = double(std::max(1, p.vector_width));
    f.push_back(float(std::ceil(accumulators / lanes) + std::ceil(double(p.axes.empty() ? 1 : p.axes[size_t(p.vector_axis)].reg) / lanes)));
    return f;
}

}  // namespace

int group_features(const ComputeDef &def, const BoundShape &shape, const Target &target, const TilingRules &space,
                   const SchedulePoint &p, int threads, std::vector<float> &out, double contention_level) {
    Shape2 s = summarize(def, shape, space, p);
    auto fp = footprints(space, def, shape, target, p);
    // The analytical estimate, on every row: a prior the trees refine from few measurements.
    double roofline_ns = roofline_seconds(def, shape, target, space, p, threads) * 1e9;
    auto in_path = target.paths.count("input") ? target.paths.at("input") : std::vector<std::string>{"DRAM"};
    const std::vector<float> nest = loop_nest_features(space, p);
    const std::vector<float> plan = stage_plan_features(p);
    int rows = 0;
    for (const auto &g : space.groups) {
        const Stage &lead = space.graph.stages[size_t(g.stages.front())];
        auto pos = std::find(in_path.begin(), in_path.end(), g.buffer);
        double level = pos == in_path.end() ? 0 : double(in_path.end() - pos - 1);
        double bytes = 0;
        for (const auto &f : fp) {
            if (f.tensor == g.tensor && f.buffer == g.buffer) bytes = double(f.bytes);
        }
        const BufferLevel *buf = target.find_buffer(g.buffer);
        double capacity = buf && buf->capacity > 0 ? double(buf->capacity) : 0;
        // How many times the group's tile is (re)loaded over the whole run, by level.
        double loads = level <= 0 ? s.reg_tiles * s.reduce_extent : level <= 1 ? s.reg_tiles : s.tiles;
        if (level >= 1 && s.blocked) {
            double blocks = 1;
            for (size_t j = 0; j < p.reduce.size(); j++) blocks *= double(space.reduce[j].extent) / double(p.reduce[j].block);
            loads *= blocks;
        }
        bool packed = std::find(p.packed.begin(), p.packed.end(), g.tensor) != p.packed.end();
        bool compute = lead.kind == StageKind::Compute;
        double emit_bit = compute ? 2.0 * p.vector_width : double(p.vector_width);
        double compute_num = compute ? s.flops / std::max(1.0, 2.0 * s.reg_elems) : loads;
        float row[] = {
            float(lead.kind == StageKind::CopyIn || lead.kind == StageKind::Source),
            float(compute),
            float(lead.kind == StageKind::CopyOut),
            float(level),
            float(lg(bytes)),                                    // store bit: bytes per load
            float(lg(loads)),                                    // store num
            float(lg(compute ? 2.0 * s.reg_elems : bytes / 4)),  // compute bit: work per iteration
            float(lg(compute_num)),                              // compute num
            float(emit_bit),                                     // emit bit: work per instruction
            float(lg(s.flops / emit_bit)),                       // emit num
            float(lg(bytes)),
            float(capacity > 0 ? bytes / capacity : 0.0),
            float(lg(s.flops / std::max(1.0, bytes * loads))),
            float(s.lane_use),
            float(s.tail_waste),
            float(s.tiles / std::max(1, threads)),
            float(s.reg_elems / std::max(1, p.vector_width)),
            float(packed),
            float(s.blocked),
            float(lg(s.flops)),
            float(s.reg_elems / std::max(1, p.vector_width)),
            float(lg(s.tiles)),
            float(lg(roofline_ns)),
            float(p.unroll),
            float(p.prefetch),
            float(!p.tile_order.empty()),
            // The register tile's shape, not only its size: one row of many vectors reuses no
            // broadcast and is latency bound, where rows x vectors of the same size are not.
            float(std::ceil(double(p.axes[size_t(p.vector_axis)].reg) / std::max(1, p.vector_width))),
            float(lg(s.reg_elems / double(p.axes[size_t(p.vector_axis)].reg))),
            float(lg(s.reduce_block)),
            float(lg(double(p.axes[size_t(p.vector_axis)].tile))),
            float(p.packed.size()),
        };
        out.insert(out.end(), std::begin(row), std::end(row));
        out.insert(out.end(), nest.begin(), nest.end());
        out.insert(out.end(), plan.begin(), plan.end());
        out.insert(out.end(), {float(narrowest_input_bytes(def)), float(p.dot_product), float(p.amx_tile)});
        out.push_back(float(contention_level));
        rows++;
    }
    return rows;
}

costmodel::FeatureBatch batch_features(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                       const TilingRules &space, const std::vector<SchedulePoint> &points,
                                       int threads, int workers, double contention_level) {
    const size_t shares = size_t(std::clamp(workers, 1, 64));
    const size_t per_share = (points.size() + shares - 1) / std::max<size_t>(1, shares);
    // Each share fills its own rows and row counts; they are joined in order afterwards.
    std::vector<std::vector<float>> rows(shares);
    std::vector<std::vector<int>> counts(shares);
    auto build = [&](size_t share) {
        const size_t begin = std::min(points.size(), share * per_share);
        const size_t end = std::min(points.size(), begin + per_share);
        for (size_t i = begin; i < end; i++) {
            counts[share].push_back(group_features(def, shape, target, space, points[i], threads, rows[share],
                                                    contention_level));
        }
    };
    std::vector<std::thread> pool;
    for (size_t share = 1; share < shares; share++) pool.emplace_back(build, share);
    build(0);
    for (auto &t : pool) t.join();
    costmodel::FeatureBatch batch;
    batch.num_features = num_features();
    size_t total = 0;
    for (const auto &r : rows) total += r.size();
    batch.rows.reserve(total);
    batch.row_begin.reserve(points.size() + 1);
    for (size_t share = 0; share < shares; share++) {
        batch.rows.insert(batch.rows.end(), rows[share].begin(), rows[share].end());
        for (int n : counts[share]) batch.row_begin.push_back(batch.row_begin.back() + n);
    }
    return batch;
}

namespace {

// The cores the point's parallel loop keeps busy (docs/design.md §2.4): its iterations run in
// rounds of one per core, the last round partly idle, so 3 tiles on 2 cores do 1.5 cores' work and
// a fused loop of one tile does one core's; a serial point (parallel_loops 0) one core's.
double busy_cores(const Target &target, const TilingRules &space, const SchedulePoint &p, int threads) {
    const int cores = std::max(1, std::min(threads, target.cores));
    if (cores == 1 || p.parallel_loops <= 0) return 1;
    const double trips = double(fused_trips(cache_loop_trips(p, space.knobs.extents), p.parallel_loops));
    return trips / std::ceil(trips / cores);
}

// An AMX point's compute peak over the same tiling's on vpdpbusd (core/AmxTile.h). Measured
// 2026-11-28 on a Sapphire Rapids host, 1 thread, int8 matmul 1024^3 in 16 x 16 tiles: 1.9 TOP/s on
// AMX tiles (tdpbusd of K = 64) against 0.55 for opgen's tuned vpdpbusd kernel.
constexpr double kAmxOverVnni = 3.5;

// The roofline's three terms, in seconds, bytes and seconds.
struct RooflineTerms {
    double compute = 0;
    double bytes_l1 = 0;
    double bytes_dram = 0;     // as the roofline has always counted them: one load per cache tile
    double bytes_outside = 0;  // the same loads once per reduction block, as a blocked tile does
};

RooflineTerms roofline_terms(const ComputeDef &def, const BoundShape &shape, const Target &target,
                             const TilingRules &space, const SchedulePoint &p, int threads) {
    Shape2 s = summarize(def, shape, space, p);
    // Peak: two FMA ports of vector_width lanes at ~3 GHz; FMA latency ~4 cycles needs about eight
    // independent accumulators per port pair to stay busy.
    double lanes = std::max(1, p.vector_width);
    // A dot-product point sums its group of products in each lane per instruction (vpdpbusd: 4).
    const double group = std::max(1, p.dot_product);
    double peak = 2.0 * 2.0 * lanes * group * 3.0e9 * busy_cores(target, space, p, threads) *
                  (p.amx_tile ? kAmxOverVnni : 1.0);
    double accumulators = s.reg_elems / lanes;
    double latency_use = std::min(1.0, accumulators / 8.0);
    bool fusable = !p.reduce.empty();
    RooflineTerms t;
    t.compute = s.flops * (1.0 + s.tail_waste) / (peak * s.lane_use * (fusable ? latency_use : 0.25));
    // Memory: each cache tile streams its inputs from L2/DRAM once per tile; register tiles reload
    // their operands from L1.
    for (const auto &f : footprints(space, def, shape, target, p)) {
        const TensorDecl *td = def.find_tensor(f.tensor);
        if (td->role != TensorRole::Input) continue;
        auto in_path = target.paths.count("input") ? target.paths.at("input") : std::vector<std::string>{"DRAM"};
        auto pos = std::find(in_path.begin(), in_path.end(), f.buffer);
        int level = pos == in_path.end() ? 0 : int(in_path.end() - pos - 1);
        if (level == 1) t.bytes_l1 += double(f.bytes) * s.reg_tiles;
        if (level == 2) t.bytes_dram += double(f.bytes) * s.tiles * (p.packed.empty() ? 1.3 : 1.0);
    }
    // The roofline's DRAM term counts one load of each cache tile's L2 footprint, but a blocked
    // reduction loads a footprint of one block per block: k:16 of K=4096 moves 256 times what the
    // term says. roofline_seconds keeps its term (it is a feature the models were trained on);
    // the contended estimate uses the full count.
    double blocks = 1;
    for (size_t j = 0; j < p.reduce.size(); j++) {
        blocks *= std::ceil(double(space.reduce[j].extent) / double(p.reduce[j].block));
    }
    t.bytes_outside = t.bytes_dram * blocks;
    return t;
}

constexpr double kDramBandwidth = 12e9;  // one core's STREAM triad (TOOLCHAIN-NOTES)

// The roofline: compute against the slower of the L1 and DRAM traffic.
double quiet_seconds(const RooflineTerms &t) {
    return std::max(t.compute, std::max(t.bytes_l1 / 100e9, t.bytes_dram / kDramBandwidth));
}

}  // namespace

double roofline_seconds(const ComputeDef &def, const BoundShape &shape, const Target &target, const TilingRules &space,
                        const SchedulePoint &p, int threads) {
    return quiet_seconds(roofline_terms(def, shape, target, space, p, threads));
}

double dram_bytes(const ComputeDef &def, const BoundShape &shape, const Target &target, const TilingRules &space,
                  const SchedulePoint &p, int threads) {
    return roofline_terms(def, shape, target, space, p, threads).bytes_outside;
}

double contended_roofline_seconds(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                  const TilingRules &space, const SchedulePoint &p, int threads,
                                  double contention_level) {
    RooflineTerms t = roofline_terms(def, shape, target, space, p, threads);
    const double quiet = quiet_seconds(t);
    // On a quiet machine the roofline lets DRAM traffic hide under compute, and re-read panels come
    // from the L3. A streaming load on the other core evicts the L3 and takes a share of the
    // bandwidth, so every byte the tiles move from outside L2 is paid again, in proportion to
    // the load (docs/design.md §7.6: block load time grows with the DDR bandwidth taken).
    return quiet + std::max(0.0, contention_level) * t.bytes_outside / kDramBandwidth;
}

}  // namespace opgen::tuner
