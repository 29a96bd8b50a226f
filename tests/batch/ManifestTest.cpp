// Manifest expansion (lists, ranges, products, defaults), repeats, sharding, and the message of
// every kind of bad manifest.
#include "base/Error.h"
#include "core/Manifest.h"

#include <gtest/gtest.h>

#include <set>

using namespace opgen;

namespace {

Manifest parse(const std::string &text, ManifestDefaults d = {}) {
    return parse_manifest(text, "m.json", OpLibrary::standard(), d);
}

std::vector<std::string> shapes(const Manifest &m) {
    std::vector<std::string> out;
    for (const auto &t : m.tasks) out.push_back(t.shape);
    return out;
}

std::string error_of(const std::string &text) {
    try {
        parse(text);
    } catch (const UserError &e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(Manifest, ExpandsListsRangesAndProducts) {
    Manifest m = parse(R"({"entries": [
        {"op": "matmul", "shapes": ["M=512,N=512,K=512",
                                    {"M": [64, 128], "N": {"from": 32, "to": 96, "step": 32}, "K": 16}]},
        {"op": "relu", "shapes": [{"M": 4, "N": {"from": 256, "to": 2048, "times": 2}}]}]})");
    EXPECT_EQ(m.entries, 2u);
    // Canonical shapes: names sorted. The product walks the object's keys in sorted order.
    std::vector<std::string> want{"K=512,M=512,N=512", "K=16,M=64,N=32", "K=16,M=64,N=64", "K=16,M=64,N=96",
                                  "K=16,M=128,N=32", "K=16,M=128,N=64", "K=16,M=128,N=96"};
    std::vector<std::string> got = shapes(m);
    ASSERT_GE(got.size(), want.size());
    EXPECT_EQ(std::vector<std::string>(got.begin(), got.begin() + 7), want);
    ASSERT_EQ(got.size(), 11u);
    EXPECT_EQ(m.tasks[7].op, "relu");
    EXPECT_EQ(m.tasks[7].entry, 1u);
}

TEST(Manifest, EntryOverridesDefaultsOverrideCommandLine) {
    ManifestDefaults cli;
    cli.trials = 5;
    cli.seed = 9;
    Manifest m = parse(R"({"defaults": {"trials": 7},
        "entries": [{"op": "matmul", "shapes": ["M=8,N=8,K=8"]},
                    {"op": "matmul", "shapes": ["M=16,N=8,K=8"], "trials": 3, "seed": 4, "target": "toy"}]})",
                       cli);
    ASSERT_EQ(m.tasks.size(), 2u);
    EXPECT_EQ(m.tasks[0].trials, 7);
    EXPECT_EQ(m.tasks[0].seed, 9u);
    EXPECT_EQ(m.tasks[0].target, "host");
    EXPECT_EQ(m.tasks[0].dtype, "f32");
    EXPECT_EQ(m.tasks[1].trials, 3);
    EXPECT_EQ(m.tasks[1].seed, 4u);
    EXPECT_EQ(m.tasks[1].target, "toy");
}

TEST(Manifest, OtherToolsFieldsAreLeftAlone) {
    // The benchmark suite (tests/bench/suite.json) is also a manifest, with labels of its own.
    Manifest m = parse(R"({"entries": [{"op": "matmul", "shapes": ["M=8,N=8,K=8"], "labels": ["tiny"],
                                       "quick": ["M=8,N=8,K=8"]}]})");
    EXPECT_EQ(m.tasks.size(), 1u);
}

TEST(Manifest, RepeatedTasksAreDroppedOnce) {
    Manifest m = parse(R"({"entries": [{"op": "matmul", "shapes": ["M=8,N=8,K=8", "K=8, N=8, M=8"]},
                                      {"op": "matmul", "shapes": [{"M": 8, "N": 8, "K": [8, 16]}]}]})");
    EXPECT_EQ(shapes(m), (std::vector<std::string>{"K=8,M=8,N=8", "K=16,M=8,N=8"}));
    EXPECT_EQ(m.duplicates, 2u);
}

TEST(Manifest, ShardsPartitionTasksDeterministically) {
    Manifest m = parse(R"({"entries": [{"op": "matmul", "shapes": [{"M": {"from": 8, "to": 80, "step": 8}, "N": 8, "K": 8}]}]})");
    ASSERT_EQ(m.tasks.size(), 10u);
    std::multiset<std::string> all;
    for (int i = 0; i < 3; i++) {
        auto part = shard_tasks(m.tasks, parse_shard(std::to_string(i) + "/3"));
        EXPECT_EQ(part.size(), i == 0 ? 4u : 3u);
        auto again = shard_tasks(m.tasks, Shard{i, 3});
        ASSERT_EQ(part.size(), again.size());
        for (size_t j = 0; j < part.size(); j++) EXPECT_EQ(part[j].shape, again[j].shape);
        for (const auto &t : part) all.insert(t.shape);
    }
    EXPECT_EQ(all.size(), 10u);
    EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), 10u);
}

TEST(Manifest, BadShardTextIsRefused) {
    for (const char *bad : {"3/3", "-1/2", "1", "a/b", "1/0", "1/2x", "/2"}) {
        try {
            parse_shard(bad);
            ADD_FAILURE() << bad;
        } catch (const UserError &e) {
            EXPECT_NE(std::string(e.what()).find(std::string("--shard '") + bad + "'"), std::string::npos) << e.what();
        }
    }
}

TEST(ManifestError, NamesTheEntryAndTheField) {
    struct Case {
        const char *text;
        const char *want;
    };
    const Case cases[] = {
        {R"({"entries": [{"op": "matmul", "shapes": ["M=8,N=8,K=8"]}, {"op": "nope", "shapes": ["M=8"]}]})",
         "manifest 'm.json' entry 1 field \"op\": "},
        {R"({"entries": [{"op": 3, "shapes": ["M=8"]}]})", "entry 0 field \"op\": expected the op's name"},
        {R"({"entries": [{"op": "matmul"}]})", "entry 0 field \"shapes\": expected a non-empty array"},
        {R"({"entries": [{"op": "matmul", "shapes": []}]})", "entry 0 field \"shapes\": expected a non-empty array"},
        {R"({"entries": [{"op": "matmul", "shapes": ["M=8,N=8"]}]})", "entry 0 field \"shapes[0]\": "},
        {R"({"entries": [{"op": "matmul", "shapes": ["M=8,N=8,K=8", "M=8,N=8,K=0"]}]})", "entry 0 field \"shapes[1]\": "},
        {R"({"entries": [{"op": "matmul", "shapes": [{"M": [], "N": 8, "K": 8}]}]})",
         "entry 0 field \"shapes[0].M\": the list of values is empty"},
        {R"({"entries": [{"op": "matmul", "shapes": [{"M": {"from": 9, "to": 1, "step": 1}, "N": 8, "K": 8}]}]})",
         "entry 0 field \"shapes[0].M\": \"from\" 9 is larger than \"to\" 1"},
        {R"({"entries": [{"op": "matmul", "shapes": [{"M": {"from": 1, "to": 9, "step": 0}, "N": 8, "K": 8}]}]})",
         "entry 0 field \"shapes[0].M.step\": must be positive"},
        {R"({"entries": [{"op": "matmul", "shapes": [{"M": {"from": 1, "to": 9}, "N": 8, "K": 8}]}]})",
         "exactly one of \"step\""},
        {R"({"entries": [{"op": "matmul", "shapes": [{"M": "8", "N": 8, "K": 8}]}]})",
         "entry 0 field \"shapes[0].M\": expected an integer"},
        {R"({"entries": [{"op": "matmul", "shapes": [{"M": {"from": 1, "to": 100000000, "step": 1}, "N": 8, "K": 8}]}]})",
         "more than 100000"},
        {R"({"entries": [{"op": "matmul", "shapes": ["M=8,N=8,K=8"], "dtype": "f16"}]})",
         "entry 0 field \"dtype\": op 'matmul' computes f32, not f16"},
        {R"({"entries": [{"op": "matmul", "shapes": ["M=8,N=8,K=8"], "target": "no-such-target"}]})",
         "entry 0 field \"target\": "},
        {R"({"entries": [{"op": "matmul", "shapes": ["M=8,N=8,K=8"], "trials": 0}]})",
         "entry 0 field \"trials\": must be between 1 and 100000, got 0"},
        {R"({"entries": [{"op": "matmul", "shapes": ["M=8,N=8,K=8"], "trials": "many"}]})",
         "entry 0 field \"trials\": expected an integer"},
        {R"({"entries": [{"op": "matmul", "shapes": ["M=8,N=8,K=8"], "seed": -1}]})", "entry 0 field \"seed\""},
        {R"({"entries": [{"op": "matmul", "shapes": ["M=8,N=8,K=8"], "shape": "x"}]})",
         "entry 0 field \"shape\": unknown field (did you mean \"shapes\"?)"},
        {R"({"entries": [{"op": "matmul", "shapes": ["M=8,N=8,K=8"], "trails": 3}]})",
         "entry 0 field \"trails\": unknown field (did you mean \"trials\"?)"},
        {R"({"entries": [{"op": "matmul", "shapes": ["M=8,N=8,K=8"]}], "defaults": {"trials": -3}})",
         "manifest 'm.json' field \"defaults.trials\": must be between"},
        {R"({"entries": [{"op": "matmul", "shapes": ["M=8,N=8,K=8"]}], "default": {}})",
         "field \"default\": unknown field (did you mean \"defaults\"?)"},
        {R"({"entries": [{"op": "matmul", "shapes": ["M=8,N=8,K=8"]}], "defaults": {"seeds": 1}})",
         "field \"defaults.seeds\": unknown field (did you mean \"seed\"?)"},
        {R"({"entries": []})", "expected a non-empty array \"entries\""},
        {R"([1, 2])", "expected an object"},
        {R"({"entries": [)", "not valid JSON"},
        {R"({"entries": [7]})", "entry 0: expected an object"},
    };
    for (const auto &c : cases) {
        std::string got = error_of(c.text);
        EXPECT_NE(got.find(c.want), std::string::npos) << c.text << "\n  got: " << got << "\n  want: " << c.want;
        EXPECT_NE(got.find("manifest 'm.json'"), std::string::npos) << got;
    }
}

TEST(ManifestError, UnreadableFileIsNamed) {
    try {
        load_manifest("/nonexistent/m.json", OpLibrary::standard(), {});
        FAIL();
    } catch (const UserError &e) {
        EXPECT_STREQ(e.what(), "cannot read manifest '/nonexistent/m.json'");
    }
}
