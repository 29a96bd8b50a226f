// Compiling the kernels of a whole model in parallel, one worker process per kernel, at most N at
// a time (seed 000: the subgraphs' intermediate code is compiled in parallel by several compile
// service instances, and the pieces are combined into one program). Each job is a kernel's op
// text, shape, target and schedule; its worker (`opgen-worker --object JOB`, tuner/Worker.h's
// executable) writes one object file with Halide (Target::NoRuntime), or, for the one runtime job,
// Halide's standalone runtime. A worker that fails leaves its `error: ...` line in its log and the
// whole compile fails naming the kernel; what the other workers wrote stays in the scratch folder
// for the caller to discard.
#ifndef OPGEN_TUNER_OBJECT_COMPILE_H
#define OPGEN_TUNER_OBJECT_COMPILE_H

#include <string>
#include <vector>

namespace opgen::tuner {

struct ObjectJob {
    std::string op_source, op_file;  // the op's text and where it came from (for messages)
    std::string shape;               // canonical shape text
    std::string target;              // target name or path
    std::string point_json;          // the schedule (SchedulePoint JSON)
    std::string function;            // the pipeline's name; its entry point is function + "_argv"
    std::string path;                // the object file to write
    bool runtime = false;            // Halide's standalone runtime for the host instead of a kernel
};

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

}  // namespace opgen::tuner

#endif
