#include "onnx/ModelRunner.h"

#include "onnx/ModelProgram.h"

namespace opgen::onnx_import {

namespace {

// @M@ is the model's name.
const char *runner_text = R"C(
/* The counts of @M@.h's macros, read from the library: this file is compiled without the model's
 * header, so that its object serves every model named @M@. */
#define @M@_INPUTS (@M@_counts[0])
#define @M@_OUTPUTS (@M@_counts[1])
#define @M@_KERNELS (@M@_counts[2])
#define @M@_DIMS (@M@_counts[3])
#define @M@_LEVELS (@M@_counts[4])

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static void die(const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    fputs("error: ", stderr);
    vfprintf(stderr, format, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* numpy's name and the bytes of an element of ONNX type `type` (the types a model takes). */
static const char *npy_descr(int type) {
    switch (type) {
    case 1: return "<f4";
    case 2: return "|u1";
    case 3: return "|i1";
    case 6: return "<i4";
    case 7: return "<i8";
    case 9: return "|b1";
    }
    return "?";
}

static const char *type_name(int type) {
    switch (type) {
    case 1: return "float32";
    case 2: return "uint8";
    case 3: return "int8";
    case 6: return "int32";
    case 7: return "int64";
    case 9: return "bool";
    }
    return "?";
}

static size_t element_bytes(int type) { return type == 7 ? 8 : type == 1 || type == 6 ? 4 : 1; }

/* The dims of a .npy header's shape tuple; -1 when it is not `descr` in C order. */
static int npy_dims(const char *header, const char *descr, int64_t *dims) {
    char want[32];
    snprintf(want, sizeof want, "'descr': '%s'", descr);
    if (!strstr(header, want) || !strstr(header, "'fortran_order': False")) return -1;
    const char *p = strstr(header, "'shape': (");
    if (!p) return -1;
    int n = 0;
    for (p += 10; *p && *p != ')' && n < 16;) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p) break;
        dims[n++] = v;
        p = end;
        while (*p == ',' || *p == ' ') p++;
    }
    return n;
}

/* An input file opened, its header read: its dims, and the file at its first element. */
struct input_file {
    FILE *f;
    int ndims;
    int64_t dims[16];
};

static struct input_file open_input(const char *path, int which) {
    struct input_file in = {fopen(path, "rb"), 0, {0}};
    if (!in.f) die("input '%s': cannot open", path);
    unsigned char pre[10];
    if (fread(pre, 1, 10, in.f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) die("input '%s': not a .npy file", path);
    unsigned long len = pre[8] | (unsigned long)pre[9] << 8;
    if (pre[6] >= 2) {
        unsigned char more[2];
        if (fread(more, 1, 2, in.f) != 2) die("input '%s': truncated header", path);
        len |= (unsigned long)more[0] << 16 | (unsigned long)more[1] << 24;
    }
    char *header = calloc(len + 1, 1);
    if (fread(header, 1, len, in.f) != len) die("input '%s': truncated header", path);
    const char *descr = npy_descr(@M@_input_types[which]);
    in.ndims = npy_dims(header, descr, in.dims);
    if (in.ndims < 0)
        die("input '%s': expected %s ('%s') in C order for input '%s'", path, type_name(@M@_input_types[which]), descr,
            @M@_input_names[which]);
    free(header);
    return in;
}

static void shape_text(char *text, size_t size, int ndims, const int64_t *dims) {
    text[0] = 0;
    for (int d = 0; d < ndims; d++)
        snprintf(text + strlen(text), size - strlen(text), "%s%lld", d ? ", " : "", (long long)dims[d]);
}

/* The input's elements, after checking its shape against the model's at the dims set now. */
static void *read_input(const char *path, int which, struct input_file *in) {
    int64_t want[16];
    int64_t count = @M@_input_shape(which, want);
    int same = in->ndims == @M@_input_ndims[which];
    for (int d = 0; same && d < in->ndims; d++) same = in->dims[d] == want[d];
    if (!same) {
        char got[200], expected[200];
        shape_text(got, sizeof got, in->ndims, in->dims);
        shape_text(expected, sizeof expected, @M@_input_ndims[which], want);
        die("input '%s': its shape (%s) differs from input '%s' (%s)", path, got, @M@_input_names[which], expected);
    }
    size_t size = element_bytes(@M@_input_types[which]);
    void *data = malloc((size_t)count * size + 1);
    if (fread(data, size, (size_t)count, in->f) != (size_t)count) die("input '%s': fewer elements than its shape says", path);
    if (@M@_input_types[which] == 9)
        for (int64_t i = 0; i < count; i++)
            if (((unsigned char *)data)[i] > 1) die("input '%s': element %lld is not a bool (0 or 1)", path, (long long)i);
    fclose(in->f);
    return data;
}

/* The dynamic dims' values, told by the inputs' shapes, set for the runs. */
static void set_dims_from(const struct input_file *in) {
    if (@M@_DIMS == 0) return;
    const int64_t *dims[@M@_INPUTS];
    int64_t values[@M@_DIMS + 1];
    for (int i = 0; i < @M@_INPUTS; i++) dims[i] = in[i].dims;
    if (@M@_infer_dims(dims, values) != 0 || @M@_set_dims(values) != 0) die("inputs: %s", @M@_last_error());
    printf("dims:");
    for (int j = 0; j < @M@_DIMS; j++) printf(" %s=%lld", @M@_dim_names[j], (long long)values[j]);
    printf(" (%s kernels)\n", @M@_specialization() >= 0 ? "specialized" : "shape-generic");
}

static void write_output(const char *path, const void *data, int which) {
    char header[256], shape[160] = "";
    int64_t dims[16];
    int64_t count = @M@_output_shape(which, dims);
    for (int d = 0; d < @M@_output_ndims[which]; d++)
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%lld,%s", (long long)dims[d],
                 d + 1 < @M@_output_ndims[which] ? " " : "");
    int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
                     npy_descr(@M@_output_types[which]), shape);
    int padded = (n + 11 + 63) / 64 * 64 - 10;
    memset(header + n, ' ', (size_t)(padded - n - 1));
    header[padded - 1] = '\n';
    FILE *f = fopen(path, "wb");
    if (!f) die("output '%s': cannot write", path);
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(padded & 255), (unsigned char)(padded >> 8)};
    fwrite(pre, 1, 10, f);
    fwrite(header, 1, (size_t)padded, f);
    fwrite(data, element_bytes(@M@_output_types[which]), (size_t)count, f);
    if (fclose(f) != 0) die("output '%s': cannot write", path);
}

/* This process image's peak resident memory in KiB: VmHWM, which starts afresh at exec, unlike
 * getrusage's ru_maxrss, which keeps the peak of the program that started us (opgen). */
static long peak_rss_kb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) kb = strtol(line + 6, 0, 10);
    if (f) fclose(f);
    if (kb >= 0) return kb;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Non-finite float outputs: an error with --finite (a kernel that goes wrong often shows as NaN),
 * else one warning line per output holding them (a model may compute them: log 0, sqrt -1). */
static void check_finite(void *const *outputs, int strict) {
    for (int o = 0; o < @M@_OUTPUTS; o++) {
        int64_t count = 0, first = -1, dims[16], elements = @M@_output_shape(o, dims);
        for (int64_t i = 0; @M@_output_types[o] == 1 && i < elements; i++)
            if (!isfinite(((const float *)outputs[o])[i]) && count++ == 0) first = i;
        if (count && strict) die("output '%s' element %lld is not finite", @M@_output_names[o], (long long)first);
        if (count)
            fprintf(stderr, "warning: output '%s' has %lld non-finite element(s), the first at %lld\n", @M@_output_names[o],
                    (long long)count, (long long)first);
    }
}
static void print_profile(const double *seconds, int runs) {
    double total = 0;
    for (int k = 0; k < @M@_KERNELS; k++) total += seconds[k];
    printf("profile: %d kernels, %.3f ms per run\n", @M@_KERNELS, 1e3 * total / runs);
    for (int k = 0; k < @M@_KERNELS; k++)
        printf("  %8.3f ms %5.1f%%  %s\n", 1e3 * seconds[k] / runs, 100 * seconds[k] / total, @M@_kernel_names[k]);
}

struct options {
    const char *weights, **inputs, **outputs;
    int n_inputs, n_outputs, threads, iterations, warmup, profile, calibrate, finite, level, window;
    double quiet_ratio;
};

static double ratio_arg(const char *flag, const char *value) {
    char *end;
    double v = value ? strtod(value, &end) : 0;
    if (!value || *end || !(v > 1 && v < 100)) die("%s '%s': expected a ratio above 1 (e.g. 1.1)", flag, value ? value : "");
    return v;
}

/* The bandwidth variants' settings (docs/design.md §7.6): a pinned level, the quiet ratio, the window. */
static void set_variants(const struct options *o) {
    if (o->level >= 0 && @M@_set_variant_level(o->level) != 0) die("--level: %s", @M@_last_error());
    if (o->quiet_ratio > 0 && @M@_set_variant_quiet_ratio(o->quiet_ratio) != 0) die("--quiet-ratio: %s", @M@_last_error());
    if (o->window > 0 && @M@_set_variant_window(o->window) != 0) die("--window: %s", @M@_last_error());
}

static void print_variants(void) {
    if (@M@_LEVELS < 2) return;
    printf("variants: level now %d (contention %g), drift %.3f, %lld switch(es); runs by level:", @M@_variant_level(),
           @M@_variant_levels[@M@_variant_level()], @M@_variant_drift(), (long long)@M@_variant_switches());
    for (int l = 0; l < @M@_LEVELS; l++) printf(" %g:%lld", @M@_variant_levels[l], (long long)@M@_variant_runs(l));
    printf("\n");
}

static int count_arg(const char *flag, const char *value, int least) {
    char *end;
    long v = value ? strtol(value, &end, 10) : 0;
    if (!value || *end || v < least || v > 1000000) die("%s '%s': expected a whole number >= %d", flag, value ? value : "", least);
    return (int)v;
}

static struct options parse(int argc, char **argv) {
    struct options o = {0};
    o.iterations = 10;
    o.warmup = 1;
    o.calibrate = 5;
    o.level = -1;
    o.inputs = calloc((size_t)@M@_INPUTS + 1, sizeof(char *));
    o.outputs = calloc((size_t)@M@_OUTPUTS + 1, sizeof(char *));
    if (argc < 2) die("usage: %s WEIGHTS --input FILE... [--output FILE...] [--threads N] [--iterations K] [--warmup W] [--calibrate R] [--level L] [--quiet-ratio R] [--window N] [--profile] [--finite]", argv[0]);
    o.weights = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : 0;
        if (!strcmp(argv[i], "--profile")) { o.profile = 1; continue; }
        if (!strcmp(argv[i], "--finite")) { o.finite = 1; continue; }
        if (!strcmp(argv[i], "--input") && value && o.n_inputs < @M@_INPUTS) o.inputs[o.n_inputs++] = value;
        else if (!strcmp(argv[i], "--input")) die("--input: the model has %d input(s)", @M@_INPUTS);
        else if (!strcmp(argv[i], "--output") && value && o.n_outputs < @M@_OUTPUTS) o.outputs[o.n_outputs++] = value;
        else if (!strcmp(argv[i], "--output")) die("--output: the model has %d output(s)", @M@_OUTPUTS);
        else if (!strcmp(argv[i], "--threads")) o.threads = count_arg(argv[i], value, 1);
        else if (!strcmp(argv[i], "--iterations")) o.iterations = count_arg(argv[i], value, 1);
        else if (!strcmp(argv[i], "--warmup")) o.warmup = count_arg(argv[i], value, 0);
        else if (!strcmp(argv[i], "--calibrate")) o.calibrate = count_arg(argv[i], value, 0);
        else if (!strcmp(argv[i], "--level")) o.level = count_arg(argv[i], value, 0);
        else if (!strcmp(argv[i], "--window")) o.window = count_arg(argv[i], value, 1);
        else if (!strcmp(argv[i], "--quiet-ratio")) o.quiet_ratio = ratio_arg(argv[i], value);
        else die("unknown argument '%s'", argv[i]);
        i++;
    }
    if (o.n_inputs != @M@_INPUTS) die("the model takes %d input(s) (%s first); %d given", @M@_INPUTS, @M@_input_names[0], o.n_inputs);
    return o;
}

int main(int argc, char **argv) {
    struct options o = parse(argc, argv);
    if (o.threads > 0) @M@_set_threads(o.threads);
    double t0 = now_s();
    if (@M@_load(o.weights) != 0) die("%s", @M@_last_error());
    set_variants(&o);
    printf("loaded: weights %.2f MiB, arena %.2f MiB, %d kernels in %.3f s\n", @M@_weight_bytes / 1048576.0,
           @M@_arena_bytes / 1048576.0, @M@_KERNELS, now_s() - t0);
    const void *inputs[@M@_INPUTS + 1];
    void *outputs[@M@_OUTPUTS];
    struct input_file files[@M@_INPUTS + 1];
    for (int i = 0; i < @M@_INPUTS; i++) files[i] = open_input(o.inputs[i], i);
    set_dims_from(files);
    for (int i = 0; i < @M@_INPUTS; i++) inputs[i] = read_input(o.inputs[i], i, &files[i]);
    for (int i = 0; i < @M@_OUTPUTS; i++) outputs[i] = malloc((size_t)@M@_output_elements[i] * element_bytes(@M@_output_types[i]) + 1);
    for (int w = 0; w < (o.warmup > 0 ? o.warmup : 1); w++)
        if (@M@_run(inputs, outputs) != 0) die("%s", @M@_last_error());
    check_finite(outputs, o.finite);
    if (o.calibrate > 0) {
        int chosen = @M@_calibrate(inputs, outputs, o.calibrate);
        if (chosen < 0) die("%s", @M@_last_error());
        printf("read ahead: the weights of %d kernel(s), chosen over %d runs with and %d without\n", chosen,
               o.calibrate, o.calibrate);
    }
    double *ms = calloc((size_t)o.iterations, sizeof(double)), sum = 0;
    double *seconds = calloc(@M@_KERNELS, sizeof(double));
    for (int r = 0; r < o.iterations; r++) {
        double s = now_s();
        if (@M@_run_profiled(inputs, outputs, o.profile ? seconds : 0) != 0) die("%s", @M@_last_error());
        ms[r] = 1e3 * (now_s() - s);
        sum += ms[r];
    }
    qsort(ms, (size_t)o.iterations, sizeof(double), by_value);
    char threads[32] = "all cores";
    if (o.threads > 0) snprintf(threads, sizeof threads, "%d", o.threads);
    printf("latency: p50 %.3f ms, min %.3f ms, mean %.3f ms over %d runs, threads %s\n", ms[o.iterations / 2], ms[0],
           sum / o.iterations, o.iterations, threads);
    if (o.profile) print_profile(seconds, o.iterations);
    print_variants();
    for (int i = 0; i < o.n_outputs; i++) write_output(o.outputs[i], outputs[i], i);
    printf("peak RSS: %.1f MiB\n", peak_rss_kb() / 1024.0);
    @M@_release();
    return 0;
}
)C";

}  // namespace

std::string runner_source(const std::string &name) {
    return "/* Generated by `opgen compile`: loads " + name + ", checks it, runs and times it. */\n" +
           model_declarations(name) + with_model_name(runner_text, name);
}

}  // namespace opgen::onnx_import
