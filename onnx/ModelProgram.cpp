#include "onnx/ModelProgram.h"

#include "base/AmxPermission.h"
#include "base/Error.h"
#include "onnx/ModelAllocator.h"
#include "onnx/ModelThreadPool.h"
#include "onnx/ModelVariants.h"

#include <cctype>
#include <set>
#include <sstream>

namespace opgen::onnx_import {

namespace {

// The declarations every model shares; @M@ is the model's name.
const char *header_body = R"C(#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The model's facts: names, element types, dims (outermost first) and element counts of its
 * inputs and outputs, one line per kernel, and the bytes of the intermediates' arena and of the
 * weights. Types are ONNX's TensorProto numbers, the data laid out as ONNX and numpy lay it out:
 * 1 float32, 2 uint8, 3 int8, 6 int32, 7 int64, 9 bool (one byte, 0 or 1). */
extern const char *const @M@_input_names[];
extern const int @M@_input_types[];
extern const int @M@_input_ndims[];
extern const int64_t *const @M@_input_dims[];
extern const int64_t @M@_input_elements[];
extern const char *const @M@_output_names[];
extern const int @M@_output_types[];
extern const int @M@_output_ndims[];
extern const int64_t *const @M@_output_dims[];
extern const int64_t @M@_output_elements[];
extern const char *const @M@_kernel_names[];
extern const int64_t @M@_arena_bytes, @M@_weight_bytes;
/* The counts this header's macros give, as data: inputs, outputs, kernels, dims and variant
 * levels. Code compiled apart from the macros reads them here (the runner, one object for every
 * model of this name). */
extern const int @M@_counts[5];

/* Dynamic dimensions (`opgen compile --dim NAME=LO..HI`): @M@_DIMS of them, each taking any value
 * from @M@_dim_min to @M@_dim_max at call time (0 for a library of one shape). The tables above
 * give the inputs' and outputs' dims and elements at the largest values; @M@_input_shape and
 * @M@_output_shape give them at the values set now (the largest until @M@_set_dims). */
extern const char *const @M@_dim_names[];
extern const int64_t @M@_dim_min[], @M@_dim_max[];
/* Sets the dims' values (@M@_DIMS of them, in @M@_dim_names' order) for the runs that follow.
 * Returns 0, or -1 with @M@_last_error() when one lies outside its range. */
int @M@_set_dims(const int64_t *values);
/* The values of the dims that inputs of these dims (input_dims[i]: input i's dims, outermost
 * first) have, written to values. Returns 0, or -1 with @M@_last_error() when no input dim tells
 * one. The shapes themselves are checked by comparing them with @M@_input_shape after
 * @M@_set_dims. */
int @M@_infer_dims(const int64_t *const *input_dims, int64_t *values);
/* Input or output i's dims at the values set now, written to dims; returns its elements. */
int64_t @M@_input_shape(int i, int64_t *dims);
int64_t @M@_output_shape(int i, int64_t *dims);
/* Which specialization's kernels serve the values set now (an index of the values
 * `opgen compile --specialize` named, in order), or -1: the shape-generic kernels. */
int @M@_specialization(void);

/* Reads the weights file (checking its header, size and hash) into one buffer and allocates the
 * arena; loading again releases the earlier load first. Returns 0, or -1 with @M@_last_error(). */
int @M@_load(const char *weights_path);
/* Runs the model: inputs[i] and outputs[i] point to dense data of the types and dims above. Returns
 * 0, or -1 with @M@_last_error() (not loaded, a NULL pointer, a kernel's Halide error). Not
 * reentrant: one run at a time. */
int @M@_run(const void *const *inputs, void *const *outputs);
/* As @M@_run, adding each kernel's seconds to kernel_seconds[k] (@M@_KERNELS entries). */
int @M@_run_profiled(const void *const *inputs, void *const *outputs, double *kernel_seconds);
/* Chooses, by timing, the kernels whose weights are read ahead of them: for each kernel with at
 * least 1 MiB of weights, `runs` runs with its weights streamed into the cache first (a
 * sequential pass, at the memory's bandwidth) against `runs` without, the pass kept where it
 * makes the kernel at least 3% faster in place: a kernel tuned with its weights in the cache can
 * stall when they come from memory, as they do in a model. Until called, no weights are read
 * ahead. Returns the kernels chosen, or -1 with @M@_last_error(). */
int @M@_calibrate(const void *const *inputs, void *const *outputs, int runs);
/* Threads the kernels' parallel loops use, the caller's among them; call before the first run.
 * Above 1, the loops run on the model's own pool, whose workers spin for a while (OPGEN_SPIN_US,
 * 200 by default; 0 keeps Halide's pool) after each loop so the next kernel finds them awake. */
void @M@_set_threads(int threads);
/* Frees the weights, the arena and the kernels' temporaries kept for the next run. */
void @M@_release(void);
const char *@M@_last_error(void);

#ifdef __cplusplus
}
#endif
)C";

// The loader and the run loop over the generated tables; @M@ is the model's name.
const char *source_body = R"C(
static uint8_t *weights, *arena;
static char error_text[512];

static int fail(const char *what, const char *detail, long long value) {
    snprintf(error_text, sizeof error_text, "%s%s%s (%lld)", what, detail ? " " : "", detail ? detail : "", value);
    return -1;
}

const char *@M@_last_error(void) { return error_text; }

void @M@_set_threads(int threads) {
    halide_set_num_threads(threads);
    model_pool_start(threads);
}

void @M@_release(void) {
    free(weights);
    free(arena);
    weights = arena = 0;
    model_alloc_release();
}

static uint64_t read_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint64_t fnv1a64(const uint8_t *p, uint64_t n) {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static int64_t size_at(const struct size_rule *r) {
    int64_t v = r->base;
    for (int j = 0; j < @M@_DIMS; j++) v += r->per[j] * dim_values[j];
    return v;
}

static int at_values(const int64_t *point) {
    for (int j = 0; j < @M@_DIMS; j++)
        if (point[j] != dim_values[j]) return 0;
    return 1;
}

/* Every argument's dims at the values set now, dense, innermost first; and the kernels to call
 * at them: those tuned for exactly these values, else the generic ones. */
static void bind_dims(void) {
    for (int i = 0; i < ARGS; i++) {
        int64_t stride = 1;
        for (int d = 0; d < args[i].ndims; d++) {
            int64_t extent = size_at(&dim_rules[args[i].dim0 + d]);
            dims[args[i].dim0 + d].min = 0;
            dims[args[i].dim0 + d].extent = (int32_t)extent;
            dims[args[i].dim0 + d].stride = (int32_t)stride;
            dims[args[i].dim0 + d].flags = 0;
            stride *= extent;
        }
    }
    variant = SPECIALIZED;
    for (int p = 0; p < SPECIALIZED && variant == SPECIALIZED; p++)
        if (at_values(specializations[p])) variant = p;
    if (@M@_DIMS == 0) variant = 0;
}

int @M@_set_dims(const int64_t *values) {
    for (int j = 0; j < @M@_DIMS; j++)
        if (!values || values[j] < @M@_dim_min[j] || values[j] > @M@_dim_max[j]) {
            snprintf(error_text, sizeof error_text, "%s=%lld lies outside the library's range %lld..%lld",
                     @M@_dim_names[j], values ? (long long)values[j] : 0LL, (long long)@M@_dim_min[j],
                     (long long)@M@_dim_max[j]);
            return -1;
        }
    for (int j = 0; j < @M@_DIMS; j++) dim_values[j] = values[j];
    bind_dims();
    return 0;
}

static int64_t shape_at(const struct size_rule *rules, int ndims, int64_t *out) {
    int64_t n = 1;
    for (int d = 0; d < ndims; d++) n *= out[d] = size_at(&rules[d]);
    return n;
}

int @M@_specialization(void) { return variant < SPECIALIZED || @M@_DIMS == 0 ? variant : -1; }

int64_t @M@_input_shape(int i, int64_t *out) { return shape_at(input_rules[i], @M@_input_ndims[i], out); }
int64_t @M@_output_shape(int i, int64_t *out) { return shape_at(output_rules[i], @M@_output_ndims[i], out); }

/* A dim of an input that is one range's value alone, scaled and shifted, tells that value. */
int @M@_infer_dims(const int64_t *const *input_dims, int64_t *values) {
    for (int j = 0; j < @M@_DIMS; j++) {
        int found = 0;
        for (int i = 0; i < @M@_INPUTS && !found; i++)
            for (int d = 0; d < @M@_input_ndims[i] && !found; d++) {
                const struct size_rule *r = &input_rules[i][d];
                int alone = r->per[j] != 0;
                for (int o = 0; o < @M@_DIMS; o++) alone &= o == j || r->per[o] == 0;
                if (!alone || (input_dims[i][d] - r->base) % r->per[j] != 0) continue;
                values[j] = (input_dims[i][d] - r->base) / r->per[j];
                found = 1;
            }
        if (!found) {
            snprintf(error_text, sizeof error_text, "no input dim tells the value of %s", @M@_dim_names[j]);
            return -1;
        }
    }
    return 0;
}

/* Every buffer's type and dims once; the weights' and the arena's hosts are fixed from here on. */
static void bind_buffers(void) {
    for (int i = 0; i < ARGS; i++) {
        memset(&buffers[i], 0, sizeof buffers[i]);
        buffers[i].type.code = (uint8_t)args[i].type_code;
        buffers[i].type.bits = (uint8_t)args[i].bits;
        buffers[i].type.lanes = 1;
        buffers[i].dimensions = args[i].ndims;
        buffers[i].dim = &dims[args[i].dim0];
        if (args[i].storage == WEIGHT) buffers[i].host = weights + args[i].offset;
        if (args[i].storage == ARENA) buffers[i].host = arena + args[i].offset;
        argv[i] = &buffers[i];
    }
}

int @M@_load(const char *weights_path) {
    @M@_release();
    if (!amx_permitted()) return fail("the operating system refused AMX tiles, which this model's kernels use", 0, 0);
    unsigned char header[64];
    FILE *f = weights_path ? fopen(weights_path, "rb") : 0;
    if (!f) return fail("cannot open the weights file", weights_path, 0);
    int ok = fread(header, 1, 64, f) == 64 && memcmp(header, "OPGENWT1", 8) == 0;
    if (!ok || read_u64(header + 8) != (uint64_t)@M@_weight_bytes) {
        fclose(f);
        return fail("not this model's weights file:", weights_path, (long long)@M@_weight_bytes);
    }
    if (posix_memalign((void **)&weights, 64, (size_t)@M@_weight_bytes + 64) != 0 ||
        posix_memalign((void **)&arena, 64, (size_t)@M@_arena_bytes + 64) != 0) {
        fclose(f);
        @M@_release();
        return fail("out of memory for weights and arena, bytes", 0, (long long)(@M@_weight_bytes + @M@_arena_bytes));
    }
    ok = fread(weights, 1, (size_t)@M@_weight_bytes, f) == (size_t)@M@_weight_bytes;
    fclose(f);
    if (!ok || fnv1a64(weights, (uint64_t)@M@_weight_bytes) != read_u64(header + 16)) {
        @M@_release();
        return fail("the weights file is truncated or corrupt:", weights_path, 0);
    }
    bind_dims();
    bind_buffers();
    model_alloc_install();
    return 0;
}

/* Per kernel: its weights' bytes, and whether they are read ahead of it (@M@_calibrate). */
static int64_t weight_bytes_of[@M@_KERNELS];
static unsigned char read_ahead[@M@_KERNELS];
static volatile uint32_t read_ahead_sink;

static int64_t arg_bytes(int i) {
    int64_t n = args[i].bits / 8;
    for (int d = 0; d < args[i].ndims; d++) n *= dims[args[i].dim0 + d].extent;
    return n;
}

static int kernel_end_arg(int k) { return k + 1 < @M@_KERNELS ? kernels[k + 1].first_arg : ARGS; }

/* One load per cache line, each independent of the others, so the core keeps many misses in
 * flight and the hardware prefetcher streams the rest. */
static void read_weights_ahead(int k) {
    uint32_t sink = 0;
    for (int i = kernels[k].first_arg; i < kernel_end_arg(k); i++) {
        if (args[i].storage != WEIGHT) continue;
        const uint8_t *p = buffers[i].host;
        for (int64_t b = 0, n = arg_bytes(i); b < n; b += 64) sink += p[b];
    }
    read_ahead_sink = sink;
}

int @M@_run_profiled(const void *const *inputs, void *const *outputs, double *kernel_seconds) {
    if (!weights) return fail("model not loaded: call @M@_load first", 0, 0);
    if (!inputs || !outputs) return fail("NULL inputs or outputs", 0, 0);
    for (int i = 0; i < ARGS; i++) {
        if (args[i].storage == INPUT) buffers[i].host = (uint8_t *)inputs[args[i].index];
        if (args[i].storage == OUTPUT) buffers[i].host = (uint8_t *)outputs[args[i].index];
        if (!buffers[i].host) return fail("NULL input or output", 0, args[i].index);
    }
    for (int k = 0; k < @M@_KERNELS; k++) {
        struct timespec t0, t1;
        int timed = kernel_seconds || kernel_timed(k);
        if (timed) clock_gettime(CLOCK_MONOTONIC, &t0);
        if (read_ahead[k]) read_weights_ahead(k);
        int rc = kernel_entry(k)(&argv[kernels[k].first_arg]);
        if (rc != 0) return fail("kernel failed:", @M@_kernel_names[k], rc);
        if (!timed) continue;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        if (kernel_seconds) kernel_seconds[k] += seconds;
        variant_kernel_done(k, seconds);
    }
    variant_run_done();
    return 0;
}

int @M@_run(const void *const *inputs, void *const *outputs) { return @M@_run_profiled(inputs, outputs, 0); }

static int by_seconds(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int @M@_calibrate(const void *const *inputs, void *const *outputs, int runs) {
    if (!weights) return fail("model not loaded: call @M@_load first", 0, 0);
    if (runs < 1) return fail("calibration needs at least one run, got", 0, runs);
    enum { CANDIDATE_BYTES = 1 << 20 };
    double *t = calloc((size_t)2 * runs * @M@_KERNELS, sizeof(double));
    if (!t) return fail("out of memory for the calibration's timings", 0, 0);
    for (int k = 0; k < @M@_KERNELS; k++) {
        weight_bytes_of[k] = 0;
        for (int i = kernels[k].first_arg; i < kernel_end_arg(k); i++)
            if (args[i].storage == WEIGHT) weight_bytes_of[k] += arg_bytes(i);
    }
    /* Alternate runs with and without, so a change in the machine's load falls on both. */
    for (int r = 0; r < 2 * runs; r++) {
        for (int k = 0; k < @M@_KERNELS; k++) read_ahead[k] = (r & 1) && weight_bytes_of[k] >= CANDIDATE_BYTES;
        double *seconds = t + (size_t)((r & 1) * runs + r / 2) * @M@_KERNELS;
        if (@M@_run_profiled(inputs, outputs, seconds) != 0) {
            memset(read_ahead, 0, sizeof read_ahead);
            free(t);
            return -1;
        }
    }
    int chosen = 0;
    double *without = calloc((size_t)runs, sizeof(double)), *with = calloc((size_t)runs, sizeof(double));
    for (int k = 0; k < @M@_KERNELS; k++) {
        read_ahead[k] = 0;
        if (weight_bytes_of[k] < CANDIDATE_BYTES || !without || !with) continue;
        for (int r = 0; r < runs; r++) {
            without[r] = t[(size_t)r * @M@_KERNELS + k];
            with[r] = t[(size_t)(runs + r) * @M@_KERNELS + k];
        }
        qsort(without, (size_t)runs, sizeof(double), by_seconds);
        qsort(with, (size_t)runs, sizeof(double), by_seconds);
        read_ahead[k] = with[runs / 2] < 0.97 * without[runs / 2];
        chosen += read_ahead[k];
    }
    free(without);
    free(with);
    free(t);
    return chosen;
}
)C";

std::string dims_text(const std::vector<int64_t> &dims) {
    std::ostringstream s;
    for (size_t d = 0; d < dims.size(); d++) s << (d ? ", " : "") << dims[d];
    return s.str();
}

// One size rule as C: {base, {per...}} with at least one coefficient (C has no empty arrays).
std::string rule_text(const AffineSize &a, size_t ranges) {
    std::ostringstream c;
    c << "{" << a.base << ", {";
    for (size_t j = 0; j < std::max<size_t>(ranges, 1); j++) c << (j ? ", " : "") << (j < a.per.size() ? a.per[j] : 0);
    c << "}}";
    return c.str();
}

// The inputs' or outputs' tables (`which` is "input" or "output"): dims at the largest values and
// each dim's rule.
std::string io_tables(const std::string &name, const std::string &which, const std::vector<std::string> &tensors,
                      const ModelGraph &g, const ProgramShapes &shapes) {
    std::ostringstream c, names, types, ndims, table, elements, rules;
    for (size_t i = 0; i < tensors.size(); i++) {
        const GraphTensor &t = g.tensor(tensors[i]);
        c << "static const int64_t " << which << "_dims_" << i << "[] = {" << dims_text(t.dims) << (t.dims.empty() ? "0" : "")
          << "};\nstatic const struct size_rule " << which << "_rules_" << i << "[] = {";
        const std::vector<AffineSize> &r = shapes.io_dims.at(tensors[i]);
        for (size_t d = 0; d < r.size(); d++) c << (d ? ", " : "") << rule_text(r[d], shapes.ranges.size());
        c << (r.empty() ? "{0, {0}}" : "") << "};\n";
        const char *sep = i ? ", " : "";
        names << sep << "\"" << tensors[i] << "\"";
        types << sep << t.elem_type;
        ndims << sep << t.dims.size();
        table << sep << which << "_dims_" << i;
        rules << sep << which << "_rules_" << i;
        elements << sep << t.elements();
    }
    c << "const char *const " << name << "_" << which << "_names[] = {" << names.str() << "};\n"
      << "const int " << name << "_" << which << "_types[] = {" << types.str() << "};\n"
      << "const int " << name << "_" << which << "_ndims[] = {" << ndims.str() << "};\n"
      << "const int64_t *const " << name << "_" << which << "_dims[] = {" << table.str() << "};\n"
      << "const int64_t " << name << "_" << which << "_elements[] = {" << elements.str() << "};\n"
      << "static const struct size_rule *const " << which << "_rules[] = {" << rules.str() << "};\n";
    return c.str();
}

// The dynamic dims' names, ranges, current values and specializations.
std::string range_tables(const std::string &name, const ProgramShapes &shapes) {
    std::ostringstream names, lo, hi, points;
    for (size_t j = 0; j < shapes.ranges.size(); j++) {
        const char *sep = j ? ", " : "";
        names << sep << "\"" << shapes.ranges[j].name << "\"";
        lo << sep << shapes.ranges[j].lo;
        hi << sep << shapes.ranges[j].hi;
    }
    for (const std::vector<int64_t> &p : shapes.points) points << "    {" << dims_text(p) << "},\n";
    bool none = shapes.ranges.empty();
    std::ostringstream c;
    c << "#define SPECIALIZED " << shapes.points.size() << "\n"
      << "const char *const " << name << "_dim_names[] = {" << (none ? "0" : names.str()) << "};\n"
      << "const int64_t " << name << "_dim_min[] = {" << (none ? "0" : lo.str()) << "};\n"
      << "const int64_t " << name << "_dim_max[] = {" << (none ? "0" : hi.str()) << "};\n"
      << "static int64_t dim_values[] = {" << (none ? "0" : hi.str()) << "};\n"
      << "static const int64_t specializations[][" << std::max<size_t>(shapes.ranges.size(), 1) << "] = {\n"
      << (shapes.points.empty() ? "    {0},\n" : points.str()) << "};\nstatic int variant;\n";
    return c.str();
}

const char *storage_name(Storage s) {
    switch (s) {
    case Storage::Input: return "INPUT";
    case Storage::Output: return "OUTPUT";
    case Storage::Weight: return "WEIGHT";
    case Storage::Arena: break;
    }
    return "ARENA";
}

// Per kernel its entry point in each variant and its arguments (op inputs in declaration order,
// then the output, as the pipeline takes them), with every argument's place and each dim's rule
// (innermost first, dense).
std::string kernel_tables(const std::string &name, const CompiledModel &m, const BufferPlan &plan,
                          const std::vector<std::vector<std::string>> &functions, const ProgramShapes &shapes) {
    std::ostringstream decls, kernels, args, rules, names;
    std::set<std::string> declared;
    int arg = 0, dim = 0;
    for (size_t k = 0; k < m.partition.kernels.size(); k++) {
        const SubgraphKernel &sk = m.partition.kernels[k];
        std::map<std::string, std::string> graph_tensor(sk.args.begin(), sk.args.end());
        std::vector<const TensorDecl *> tensors = kernel_call_tensors(m, k);
        kernels << "    {{";
        for (size_t v = 0; v < functions.size(); v++) {
            const std::string &f = functions[v][k];
            if (declared.insert(f).second) decls << "int " << f << "_argv(void **args);\n";
            kernels << (v ? ", " : "") << f << "_argv";
        }
        kernels << "}, " << arg << "},\n";
        names << "    \"" << k << ": " << sk.op << " " << m.canonical[k] << "\",\n";
        for (size_t t = 0; t < tensors.size(); t++) {
            const TensorPlace &p = plan.place.at(graph_tensor.at(tensors[t]->name));
            const std::vector<AffineSize> &d = shapes.arg_dims[k][t];
            args << "    {" << storage_name(p.storage) << ", " << p.index << ", " << p.offset << ", " << d.size()
                 << ", " << dim << ", " << int(dtype_code(tensors[t]->dtype)) << ", " << 8 * dtype_bytes(tensors[t]->dtype)
                 << "},  /* kernel " << k << " " << tensors[t]->name << " */\n";
            for (size_t i = d.size(); i-- > 0; dim++) rules << "    " << rule_text(d[i], shapes.ranges.size()) << ",\n";
            arg++;
        }
    }
    std::ostringstream c;
    c << decls.str() << "\nenum { INPUT, OUTPUT, WEIGHT, ARENA };\n#define ARGS " << arg << "\n#define VARIANTS "
      << functions.size() << "\n"
      << "struct kernel { int (*entry[VARIANTS])(void **); int first_arg; };\n"
      << "struct arg { int storage, index; int64_t offset; int ndims, dim0, type_code, bits; };\n"
      << "static const struct kernel kernels[] = {\n" << kernels.str() << "};\n"
      << "static const struct arg args[] = {\n" << args.str() << "};\n"
      << "static const struct size_rule dim_rules[] = {\n" << rules.str() << (dim ? "" : "    {0, {0}},\n") << "};\n"
      << "static halide_dimension_t dims[" << std::max(dim, 1) << "];\n"
      << "static halide_buffer_t buffers[ARGS];\nstatic void *argv[ARGS];\n"
      << "const char *const " << name << "_kernel_names[] = {\n" << names.str() << "};\n";
    return c.str();
}

}  // namespace

std::string with_model_name(std::string text, const std::string &name) {
    const std::string from = "@M@";
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + name.size()))
        text.replace(at, from.size(), name);
    return text;
}

std::string model_identifier(const std::string &name) {
    std::string id;
    for (char ch : name) id += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "m_" + id;
    return id;
}

std::string model_declarations(const std::string &name) {
    return with_model_name(header_body, name) + variant_declarations(name);
}

ProgramShapes static_shapes(const CompiledModel &m) {
    ProgramShapes shapes;
    auto constant = [](const std::vector<int64_t> &dims) {
        std::vector<AffineSize> out;
        for (int64_t d : dims) out.push_back({d, {}});
        return out;
    };
    for (size_t k = 0; k < m.partition.kernels.size(); k++) {
        shapes.arg_dims.emplace_back();
        for (const TensorDecl *t : kernel_call_tensors(m, k))
            shapes.arg_dims.back().push_back(constant(m.bounds[k].dims.at(t->name)));
    }
    for (const auto *list : {&m.graph.inputs, &m.graph.outputs})
        for (const std::string &t : *list) shapes.io_dims[t] = constant(m.graph.tensor(t).dims);
    return shapes;
}

ModelProgram model_program(const std::string &name, const CompiledModel &m, const BufferPlan &plan,
                           const std::vector<std::vector<std::string>> &functions, const ProgramShapes &shapes,
                           bool uses_amx, const ModelVariants *variants) {
    for (const auto &variant : functions)
        internal_check(variant.size() == m.partition.kernels.size()) << "one function per kernel";
    internal_check(functions.size() == (shapes.ranges.empty() ? 1 : shapes.points.size() + 1))
        << "one variant per specialization and the generic one";
    const ModelGraph &g = m.graph;
    std::string guard = "OPGEN_MODEL_" + name + "_H";
    std::ostringstream h;
    h << "/* Generated by `opgen compile` from " << g.path << ": " << m.partition.kernels.size()
      << " kernels, arena " << plan.arena_bytes << " bytes, weights " << plan.weight_bytes << " bytes. */\n"
      << "#ifndef " << guard << "\n#define " << guard << "\n\n"
      << "#define " << name << "_INPUTS " << g.inputs.size() << "\n#define " << name << "_OUTPUTS "
      << g.outputs.size() << "\n#define " << name << "_KERNELS " << m.partition.kernels.size() << "\n#define " << name
      << "_DIMS " << shapes.ranges.size() << "\n\n"
      << "#define " << name << "_LEVELS " << (variants ? variants->levels.size() : 1) << "\n"
      << model_declarations(name) << "\n#endif\n";
    std::ostringstream c;
    c << "/* Generated by `opgen compile` from " << g.path << ". */\n#include \"" << name << ".h\"\n\n"
      << "#include <HalideRuntime.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
      << "#include <time.h>\n\n" << amx_permission_c_source(uses_amx)
      << "struct size_rule { int64_t base, per[" << std::max<size_t>(shapes.ranges.size(), 1) << "]; };\n"
      << io_tables(name, "input", g.inputs, g, shapes) << io_tables(name, "output", g.outputs, g, shapes)
      << range_tables(name, shapes)
      << "const int64_t " << name << "_arena_bytes = " << plan.arena_bytes << ";\nconst int64_t " << name
      << "_weight_bytes = " << plan.weight_bytes << ";\nconst int " << name << "_counts[5] = {" << name << "_INPUTS, "
      << name << "_OUTPUTS, " << name << "_KERNELS, " << name << "_DIMS, " << name << "_LEVELS};\n\n"
      << kernel_tables(name, m, plan, functions, shapes) << allocator_source() << thread_pool_source()
      << variant_source(name, variants, m.partition.kernels.size()) << with_model_name(source_body, name);
    return {h.str(), c.str()};
}

}  // namespace opgen::onnx_import
