// The table of the legality rules: which register tiles, cache tiles and reduction blocks the
// legal space offers on an axis of a given extent (docs/design.md, "The legal space"). It is the
// one definition: the space's rules (core/TilingRules.h) enumerate from it, and the lookup's refit
// of a neighbour's schedule to new extents (runtime/Refit.cpp) picks from it, so a refitted point
// is a point the space offers. Plain integers, no Halide: every layer may use it.
#ifndef OPGEN_BASE_TILING_TABLE_H
#define OPGEN_BASE_TILING_TABLE_H

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace opgen::tiling {

// Register tiles of a row axis (the second innermost, or the innermost when an outer axis carries
// the vectors): up to 16 points.
inline const std::vector<int64_t> kRowRegs = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16};
// More points for a lone row (a flattened channel-blocked 1x1's pixels, with no rows beside it):
// up to the 28 accumulators that 7 points x 4 rows give.
inline const std::vector<int64_t> kLoneRowRegs = {20, 24, 28};
// Register tiles of the third axis (output channels of a convolution, a batched matmul's batch).
inline const std::vector<int64_t> kThirdAxisRegs = {1, 2, 4, 8};
// An AMX accumulator tile (core/AmxTile.h): 16 rows of 16 i32 (64 bytes); an AMX point's register
// tile is exactly this, on 16 lanes, over axes whose extents are whole tiles.
inline constexpr int64_t kAmxTileRows = 16;
inline constexpr int64_t kAmxTileColumns = 16;
// Reduction blocks are multiples of this that divide the extent, up to kMaxReductionBlock.
inline constexpr int64_t kReductionBlockStep = 16;
inline constexpr int64_t kMaxReductionBlock = 1024;

// The choices of `choices` at most `extent`, in order.
inline std::vector<int64_t> at_most(const std::vector<int64_t> &choices, int64_t extent) {
    std::vector<int64_t> out;
    for (int64_t c : choices) {
        if (c <= extent) out.push_back(c);
    }
    return out;
}

// Register tiles of the innermost (vectorized) axis at vector width `vw`: one to four vectors, or
// the whole axis when it is a few vectors exactly; the whole axis when it is not vectorized.
inline std::vector<int64_t> innermost_regs(int vw, int64_t extent) {
    if (vw <= 1) return {extent};
    std::set<int64_t> r;
    for (int k = 1; k <= 4 && k * vw <= extent; k++) r.insert(int64_t(k) * vw);
    if (extent % vw == 0 && extent / vw <= 8) r.insert(extent);
    return {r.begin(), r.end()};
}

// Register tiles of a row axis of `extent`; `lone`: a lone row, which may take more points.
inline std::vector<int64_t> row_regs(int64_t extent, bool lone) {
    std::vector<int64_t> regs = at_most(kRowRegs, extent);
    if (lone) {
        for (int64_t r : at_most(kLoneRowRegs, extent)) regs.push_back(r);
    }
    return regs;
}

// Register tiles of the third axis of `extent`.
inline std::vector<int64_t> third_axis_regs(int64_t extent) { return at_most(kThirdAxisRegs, extent); }

// Cache tiles for register tile `reg` on an axis of `extent`: power-of-two multiples of the register
// tile below the extent, and the whole axis.
inline std::vector<int64_t> tile_options(int64_t reg, int64_t extent) {
    std::set<int64_t> s{extent};
    for (int64_t t = reg; t < extent; t *= 2) s.insert(t);
    return {s.begin(), s.end()};
}

// Whether (`reg`, `tile`) is a pair the space offers on an axis of `extent`: the tile holds a
// power-of-two number of register tiles, or is the whole axis (`any_multiple`: any whole number of
// register tiles, where the axis has a single tile).
inline bool is_offered_pair(int64_t reg, int64_t tile, int64_t extent, bool any_multiple) {
    if (tile < reg || !(tile % reg == 0 || tile == extent)) return false;
    if (any_multiple || tile == extent) return true;
    int64_t n = tile / reg;
    return (n & (n - 1)) == 0;
}

// Reduction blocks that divide the extent: the multiples of kReductionBlockStep up to
// kMaxReductionBlock below `extent`, in increasing order (empty when there are none).
inline std::vector<int64_t> dividing_blocks(int64_t extent) {
    std::vector<int64_t> b;
    for (int64_t d = kReductionBlockStep; d < extent && d <= kMaxReductionBlock; d += kReductionBlockStep) {
        if (extent % d == 0) b.push_back(d);
    }
    return b;
}

// Reduction blocks of a reduction loop of `extent`: the dividing blocks; where there are none
// (K = 1115), powers of two from 64 to 512 with a guarded last block; and the extent itself (not
// blocked).
inline std::vector<int64_t> block_options(int64_t extent) {
    std::vector<int64_t> b = dividing_blocks(extent);
    if (b.empty()) {
        for (int64_t d = 64; d <= 512 && d < extent; d *= 2) b.push_back(d);
    }
    b.push_back(extent);
    return b;
}

// Blocks of a loop whose steps are channel blocks: the powers of two that divide the extent, and the
// extent. One step's weights (cb x KH x KW x fb floats, 9 KiB at 16 x 3 x 3 x 16) already take a
// fifth of a 48 KiB L1, so blocks of a few steps are what fits.
inline std::vector<int64_t> step_block_options(int64_t extent) {
    std::vector<int64_t> b;
    for (int64_t d = 1; d < extent; d *= 2) {
        if (extent % d == 0) b.push_back(d);
    }
    b.push_back(extent);
    return b;
}

}  // namespace opgen::tiling

#endif
