// The C API's handle (opgen_cache.h) as C++ sees it, so that a layer above runtime/ can attach its
// LookupExtension to a handle (tuner/Predict.cpp). Not installed for C users.
#ifndef OPGEN_RUNTIME_CACHE_HANDLE_H
#define OPGEN_RUNTIME_CACHE_HANDLE_H

#include <map>
#include <memory>
#include <string>

#include "runtime/Lookup.h"
#include "runtime/opgen_cache.h"

// A kernel handed to C: what the lookup loaded, kept by its handle until opgen_cache_close.
struct opgen_cache_kernel {
    std::shared_ptr<const opgen::db::LoadedKernel> loaded;
};

struct opgen_cache {
    std::unique_ptr<opgen::db::KernelLookup> lookup;
    // By the loaded kernel, so one kernel asked for again is the same pointer.
    std::map<const opgen::db::LoadedKernel *, std::unique_ptr<opgen_cache_kernel>> kernels;
    opgen::db::LookupAnswer last; // owns the strings of the last answer
    std::string error;
};

#endif
