// Records a real tuning run for the replay test (tests/tuner/TuneReplayTest.cpp): tunes one op at
// one shape on this machine's host target with measurement workers, through a RecordingRunner, and
// writes the recording with everything a replay needs to take the same steps (the target as JSON,
// the options) and what the run did (every trial in order, the winner).
//   record_tuning OP SHAPE SEED OUT.json
// scripts/record-replay.sh makes the three recordings the test reads.
#include "core/OpLibrary.h"
#include "tests/tuner/ReplayCase.h"
#include "tuner/Replay.h"
#include "tuner/WorkerPool.h"

#include <cstdio>
#include <fstream>
#include <iostream>

using namespace opgen;
using namespace opgen::tuner;

int main(int argc, char **argv) {
    if (argc != 5) {
        std::cerr << "usage: record_tuning OP SHAPE SEED OUT.json\n";
        return 2;
    }
    try {
        ReplayCase c;
        c.op = argv[1];
        c.shape = argv[2];
        c.seed = std::stoull(argv[3]);
        c.target = host_target();
        const ComputeDef def = OpLibrary::standard().load(c.op);
        WorkerPool pool(2);
        RecordingRunner recorder(pool);
        TuneOptions o = replay_options(c);
        o.pool = &recorder;
        o.log = [](const std::string &line) { std::cerr << line << "\n"; };
        TuneResult r = tune(def, bind_shape(def, c.shape), c.target, o);
        std::ofstream(argv[4]) << write_replay_case(c, recorder.recording(), r).dump(1) << "\n";
        return r.found ? 0 : 1;
    } catch (const std::exception &e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    }
}
