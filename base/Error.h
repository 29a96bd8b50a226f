// Errors that are the user's fault (a bad op file, shape, manifest or flag) and errors that are
// ours (a broken invariant). Following Halide's user_assert / internal_assert split: the command
// prints a UserError as one `error: ...` line and exits non-zero; an InternalError is a bug.
#ifndef OPGEN_BASE_ERROR_H
#define OPGEN_BASE_ERROR_H

#include <sstream>
#include <stdexcept>
#include <string>

namespace opgen {

// A place in a source file; line and column are 1-based, 0 when unknown.
struct SourceLoc {
    std::string file;
    int line = 0;
    int col = 0;

    // "file:line:col", or as much of it as is known.
    std::string str() const;
};

class UserError : public std::runtime_error {
public:
    explicit UserError(const std::string &message) : std::runtime_error(message) {}
    UserError(const SourceLoc &loc, const std::string &message)
        : std::runtime_error(loc.str().empty() ? message : loc.str() + ": " + message) {}
};

class InternalError : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

namespace detail {
// Collects a message with operator<< and throws when it goes out of scope, so call sites read
// `user_check(cond, loc) << "op '" << name << "': ..."`.
template <typename Error> class Thrower {
public:
    explicit Thrower(SourceLoc loc = {}) : loc_(std::move(loc)) {}
    Thrower(const Thrower &) = delete;
    template <typename T> Thrower &operator<<(const T &value) {
        out_ << value;
        return *this;
    }
    [[noreturn]] ~Thrower() noexcept(false) {
        if constexpr (std::is_same_v<Error, UserError>) {
            throw UserError(loc_, out_.str());
        } else {
            throw Error(out_.str());
        }
    }

private:
    SourceLoc loc_;
    std::ostringstream out_;
};
} // namespace detail

} // namespace opgen

// user_check(cond[, loc]) << "message": raise a UserError when cond is false.
#define user_check(cond, ...)                                                                      \
    if (cond) {                                                                                    \
    } else                                                                                         \
        ::opgen::detail::Thrower<::opgen::UserError>(__VA_ARGS__)

#define internal_check(cond)                                                                       \
    if (cond) {                                                                                    \
    } else                                                                                         \
        ::opgen::detail::Thrower<::opgen::InternalError>() << __FILE__ << ":" << __LINE__ << ": "

#endif
