#include "codegen/CompiledCode.h"

#include "runtime/HostCpu.h"
#include "base/Error.h"
#include "core/AmxLowering.h"
#include "core/Kernel.h"
#include "core/LlvmTarget.h"
#include "core/Lower.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace opgen {

namespace fs = std::filesystem;

namespace {

// Runs `argv` with its output in `log`; returns its exit status (-1 when it could not start).
int run_command(const std::vector<std::string> &argv, const std::string &log) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::vector<char *> args;
    for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return -1;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_text(const std::string &path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<uint8_t> read_bytes(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

ScratchFolder::ScratchFolder() {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/opgen-code-XXXXXX";
    std::vector<char> text(pattern.begin(), pattern.end());
    text.push_back('\0');
    user_check(::mkdtemp(text.data()) != nullptr)
        << "cannot create a folder under '" << (tmp && *tmp ? tmp : "/tmp") << "' to compile kernel code";
    path_ = text.data();
}

ScratchFolder::~ScratchFolder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

std::string c_compiler() {
    const char *cc = std::getenv("OPGEN_CC");
    return cc && *cc ? cc : "cc";
}

void run_build_tool(const std::vector<std::string> &command, const std::string &log) {
    int status = run_command(command, log);
    std::string joined;
    for (const std::string &c : command) joined += (joined.empty() ? "" : " ") + c;
    user_check(status == 0) << "'" << joined << "' "
                            << (status < 0 ? "could not run" : "exited with " + std::to_string(status))
                            << ": " << read_text(log);
}

std::string compile_scheduled_object(LoweredOp &op, const std::string &what, const Target &target,
                                     const std::string &function, const std::string &path) {
    Halide::Target ht = halide_target_of(target, *op.def).with_feature(Halide::Target::NoRuntime);
    std::vector<Halide::Argument> args;
    for (auto &param : op.params) args.emplace_back(param);
    try {
        Halide::Pipeline pipeline(op.output);
        add_amx_lowering(pipeline, op);
        if (needs_fp16_override(ht)) {
            compile_without_fp16(pipeline.compile_to_module(args, function, ht), path);
        } else {
            pipeline.compile_to_object(path, args, function, ht);
        }
    } catch (const Halide::Error &e) {
        throw UserError(what + ": Halide cannot compile code for target '" + ht.to_string() + "': " + e.what());
    }
    return ht.to_string();
}

std::string compile_kernel_object(const ComputeDef &def, const BoundShape &shape, const SchedulePoint &point,
                                  const Target &target, const std::string &function, const std::string &path) {
    LoweredOp op = lower_to_halide(def, shape);
    apply_schedule(op, point, target);
    return compile_scheduled_object(op, "op '" + def.name + "' at " + shape.canonical, target, function, path);
}

std::string code_function_name(const ComputeDef &def) {
    std::string name = "opgen_" + def.name;
    for (char &c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    return name;
}

std::string code_signature(const ComputeDef &def, const BoundShape &shape) {
    std::vector<db::CodeArgument> arguments;
    for (const TensorDecl *t : def.inputs()) {
        arguments.push_back({t->name, false, dtype_name(t->dtype), shape.dims.at(t->name)});
    }
    const TensorDecl &out = def.output();
    arguments.push_back({out.name, true, dtype_name(out.dtype), shape.dims.at(out.name)});
    return db::signature_text(arguments);
}

std::string required_cpu_features(const Halide::Target &halide_target, bool amx_tile) {
    std::string features;
    std::stringstream parts(halide_target.to_string());
    std::string part;
    const std::vector<std::string> &checkable = db::checkable_cpu_features();
    while (std::getline(parts, part, '-')) {
        if (std::find(checkable.begin(), checkable.end(), part) != checkable.end()) {
            features += (features.empty() ? "" : ",") + part;
        }
    }
    if (amx_tile) features += (features.empty() ? "" : ",") + std::string("amx_int8");
    return features;
}

void link_kernel_code(const std::string &object, const std::string &halide_target, db::KernelCode &code,
                      bool amx_tile) {
    ScratchFolder scratch;
    std::string library = scratch.file("kernel.so");
    code.halide_target = halide_target;
    code.cpu_features = required_cpu_features(Halide::Target(code.halide_target), amx_tile);
    // -Bsymbolic: the kernel's calls to its own functions never bind to another kernel's.
    run_build_tool({c_compiler(), "-shared", "-Wl,-Bsymbolic", "-o", library, object}, scratch.file("link.log"));
    code.bytes = read_bytes(library);
    code.size = int64_t(code.bytes.size());
    code.digest = db::code_digest(code);
}

void build_kernel_code(LoweredOp &op, const std::string &what, const Target &target, db::KernelCode &code) {
    ScratchFolder scratch;
    std::string object = scratch.file("kernel.o");
    link_kernel_code(object, compile_scheduled_object(op, what, target, code.function, object), code, op.amx_tile);
}

db::KernelCode compile_kernel_code(const ComputeDef &def, const BoundShape &shape,
                                   const SchedulePoint &point, const Target &target,
                                   const std::string &schedule_json) {
    db::KernelCode code;
    code.halide_version = OPGEN_HALIDE_VERSION;
    code.function = code_function_name(def);
    code.signature = code_signature(def, shape);
    code.schedule_json = schedule_json;
    LoweredOp op = lower_to_halide(def, shape);
    apply_schedule(op, point, target);
    build_kernel_code(op, "op '" + def.name + "' at " + shape.canonical, target, code);
    return code;
}

}  // namespace opgen
