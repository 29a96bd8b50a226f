// Where op files live and how they are found: the bundled `ops/` folder, then every folder in
// OPGEN_OPS_PATH (colon-separated), then folders given with --ops-dir. A later folder's op of the
// same name wins, so a user can override a bundled op without recompiling.
#ifndef OPGEN_CORE_OP_LIBRARY_H
#define OPGEN_CORE_OP_LIBRARY_H

#include "core/ComputeDef.h"

#include <string>
#include <vector>

namespace opgen {

struct OpLibrary {
    std::vector<std::string> dirs;  // searched last to first

    // The bundled folder plus OPGEN_OPS_PATH plus `extra`.
    static OpLibrary standard(const std::vector<std::string> &extra = {});
    // Sorted op names (file stems of *.op).
    std::vector<std::string> list() const;
    // The path of op `name`; UserError naming the searched folders when there is none.
    std::string find(const std::string &name) const;
    // Reads and parses op `name`.
    ComputeDef load(const std::string &name) const;
};

// Reads and parses an op file by path; UserError when it cannot be read.
ComputeDef load_op_file(const std::string &path);

std::string bundled_ops_dir();

}  // namespace opgen

#endif
