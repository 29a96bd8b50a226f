// Build-time tool: writes the Halide runtime for this host's architecture and operating system
// (no CPU features: the runtime's code must run wherever its kernels may) as one object file,
// which the lookup library opgen_cache links in whole, so that the kernels it loads from the cache
// (compiled with Target::NoRuntime) find their halide_* functions. Usage: opgen-runtime-gen OUT.o
#include <Halide.h>

#include <cstdio>

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: opgen-runtime-gen OUT.o\n");
        return 2;
    }
    Halide::Target host = Halide::get_host_target();
    Halide::Target plain(host.os, host.arch, host.bits);
    Halide::compile_standalone_runtime(argv[1], plain);
    return 0;
}
