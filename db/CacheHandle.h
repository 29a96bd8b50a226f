// The C API's handle (opgen_cache.h) as C++ sees it, so that a layer above db/ can attach its
// LookupExtension to a handle (tuner/Predict.cpp). Not installed for C users.
#ifndef OPGEN_DB_CACHE_HANDLE_H
#define OPGEN_DB_CACHE_HANDLE_H

#include <memory>
#include <string>

#include "db/Lookup.h"
#include "db/opgen_cache.h"

struct opgen_cache {
    std::unique_ptr<opgen::db::KernelLookup> lookup;
    opgen::db::LookupAnswer last; // owns the strings of the last answer
    std::string error;
};

#endif
