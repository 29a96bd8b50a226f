// The C++ side of the consumer: writes one kernel into a new cache with the cache API, then asks
// for it through the C++ lookup and the C API.
#include <store/KernelCache.h>
#include <runtime/Lookup.h>

#include <cstdio>

extern "C" int lookup_in_c(const char *path, const char *shape);

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: consumer NEW.db\n");
        return 2;
    }
    opgen::db::KernelRecord record;
    record.key.op_name = "matmul";
    record.key.op_hash = "0123456789abcdef";
    record.key.shape = "K=64,M=64,N=64";
    record.key.target = "x86-64-avx512:t1";
    record.key.halide_version = "14.0.0";
    record.key.tuner_version = "consumer";
    record.schedule_json = "{}";
    record.time_ms = 0.25;
    record.verified = true;
    opgen::db::open_kernel_cache(argv[1])->put_kernel(record);

    auto lookup = opgen::db::open_kernel_lookup(argv[1]);
    opgen::db::LookupRequest request;
    request.op_name = "matmul";
    request.shape = "N=64,M=64,K=64";
    request.target = "x86-64-avx512:t1";
    opgen::db::LookupAnswer answer = lookup->find(request);
    std::printf("c++: %s %s\n", opgen::db::answer_kind_name(answer.kind), answer.kernel.key.shape.c_str());
    return lookup_in_c(argv[1], "M=64,N=64,K=64") || lookup_in_c(argv[1], "M=65,N=64,K=64");
}
