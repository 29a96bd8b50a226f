#include "tuner/Search.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace opgen::tuner {

std::string point_key(const SchedulePoint &p) { return p.to_json().dump(); }

namespace {

// Indices of `scores` best first; ties keep the lower index first, so the order is reproducible.
std::vector<size_t> best_first(const std::vector<double> &scores) {
    std::vector<size_t> order(scores.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    return order;
}

// What a batch is built from: best-scored points first, then random explorers.
struct BatchBuilder {
    const MeasuredFn &measured;
    size_t want;
    std::vector<SchedulePoint> out;
    std::set<std::string> taken;

    bool full() const { return out.size() >= want; }
    void add(const SchedulePoint &p) {
        if (full()) return;
        std::string k = point_key(p);
        if (taken.count(k) || measured(p)) return;
        taken.insert(k);
        out.push_back(p);
    }
    void add_best(const std::vector<SchedulePoint> &pts, const std::vector<double> &scores, size_t upto) {
        for (size_t i : best_first(scores)) {
            if (out.size() >= std::min(upto, want)) return;
            add(pts[i]);
        }
    }
    void add_random(const TilingSpace &space, size_t k, std::mt19937_64 &rng) {
        if (space.legal.empty()) return;
        std::uniform_int_distribution<size_t> u(0, space.legal.size() - 1);
        size_t goal = std::min(want, out.size() + k);
        for (size_t tries = 0; out.size() < goal && tries < 64 * k + 256; tries++) add(space.legal[u(rng)]);
    }
};

size_t explorers(int n, bool first, double epsilon) { return first ? 0 : size_t(std::floor(n * epsilon)); }

class ExhaustiveSearch : public SearchStrategy {
public:
    ExhaustiveSearch(const TilingSpace &space, const SearchOptions &o)
        : space_(space), all_(space.legal.begin(), space.legal.end()), o_(o), rng_(o.seed) {}
    const char *name() const override { return "exhaustive"; }

    std::vector<SchedulePoint> next_batch(int n, const ScoreFn &score, const MeasuredFn &measured,
                                          const std::vector<SchedulePoint> &, bool first) override {
        BatchBuilder b{measured, size_t(std::max(0, n)), {}, {}};
        std::vector<double> scores = score(all_);
        size_t explore = explorers(n, first, o_.epsilon);
        b.add_best(all_, scores, b.want - explore);
        b.add_random(space_, explore, rng_);
        b.add_best(all_, scores, b.want);  // when too few random points were left
        return b.out;
    }

private:
    const TilingSpace &space_;
    std::vector<SchedulePoint> all_;
    SearchOptions o_;
    std::mt19937_64 rng_;
};

class EvolutionarySearch : public SearchStrategy {
public:
    EvolutionarySearch(const TilingSpace &space, const SearchOptions &o) : space_(space), o_(o), rng_(o.seed) {
        population_ = sample_points(o_.population * 2);
    }
    const char *name() const override { return "evolutionary"; }

    std::vector<SchedulePoint> next_batch(int n, const ScoreFn &score, const MeasuredFn &measured,
                                          const std::vector<SchedulePoint> &elite, bool first) override {
        // This round's founders: the surviving population, the best measured points and fresh blood.
        std::vector<SchedulePoint> pool = population_;
        for (const auto &p : elite) {
            if (legal(p)) pool.push_back(p);
        }
        for (auto &p : sample_points(o_.population / 2)) pool.push_back(std::move(p));
        std::vector<SchedulePoint> members;
        std::vector<double> member_scores;
        select(pool, score, members, member_scores);
        for (int g = 0; g < o_.generations && !members.empty(); g++) {
            std::vector<SchedulePoint> next = members;
            std::uniform_int_distribution<size_t> pick(0, members.size() - 1);
            for (size_t c = 0; c < o_.population; c++) {
                // Tournament of two: the better-scored parent has the child.
                size_t a = pick(rng_), b = pick(rng_);
                const SchedulePoint &parent = member_scores[a] >= member_scores[b] ? members[a] : members[b];
                SchedulePoint child;
                if (mutate(parent, child)) next.push_back(std::move(child));
            }
            select(next, score, members, member_scores);
        }
        population_ = members;
        BatchBuilder b{measured, size_t(std::max(0, n)), {}, {}};
        size_t explore = explorers(n, first, o_.epsilon);
        b.add_best(members, member_scores, b.want - explore);
        b.add_random(space_, explore, rng_);
        b.add_best(members, member_scores, b.want);
        return b.out;
    }

private:
    std::vector<SchedulePoint> sample_points(size_t k) {
        std::vector<SchedulePoint> out;
        if (space_.legal.empty()) return out;
        std::uniform_int_distribution<size_t> u(0, space_.legal.size() - 1);
        for (size_t i = 0; i < k; i++) out.push_back(space_.legal[u(rng_)]);
        return out;
    }

    // No memo: contains() is an index lookup, cheaper than the text key a memo would need, and a
    // memo that grows with every child tried made the tuner's memory grow with the trials.
    bool legal(const SchedulePoint &p) const { return space_.contains(p); }

    // Keeps the best `population` distinct points of `cands` by score.
    void select(const std::vector<SchedulePoint> &cands, const ScoreFn &score, std::vector<SchedulePoint> &members,
                std::vector<double> &member_scores) {
        std::set<std::string> seen;
        std::vector<SchedulePoint> uniq;
        for (const auto &p : cands) {
            if (seen.insert(point_key(p)).second) uniq.push_back(p);
        }
        std::vector<double> s = score(uniq);
        members.clear();
        member_scores.clear();
        for (size_t k : best_first(s)) {
            if (members.size() >= o_.population) break;
            members.push_back(uniq[k]);
            member_scores.push_back(s[k]);
        }
    }

    // One random change of a split factor (an axis's register or cache tile, a reduction block,
    // picked from the space's options) or of one knob (taken from a random legal point, through
    // the point's JSON so every knob the space has takes part); true when the child is legal.
    bool mutate(const SchedulePoint &parent, SchedulePoint &child) {
        for (int attempt = 0; attempt < 8; attempt++) {
            SchedulePoint p = parent;
            size_t factors = p.axes.size() + p.reduce.size();
            size_t k = std::uniform_int_distribution<size_t>(0, factors + 1)(rng_);
            auto any = [&](const auto &v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng_)]; };
            if (k < p.axes.size()) {
                for (const auto &ax : space_.axes) {
                    if (ax.var != p.axes[k].var) continue;
                    if (std::uniform_int_distribution<int>(0, 1)(rng_) == 0 && !ax.regs.empty()) {
                        p.axes[k].reg = any(ax.regs);
                    } else if (!ax.tiles.empty()) {
                        p.axes[k].tile = any(ax.tiles);
                    }
                }
            } else if (k < factors) {
                auto &r = p.reduce[k - p.axes.size()];
                for (const auto &ro : space_.reduce) {
                    if (ro.var == r.var && !ro.blocks.empty()) r.block = any(ro.blocks);
                }
            } else {
                nlohmann::json pj = p.to_json();
                nlohmann::json donor = space_.legal[std::uniform_int_distribution<size_t>(0, space_.legal.size() - 1)(rng_)]
                                           .to_json();
                std::vector<std::string> knobs;
                for (auto it = donor.begin(); it != donor.end(); ++it) {
                    if (it.key() != "axes" && it.key() != "reduce") knobs.push_back(it.key());
                }
                if (knobs.empty()) continue;
                std::string knob = any(knobs);
                pj[knob] = donor[knob];
                p = SchedulePoint::from_json(pj);
            }
            // A new tile size or order changes the loops' trip counts, and with them the parallel
            // choices on offer: keep the child's when offered, else take the first.
            snap_parallel_loops(space_.knobs, p);
            if (!(p == parent) && legal(p)) {
                child = std::move(p);
                return true;
            }
        }
        return false;
    }

    const TilingSpace &space_;
    SearchOptions o_;
    std::mt19937_64 rng_;
    std::vector<SchedulePoint> population_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_exhaustive_search(const TilingSpace &space, const SearchOptions &o) {
    return std::make_unique<ExhaustiveSearch>(space, o);
}

std::unique_ptr<SearchStrategy> make_evolutionary_search(const TilingSpace &space, const SearchOptions &o) {
    return std::make_unique<EvolutionarySearch>(space, o);
}

std::unique_ptr<SearchStrategy> make_search(const TilingSpace &space, const SearchOptions &o) {
    if (space.legal.size() <= o.exhaustive_limit) return make_exhaustive_search(space, o);
    return make_evolutionary_search(space, o);
}

}  // namespace opgen::tuner
