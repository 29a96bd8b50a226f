// Compiling the kernels of a whole model in parallel, one worker process per kernel, at most N at a
// time (docs/design.md §7.3: the subgraphs' code is compiled in parallel by several compile
// workers, and the pieces are combined into one program). Each job is a kernel's op text, shape,
// target and schedule; its worker (`opgen-worker --object JOB`, tuner/Worker.h's executable) writes
// one object file with Halide (Target::NoRuntime), or, for the one runtime job, Halide's standalone
// runtime. A worker that fails leaves its `error: ...` line in its log and the whole compile fails
// naming the kernel; what the other workers wrote stays in the scratch folder for the caller to
// discard.
#ifndef OPGEN_CODEGEN_OBJECT_COMPILE_H
#define OPGEN_CODEGEN_OBJECT_COMPILE_H

#include <string>
#include <vector>

namespace opgen {

struct ObjectJob {
    std::string op_source, op_file;  // the op's text and where it came from (for messages)
    std::string shape;               // canonical shape text
    std::string target;              // target name or path
    std::string point_json;          // the schedule (SchedulePoint JSON)
    std::string function;            // the pipeline's name; its entry point is function + "_argv"
    std::string path;                // the object file to write
    bool runtime = false;            // Halide's standalone runtime for the host instead of a kernel
    // The shape-generic kernel of the schedule tuned at `shape` (lower_generic), checked against
    // the reference first (checked_generic), compiled with LLVM's SLP vectorizer off
    // (generic_worker_environment); path + ".generic.json" gets {"checked": the shapes it was
    // checked at, "halide_target": the target string of the object}.
    bool generic = false;
};

// The environment of a generic job's worker: this process's, with `-vectorize-slp=false` added to
// HL_LLVM_ARGS (the LLVM options Halide reads once per process, hence a process of its own). In
// a generic kernel the register tile's rows sit at symbolic strides, one address register each;
// the SLP vectorizer packs their per-step increments into a vector add and extracts every address
// from it in the innermost loop. Measured on an Intel Xeon host, one thread, conv2d_nchw C=16 F=32
// 14x14's generic kernel at its own shape: 18.1 us with, 16.0 without (the exact kernel 14.8). The
// exact kernels keep it (30-40% slower without, on the same host).
std::vector<std::string> generic_worker_environment(char **env);

struct ObjectCompileReport {
    int workers = 0;
    double wall_s = 0;  // all jobs, start to end
    double job_s = 0;   // the jobs' times added up: what one worker would take
};

// Runs `jobs` in at most `workers` worker processes at once (at least one); each job's request and
// log are written beside its object. Raises UserError naming the kernel and the worker's error when
// a job fails, after the running workers have ended; std::runtime_error when no worker can start.
ObjectCompileReport compile_objects(const std::vector<ObjectJob> &jobs, int workers);

// The worker's side: compiles the job in the JSON file at `job_file`. Returns the exit status; a
// failure prints one `error: ...` line to stderr.
int run_object_job(const std::string &job_file);

}  // namespace opgen

#endif
