#include "onnx/IsolatedInference.h"

#include "base/Error.h"

#include <onnx/shape_inference/implementation.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

namespace opgen::onnx_import {

namespace {

// The child's answer: 'O' and what inference adds to the graph (its value_info and its outputs'
// types, as a GraphProto of just those: the weights stay in the parent), or 'E' and the message.
std::string infer_in_child(onnx::ModelProto &model) {
    try {
        onnx::ShapeInferenceOptions options(false, 1, true);
        onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
        onnx::GraphProto inferred;
        *inferred.mutable_value_info() = model.graph().value_info();
        *inferred.mutable_output() = model.graph().output();
        std::string bytes;
        if (!inferred.SerializeToString(&bytes)) return "Ethe inferred shapes could not be serialized";
        return "O" + bytes;
    } catch (const std::exception &e) {
        return std::string("E") + e.what();
    }
}

void write_all(int fd, const std::string &bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
        ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n <= 0) return;
        done += size_t(n);
    }
}

std::string read_all(int fd) {
    std::string bytes;
    char buffer[1 << 16];
    while (true) {
        ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n > 0) {
            bytes.append(buffer, size_t(n));
        } else if (n == 0 || errno != EINTR) {
            return bytes;
        }
    }
}

std::string trimmed(std::string msg) {
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == '.')) msg.pop_back();
    return msg;
}

}  // namespace

void infer_shapes_isolated(onnx::ModelProto &model, const std::string &path) {
    int fds[2];
    user_check(::pipe(fds) == 0) << "model '" << path << "': cannot start shape inference: " << std::strerror(errno);
    pid_t child = ::fork();
    if (child == 0) {
        // A crash in the child ends the child, plainly: handlers the process installed (a
        // sanitizer's or a fuzzer's) would otherwise report it as the whole program's.
        for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, SIG_DFL);
        ::close(fds[0]);
        write_all(fds[1], infer_in_child(model));
        ::_exit(0);
    }
    ::close(fds[1]);
    if (child < 0) {
        ::close(fds[0]);
        user_check(false) << "model '" << path << "': cannot start shape inference: " << std::strerror(errno);
    }
    std::string answer = read_all(fds[0]);
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    user_check(!WIFSIGNALED(status))
        << "model '" << path << "': ONNX's shape inference crashed on it (" << strsignal(WTERMSIG(status))
        << "); the file is malformed";
    user_check(WIFEXITED(status) && WEXITSTATUS(status) == 0 && !answer.empty())
        << "model '" << path << "': ONNX's shape inference died without an answer";
    user_check(answer[0] == 'O') << "model '" << path << "': shape inference failed: " << trimmed(answer.substr(1));
    onnx::GraphProto inferred;
    user_check(inferred.ParseFromString(answer.substr(1)) && inferred.output_size() == model.graph().output_size())
        << "model '" << path << "': the inferred shapes could not be read back";
    *model.mutable_graph()->mutable_value_info() = std::move(*inferred.mutable_value_info());
    *model.mutable_graph()->mutable_output() = std::move(*inferred.mutable_output());
}

}  // namespace opgen::onnx_import
