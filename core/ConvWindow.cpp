#include "core/ConvWindow.h"

#include "core/Gather.h"
#include "core/GemmPanel.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace opgen {

namespace {

// Loops of more steps than this are channel loops, not a window (a 3x3 window's loops have 3).
constexpr int64_t kWindowSteps = 4;
// Accumulators of a register tile at two channel vectors: 28 of AVX-512's 32 registers, the rest
// for the weight vectors and a broadcast input.
constexpr int64_t kAccumulators = 28;
// Pixels of a row in one register tile: 7 (half of a 14-pixel row, a whole 7-pixel one).
constexpr int64_t kRowPixels = 7;
// Vectors of output channels in a register tile (the space's most, core/TilingRules.cpp).
constexpr int64_t kMaxVectors = 4;
// Input channels per reduction block.
constexpr int64_t kChannelBlock = 16;
// Accumulators of a blocked convolution's register tile: 7 pixels x 2 rows of one channel vector.
constexpr int64_t kBlockedAccumulators = 14;
// A blocked convolution's register tile over a flattened row: pixels x vectors of output channels.
constexpr int64_t kFlatPixels = 8;
constexpr int64_t kFlatVectors = 2;
// Input-channel blocks per reduction block of a blocked convolution.
constexpr int64_t kBlockedChannelBlocks = 4;
// Channels of a 1x1 convolution from which channel vectors pay on rows that leave a partial vector.
constexpr int64_t kDeepChannels = 256;
// A GEMM over pixels (pixel_gemm_point): at least two vectors of pixels and 8 output channels.
constexpr int64_t kGemmPixelVectors = 2;
constexpr int64_t kGemmChannels = 8;

// The register tile along a row: its largest divisor of at most kRowPixels pixels (7 of 14, 28, 56
// or 7; 6 of 12).
int64_t row_piece(int64_t row) {
    int64_t r = std::min(row, kRowPixels);
    while (row % r != 0) r--;
    return r;
}

// The input pixels that a register tile of xr x yr output pixels of a 1x1 window reads, with
// the skipped ones between them at the shape's stride (its attribute "stride", 1 without).
int64_t input_pixels(const BoundShape &shape, int64_t xr, int64_t yr) {
    auto it = shape.values.find("stride");
    const int64_t stride = it == shape.values.end() ? 1 : it->second;
    return ((xr - 1) * stride + 1) * ((yr - 1) * stride + 1);
}

// The channel block of a 1x1 convolution's register tile reading `pixels` input pixels for
// `channels` output channels: all `channels_in` when the L1 holds the input slice of a register
// tile beside the weight panel of a cache tile (the footprints of the legal space,
// core/TilingRules.cpp), else halved until it does (256 of 512 or more at 14x14 and 7x7 on
// AVX-512's 48 KiB, 128 at stride 2), not below kChannelBlock. Measured on an AMD EPYC host: 256
// within 3% of the whole channels, both 1.3-1.9x blocks of 16.
int64_t gemm_channel_block(int64_t channels_in, int64_t pixels, int64_t channels, int bytes, const Target &target) {
    const BufferLevel *l1 = target.find_buffer("L1");
    int64_t block = channels_in;
    auto fits = [&](int64_t b) { return !l1 || l1->capacity <= 0 || b * (pixels + channels) * bytes <= l1->capacity; };
    while (!fits(block) && block % 2 == 0 && (block / 2) % kChannelBlock == 0) block /= 2;
    return block;
}

// The rows of a 1x1 convolution's cache tile: the whole column (`rows`) when the L2 holds the input
// slice it reads (`row` output pixels a row, `block` channels), else the most register tiles of `yr`
// rows in a power of two (the space's cache tiles) whose slice it holds: 32 of 56 rows over 256
// channels on AVX-512's 2 MiB (the column's 3.2 MiB would not fit).
int64_t gemm_row_tile(const BoundShape &shape, int64_t row, int64_t rows, int64_t yr, int64_t block, int bytes,
                      const Target &target) {
    const BufferLevel *l2 = target.find_buffer("L2");
    auto fits = [&](int64_t t) {
        return !l2 || l2->capacity <= 0 || input_pixels(shape, row, t) * block * bytes <= l2->capacity;
    };
    if (fits(rows)) return rows;
    int64_t tile = yr;
    while (tile * 2 < rows && fits(tile * 2)) tile *= 2;
    return tile;
}

}  // namespace

bool slides_window(const Statement &ms, const std::string &r) {
    for (const ExprNode *e : accesses(ms)) {
        for (const Expr &a : e->args) {
            if (a->kind == ExprKind::IndexVar || !mentions_var(*a, r)) continue;
            for (const std::string &v : ms.vars) {
                if (mentions_var(*a, v)) return true;
            }
        }
    }
    return false;
}

bool reduces_window_in_channels(const Statement &ms, const BoundShape &shape, int64_t window_steps) {
    if (ms.reduce_vars.size() < 2 || shape.eval(ms.reduce_vars.front().extent) <= window_steps ||
        slides_window(ms, ms.reduce_vars.front().name)) {
        return false;
    }
    for (size_t i = 1; i < ms.reduce_vars.size(); i++) {
        if (!slides_window(ms, ms.reduce_vars[i].name)) return false;
    }
    return true;
}

bool window_inside_channels(const Statement &ms, const BoundShape &shape, int64_t window_steps) {
    if (!reduces_window_in_channels(ms, shape, window_steps)) return false;
    int64_t window = 1;
    for (size_t i = 1; i < ms.reduce_vars.size(); i++) window *= shape.eval(ms.reduce_vars[i].extent);
    return window > 1;
}

bool channel_vectors_for_tail_rows(const Statement &ms, const BoundShape &shape, int64_t row, int lanes) {
    if (lanes <= 1 || row < lanes || row % lanes == 0 || !reduces_window_in_channels(ms, shape, kWindowSteps)) {
        return false;
    }
    return window_inside_channels(ms, shape, kWindowSteps) || shape.eval(ms.reduce_vars.front().extent) >= kDeepChannels;
}

namespace {

// The vector lanes of a GEMM over pixels: for a fusable reduction of a 1x1 window in channels
// (reduces_window_in_channels, one step) with three output axes or more, on a target with vectors,
// what pixel_gemm_point and strided_row_gemm_point build on; 0 otherwise.
int one_by_one_gemm_lanes(const ComputeDef &def, const BoundShape &shape, const Target &target, const SchedulePoint &p) {
    const Statement &ms = main_statement(def);
    const int lanes = op_vector_lanes(def, target);
    if (lanes <= 1 || p.axes.size() < 3 || ms.reduce == ReduceKind::None || !main_is_fusable(def) ||
        !reduces_window_in_channels(ms, shape, kWindowSteps) || window_inside_channels(ms, shape, kWindowSteps)) {
        return 0;
    }
    return lanes;
}

}  // namespace

bool pixel_gemm_point(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p) {
    const Statement &out = *def.statement_for(def.output().name);
    const int lanes = one_by_one_gemm_lanes(def, shape, target, p);
    if (lanes == 0) return false;
    const int64_t pixels = shape.var_extent(out, p.axes[0].var), rows = shape.var_extent(out, p.axes[1].var);
    const int64_t channels = shape.var_extent(out, p.axes[2].var);
    if (rows != 1 || pixels < kGemmPixelVectors * lanes || channels < kGemmChannels) return false;
    SchedulePoint gemm = p;
    gemm.vector_axis = 0;
    gemm.vector_width = lanes;
    std::vector<std::string> operands = vector_operands(def, shape, gemm);
    if (operands.empty()) return false;
    p = gemm;
    stream_vector_panels(def, shape, target, p, 2, operands);
    return true;
}

namespace {

// The input `ms` reads through a gather (core/Gather.h): a strided read without a window; "" when
// none.
std::string gathered_input(const ComputeDef &def, const Statement &ms, const BoundShape &shape) {
    for (const ExprNode *a : accesses(ms)) {
        if (gather_dims(def, ms, *a, shape)) return a->name;
    }
    return "";
}

// Rows of a strided 1x1 convolution's cache tile (strided_row_gemm_point): where the weights fit
// half the L2 they stay there across tiles, and the gathered panel is kept small (L2 / 16: 4 rows
// of 28 pixels x 256 channels); where they do not (28x28x512->1024 /2: 2 MiB) every tile streams
// them again, so the column is one tile when its panel fits half the L2. Whole register tiles.
int64_t strided_row_tile(int64_t rows, int64_t yr, int64_t panel_row_bytes, int64_t weight_bytes, const Target &target) {
    const BufferLevel *l2 = target.find_buffer("L2");
    const int64_t l2_bytes = l2 && l2->capacity > 0 ? l2->capacity : int64_t(1) << 21;
    const int64_t budget = weight_bytes <= l2_bytes / 2 ? l2_bytes / 16 : l2_bytes / 2;
    int64_t tile = std::max<int64_t>(1, budget / std::max<int64_t>(1, panel_row_bytes));
    tile = std::max(yr, tile / yr * yr);
    return std::min(tile, (rows + yr - 1) / yr * yr);
}

}  // namespace

bool strided_row_gemm_point(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p) {
    const Statement &ms = main_statement(def);
    const Statement &out = *def.statement_for(def.output().name);
    const int lanes = one_by_one_gemm_lanes(def, shape, target, p);
    if (lanes == 0) return false;
    const std::string input = gathered_input(def, ms, shape);
    const int64_t row = shape.var_extent(out, p.axes[0].var), rows = shape.var_extent(out, p.axes[1].var);
    const int64_t channels = shape.var_extent(out, p.axes[2].var);
    if (input.empty() || 2 * row < lanes || channels < kGemmChannels) return false;
    const int bytes = dtype_bytes(def.output().dtype);
    // Two vectors of pixels per output channel: one row of 17-32 pixels, or two rows of 8-16.
    const int64_t row_vectors = (row + lanes - 1) / lanes;
    const int64_t yr = std::clamp<int64_t>(kGemmPixelVectors / row_vectors, 1, rows);
    int64_t channels_in = 1;
    for (const ReduceTiling &r : p.reduce) channels_in *= r.block;
    p.vector_axis = 0;
    p.vector_width = lanes;
    p.axes[0].reg = p.axes[0].tile = row;
    p.axes[1].reg = yr;
    p.axes[1].tile = strided_row_tile(rows, yr, row * channels_in * bytes, channels * channels_in * bytes, target);
    p.axes[2].reg = std::min<int64_t>(kGemmChannels, channels);
    p.axes[2].tile = channels;
    // On several cores with one tile of rows, the output channels are shared out instead.
    const int64_t row_tiles = (rows + p.axes[1].tile - 1) / p.axes[1].tile;
    if (target.cores > 1 && row_tiles < target.cores && channels % (int64_t(target.cores) * p.axes[2].reg) == 0) {
        p.axes[2].tile = channels / target.cores;
    }
    p.channels_innermost = false;
    p.packed = {input};
    return true;
}

bool short_row_conv_point(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p) {
    const Statement &ms = main_statement(def);
    const Statement &out = *def.statement_for(def.output().name);
    const int lanes = op_vector_lanes(def, target);
    if (lanes <= 1 || p.axes.size() < 3 || ms.reduce == ReduceKind::None || !main_is_fusable(def) ||
        !reduces_window_in_channels(ms, shape, kWindowSteps)) {
        return false;
    }
    const int64_t row = shape.var_extent(out, p.axes[0].var), rows = shape.var_extent(out, p.axes[1].var);
    const int64_t channels = shape.var_extent(out, p.axes[2].var);
    if ((row >= lanes && !channel_vectors_for_tail_rows(ms, shape, row, lanes)) || channels % lanes != 0) return false;
    // About 7 pixels of a row, rows that divide the column (a blocked reduction needs whole
    // register tiles) up to 28 accumulators at two vectors, then the most channel vectors (up to
    // four, dividing the channels) whose accumulators, weight vectors and one broadcast input fit
    // the registers: 7 x 2 x 2 at 14x14, 7 x 1 x 2 at 7x7.
    const int64_t pieces = (row + kRowPixels - 1) / kRowPixels;
    const int64_t xr = (row + pieces - 1) / pieces;
    int64_t yr = std::clamp<int64_t>(kAccumulators / (2 * xr), 1, rows);
    while (rows % yr != 0) yr--;
    int64_t vectors = 1;
    for (int64_t v = 2; v <= kMaxVectors; v++) {
        if (channels % (v * lanes) == 0 && xr * yr * v + v + 1 <= target.vector_registers) vectors = v;
    }
    p.vector_axis = 2;
    p.vector_width = lanes;
    p.axes[0].reg = xr;
    p.axes[0].tile = row;
    p.axes[1].reg = yr;
    p.axes[1].tile = rows;
    p.axes[2].reg = p.axes[2].tile = vectors * lanes;
    p.channels_innermost = window_inside_channels(ms, shape, kWindowSteps);
    p.packed.clear();
    // A window of more than one step: channels in blocks of 16, input and weights packed. A 1x1
    // window (a GEMM over pixels): the channels in the longest block L1 holds and only the weights
    // packed (read across the vector of output channels), see short_row_conv_point in the header.
    const bool gemm = !p.channels_innermost;
    for (ReduceTiling &r : p.reduce) {
        if (r.var != ms.reduce_vars.front().name || r.block % kChannelBlock != 0 || r.block <= kChannelBlock) continue;
        r.block = gemm ? gemm_channel_block(r.block, input_pixels(shape, xr, yr), vectors * lanes,
                                            dtype_bytes(def.output().dtype), target)
                       : kChannelBlock;
        if (gemm) p.axes[1].tile = gemm_row_tile(shape, row, rows, yr, r.block, dtype_bytes(def.output().dtype), target);
    }
    const std::vector<const ExprNode *> read = accesses(ms);
    const std::string &vector_var = p.axes[2].var;
    for (const TensorDecl *t : def.inputs()) {
        // Read at all; under a 1x1 window, read along the vectorized output channels too.
        if (std::any_of(read.begin(), read.end(), [&](const ExprNode *e) {
                return e->name == t->name && (!gemm || mentions_var(*e, vector_var));
            })) {
            p.packed.push_back(t->name);
        }
    }
    return true;
}

namespace {

// Input-channel blocks per reduction block of a paired register tile (blocked_conv_point): the most,
// in a power of two of at most `extent`, whose weight slab for the 2 output blocks
// (KH x KW x cb x fb each) stays within 3/4 of the L1, at least 1: 1 on a 32 KiB L1 at 3 x 3
// (18 KiB a block), 2 on a 48 KiB one.
int64_t paired_channel_blocks(const ComputeDef &def, const BoundShape &shape, const Target &target, int64_t extent) {
    const Statement &ms = main_statement(def);
    int64_t slab = kFlatVectors * int64_t(dtype_bytes(def.output().dtype));  // f32: weights as wide as Y
    for (size_t i = 1; i < ms.reduce_vars.size(); i++) slab *= shape.eval(ms.reduce_vars[i].extent);
    slab *= op_vector_lanes(def, target);
    const BufferLevel *l1 = target.find_buffer("L1");
    int64_t blocks = 1;
    while (l1 && l1->capacity > 0 && 2 * blocks <= extent && 2 * blocks * slab * 4 <= 3 * l1->capacity) blocks *= 2;
    return blocks;
}

// The cache tiles (row, rows) of blocked_conv_point for register tiles of xr x yr: whole rows per
// tile; with several cores, the row (else the column) in pieces of whole register tiles, one per
// core, or else one register tile of rows per tile.
std::pair<int64_t, int64_t> blocked_cache_tiles(int64_t row, int64_t rows, int64_t xr, int64_t yr, int cores) {
    if (cores <= 1) return {row, rows};
    if (rows == 1) {
        // A flattened row: a power of two of register tiles (the space's cache tiles), one or more
        // per core.
        int64_t tiles = 1;
        while (xr * tiles * 2 * cores <= row) tiles *= 2;
        return {xr * tiles, rows};
    }
    if (row % (xr * cores) == 0) return {row / cores, rows};
    if (rows % (yr * cores) == 0) return {row, rows / cores};
    return {row, yr};
}

// The inputs the main statement `ms` reads through a window (an index other than a bare variable),
// in the order of the op's inputs.
std::vector<std::string> windowed_inputs(const ComputeDef &def, const Statement &ms) {
    std::vector<std::string> names;
    for (const TensorDecl *t : def.inputs()) {
        for (const ExprNode *e : accesses(ms)) {
            if (e->name != t->name) continue;
            bool windowed = false;
            for (const Expr &a : e->args) windowed |= a->kind != ExprKind::IndexVar;
            if (windowed && std::find(names.begin(), names.end(), t->name) == names.end()) names.push_back(t->name);
        }
    }
    return names;
}

}  // namespace

bool blocked_conv_point(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p) {
    const Statement &ms = main_statement(def);
    const Statement &out = *def.statement_for(def.output().name);
    const int lanes = op_vector_lanes(def, target);
    if (lanes <= 1 || p.axes.size() < 4 || p.reduce.size() < 3 || ms.reduce == ReduceKind::None ||
        !main_is_fusable(def) || ms.reduce_vars.size() < 3) {
        return false;
    }
    // Channel-block loop outermost and channels innermost, neither sliding; the window between.
    const std::string &blocks = ms.reduce_vars.front().name, &channels = ms.reduce_vars.back().name;
    if (slides_window(ms, blocks) || slides_window(ms, channels)) return false;
    for (size_t i = 1; i + 1 < ms.reduce_vars.size(); i++) {
        if (!slides_window(ms, ms.reduce_vars[i].name)) return false;
    }
    // One vector of output channels innermost, then a row and a column that the window slides over.
    const int64_t vector = shape.var_extent(out, p.axes[0].var);
    if (vector != lanes || p.vector_width != lanes || p.vector_axis != 0) return false;
    const int64_t row = shape.var_extent(out, p.axes[1].var), rows = shape.var_extent(out, p.axes[2].var);
    // A flattened 1x1 (all the pixels one row, the op's view): 8 of them x 2 vectors of output
    // channels, 10 loads (2 weight vectors, 8 broadcasts) for 16 FMAs. One vector of 28 pixels
    // (the earlier choice) loads once per FMA, and 28 accumulators at two vectors spill. Measured
    // at 1 thread on an AMD Zen 5 host, 56x56x64->256: 257-261 GFLOP/s against 239, oneDNN's
    // blocked 257.
    const bool flat = rows == 1 && row > kRowPixels;
    const int64_t xr = flat ? std::min(row, kFlatPixels) : row_piece(row);
    if (xr < 4) return false;  // a row of no short divisor (13, 22): the generic point
    // Rows of pixels (a 3x3, a strided 1x1): one row of them x 2 vectors of output channels where
    // the blocks pair up, so each broadcast input value feeds 2 FMAs (9 loads for 14 FMAs, not
    // 15). Measured at 1 thread on an AMD Zen 5 host, 48 trials with weights cold: 7 x 2 won at
    // every one of ResNet-50's 3x3 and strided 1x1 shapes; in the model those layers ran 1.09-1.25x
    // faster than with the tiles of one vector (results.md, "Whole models").
    const bool paired = !flat && shape.var_extent(out, p.axes[3].var) % kFlatVectors == 0;
    int64_t yr = paired ? 1 : std::clamp<int64_t>(kBlockedAccumulators / xr, 1, rows);
    while (rows % yr != 0) yr--;
    const auto [xt, yt] = blocked_cache_tiles(row, rows, xr, yr, target.cores);
    p.axes[0].reg = p.axes[0].tile = lanes;
    p.axes[1].reg = xr;
    p.axes[1].tile = xt;
    p.axes[2].reg = yr;
    p.axes[2].tile = yt;
    for (size_t i = 3; i < p.axes.size(); i++) {
        p.axes[i].reg = 1;
        p.axes[i].tile = shape.var_extent(out, p.axes[i].var);
    }
    // The output-channel blocks (the fourth axis, fo) in pairs over a flattened row or a row.
    if ((flat || paired) && p.axes[3].tile % kFlatVectors == 0) p.axes[3].reg = kFlatVectors;
    for (ReduceTiling &r : p.reduce) {
        if (r.var != blocks) continue;
        const int64_t extent = shape.eval(ms.reduce_vars.front().extent);
        r.block = paired ? paired_channel_blocks(def, shape, target, extent) : std::min(kBlockedChannelBlocks, extent);
        while (extent % r.block != 0) r.block--;
    }
    // The input, read through the window, packed once per block; the weights are already laid out
    // with the vector of output channels contiguous.
    p.packed = windowed_inputs(def, ms);
    return true;
}

}  // namespace opgen
