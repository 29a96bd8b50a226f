#include "core/Parser.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

namespace opgen {

namespace {

// Deeper expressions are certainly a mistake, and the parser and every later pass over an
// expression recurse: the limits keep a hostile file from overflowing the stack. Nesting counts
// brackets, calls and unary operators; depth counts the operations on the longest path through the
// expression tree (a chain `a + b + c` is as deep as it is long).
constexpr int max_nesting = 200;
constexpr int max_depth = 1000;
constexpr int64_t max_int_literal = INT32_MAX; // Halide's indices and constants are 32-bit

enum class Tok { Ident, Int, Float, Punct, Newline, End };

struct Token {
    Tok kind;
    std::string text;
    SourceLoc loc;
};

// A character for an error message: itself when printable, else its byte value.
std::string describe_char(char c) {
    if (std::isprint(static_cast<unsigned char>(c))) {
        return "'" + std::string(1, c) + "'";
    }
    char buf[16];
    std::snprintf(buf, sizeof(buf), "byte 0x%02x", static_cast<unsigned char>(c));
    return buf;
}

bool is_digit(char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// Splits the text into tokens. Newlines inside brackets are dropped so that long statements can
// wrap; a newline outside brackets ends a declaration.
class Lexer {
public:
    Lexer(const std::string &text, const std::string &file) : text_(text), file_(file) {}

    // The tokens, ending in a newline and End; UserError at the first character that lexes wrong.
    std::vector<Token> run() {
        while (i_ < text_.size()) {
            char c = text_[i_];
            if (c == '#') {
                skip_comment();
            } else if (c == '\n') {
                newline();
            } else if (c == ' ' || c == '\t' || c == '\r') {
                advance(1);
            } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
                identifier();
            } else if (is_digit(c) ||
                       (c == '.' && i_ + 1 < text_.size() && is_digit(text_[i_ + 1]))) {
                number();
            } else if (!two_char_operator()) {
                one_char_punct(c);
            }
        }
        // An unclosed bracket swallows the rest of the file into one line; say where it opened.
        user_check(open_.empty(), open_.empty() ? SourceLoc{} : open_.back().loc)
            << "'" << (open_.empty() ? "" : open_.back().text) << "' is never closed";
        if (out_.empty() || out_.back().kind != Tok::Newline) {
            out_.push_back({Tok::Newline, "\\n", here()});
        }
        out_.push_back({Tok::End, "end of file", here()});
        return std::move(out_);
    }

private:
    const std::string &text_;
    const std::string &file_;
    std::vector<Token> out_;
    std::vector<Token> open_; // brackets not yet closed, innermost last
    size_t i_ = 0;
    int line_ = 1, col_ = 1;

    SourceLoc here() const { return SourceLoc{file_, line_, col_}; }

    void advance(size_t n) {
        for (size_t k = 0; k < n; k++, i_++) {
            if (text_[i_] == '\n') {
                line_++;
                col_ = 1;
            } else {
                col_++;
            }
        }
    }

    void skip_comment() {
        while (i_ < text_.size() && text_[i_] != '\n')
            advance(1);
    }

    void newline() {
        if (open_.empty() && (out_.empty() || out_.back().kind != Tok::Newline)) {
            out_.push_back({Tok::Newline, "\\n", here()});
        }
        advance(1);
    }

    // A name; UserError when it holds "__".
    void identifier() {
        SourceLoc loc = here();
        size_t j = i_;
        while (j < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[j])) || text_[j] == '_')) {
            j++;
        }
        std::string word = text_.substr(i_, j - i_);
        // Schedules name the loops they add <var>__o, <var>__r, ...; a user name with "__"
        // could collide with them.
        user_check(word.find("__") == std::string::npos, loc)
            << "name '" << word
            << "' contains '__', which is reserved for generated loop variables";
        out_.push_back({Tok::Ident, word, loc});
        advance(j - i_);
    }

    // Past the digits from `j`.
    size_t digits_end(size_t j) const {
        while (j < text_.size() && is_digit(text_[j]))
            j++;
        return j;
    }

    // An integer, or a float with a fraction, an exponent or both.
    void number() {
        SourceLoc loc = here();
        bool is_float = false;
        size_t j = digits_end(i_);
        if (j < text_.size() && text_[j] == '.') {
            is_float = true;
            j = digits_end(j + 1);
        }
        if (j < text_.size() && (text_[j] == 'e' || text_[j] == 'E')) {
            size_t k = j + 1;
            if (k < text_.size() && (text_[k] == '+' || text_[k] == '-'))
                k++;
            if (k < text_.size() && is_digit(text_[k])) {
                is_float = true;
                j = digits_end(k);
            }
        }
        // "2x" or "1.5e" would otherwise lex as a number and a name, and fail later with a
        // message about the name.
        user_check(j >= text_.size() || !(std::isalpha(static_cast<unsigned char>(text_[j])) ||
                                          text_[j] == '_' || text_[j] == '.'),
                   loc)
            << "malformed number '" << text_.substr(i_, j - i_ + 1) << "'";
        out_.push_back({is_float ? Tok::Float : Tok::Int, text_.substr(i_, j - i_), loc});
        advance(j - i_);
    }

    // Lexes "<=", ">=", "==", "!=", "&&" or "||" when one starts here.
    bool two_char_operator() {
        static const char *two[] = {"<=", ">=", "==", "!=", "&&", "||"};
        for (const char *t : two) {
            if (text_.compare(i_, 2, t) == 0) {
                out_.push_back({Tok::Punct, t, here()});
                advance(2);
                return true;
            }
        }
        return false;
    }

    // A bracket (kept matched) or a one-character operator; UserError for any other character.
    void one_char_punct(char c) {
        SourceLoc loc = here();
        if (std::string("+-*/()[],:=<>!").find(c) == std::string::npos) {
            user_check(c != '&' && c != '|', loc)
                << "unexpected character '" << c << "' (did you mean '" << c << c << "'?)";
            user_check(false, loc) << "unexpected character " << describe_char(c);
        }
        Token tok{Tok::Punct, std::string(1, c), loc};
        if (c == '(' || c == '[')
            open_.push_back(tok);
        // A closer without an opener is left to the parser, which says what it expected.
        if ((c == ')' || c == ']') && !open_.empty()) {
            const Token &o = open_.back();
            user_check(o.text == (c == ')' ? "(" : "["), loc)
                << "'" << c << "' does not match the '" << o.text << "' at line " << o.loc.line
                << ", column " << o.loc.col;
            open_.pop_back();
        }
        out_.push_back(tok);
        advance(1);
    }
};

std::vector<Token> lex(const std::string &text, const std::string &file) {
    return Lexer(text, file).run();
}

// The functions in the order messages list them: the math, then a cast per type of the dtype
// table (base/DType.h), each name with its arity.
const std::vector<std::pair<std::string, int>> &function_table() {
    static const std::vector<std::pair<std::string, int>> f = [] {
        std::vector<std::pair<std::string, int>> t = {{"exp", 1}, {"log", 1}, {"tanh", 1}, {"sqrt", 1}, {"erf", 1},
                                                      {"abs", 1}, {"round", 1}, {"max", 2}, {"min", 2}, {"select", 3},
                                                      {"sin", 1}, {"cos", 1}};
        for (const DTypeInfo &d : dtype_table()) t.push_back({d.name, 1});
        return t;
    }();
    return f;
}

const std::map<std::string, int> &functions() {
    // name -> arity
    static const std::map<std::string, int> f(function_table().begin(), function_table().end());
    return f;
}

const char *function_list() {
    static const std::string list = [] {
        std::string s;
        for (const auto &[name, arity] : function_table()) s += (s.empty() ? "" : ", ") + name;
        return s;
    }();
    return list.c_str();
}

bool is_keyword(const std::string &s) {
    static const std::set<std::string> k = {"op",     "param", "attr", "let",      "input",
                                            "output", "local", "sum",  "zero_pad", "view"};
    return k.count(s) > 0;
}

bool is_reduce_word(const std::string &s) {
    return s == "sum" || s == "max" || s == "min";
}

class Parser {
public:
    Parser(const std::string &text, const std::string &file) : toks_(lex(text, file)) {
        def_.filename = file;
        def_.source = text;
        // The doc is the block of comment lines before `op`.
        size_t pos = 0;
        while (pos < text.size()) {
            size_t end = text.find('\n', pos);
            std::string line =
                text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
            size_t first = line.find_first_not_of(" \t\r");
            if (first != std::string::npos && line[first] == '#') {
                std::string body = line.substr(first + 1);
                if (!body.empty() && body[0] == ' ')
                    body.erase(0, 1);
                while (!body.empty() && body.back() == '\r')
                    body.pop_back();
                def_.doc += (def_.doc.empty() ? "" : "\n") + body;
            } else if (first != std::string::npos) {
                break;
            }
            if (end == std::string::npos)
                break;
            pos = end + 1;
        }
    }

    ComputeDef parse() {
        skip_newlines();
        user_check(peek().kind == Tok::Ident && peek().text == "op", peek().loc)
            << "expected 'op <name>' to start the file, found " << describe(peek());
        next();
        Token name = expect(Tok::Ident, "an op name");
        user_check(!is_keyword(name.text), name.loc)
            << "'" << name.text << "' is a keyword and cannot name an op";
        def_.name = name.text;
        end_of_line();
        while (peek().kind != Tok::End) {
            skip_newlines();
            if (peek().kind == Tok::End)
                break;
            declaration();
        }
        check_whole();
        return std::move(def_);
    }

private:
    std::vector<Token> toks_;
    size_t pos_ = 0;
    ComputeDef def_;
    std::set<std::string> names_; // every declared top-level name
    int depth_ = 0;               // expression nesting, bounded by max_nesting
    int tree_depth_ = 0;          // depth of the expression last returned by expr/unary/primary

    const Token &peek(size_t ahead = 0) const {
        return toks_[std::min(pos_ + ahead, toks_.size() - 1)];
    }
    Token next() { return toks_[pos_ < toks_.size() - 1 ? pos_++ : pos_]; }
    bool is_punct(const std::string &p, size_t ahead = 0) const {
        return peek(ahead).kind == Tok::Punct && peek(ahead).text == p;
    }
    bool accept_comma() {
        if (!is_punct(","))
            return false;
        next();
        return true;
    }
    void skip_newlines() {
        while (peek().kind == Tok::Newline)
            pos_++;
    }
    static std::string describe(const Token &t) {
        if (t.kind == Tok::Newline)
            return "end of line";
        if (t.kind == Tok::End)
            return "end of file";
        return "'" + t.text + "'";
    }
    Token expect(Tok kind, const std::string &what) {
        user_check(peek().kind == kind, peek().loc)
            << "expected " << what << ", found " << describe(peek());
        return next();
    }
    void expect_punct(const std::string &p) {
        user_check(is_punct(p), peek().loc) << "expected '" << p << "', found " << describe(peek());
        next();
    }
    void end_of_line() {
        user_check(peek().kind == Tok::Newline || peek().kind == Tok::End, peek().loc)
            << "expected end of line, found " << describe(peek());
        skip_newlines();
    }
    void declare(const Token &t) {
        user_check(!is_keyword(t.text), t.loc)
            << "'" << t.text << "' is a keyword and cannot name a declaration";
        user_check(functions().count(t.text) == 0, t.loc)
            << "'" << t.text << "' is a built-in function and cannot name a declaration";
        user_check(names_.insert(t.text).second, t.loc) << "'" << t.text << "' is declared twice";
    }

    // An integer literal, optionally negative, within Halide's 32-bit range.
    int64_t int_value(const Token &t, bool negative) {
        errno = 0;
        long long v = std::strtoll(t.text.c_str(), nullptr, 10);
        user_check(errno == 0 && v <= max_int_literal, t.loc)
            << "integer " << (negative ? "-" : "") << t.text << " is too large (the limit is "
            << max_int_literal << ")";
        return negative ? -v : v;
    }

    int64_t parse_int_literal() {
        bool neg = false;
        if (is_punct("-")) {
            next();
            neg = true;
        }
        user_check(peek().kind == Tok::Int, peek().loc)
            << "expected an integer, found " << describe(peek());
        return int_value(next(), neg);
    }

    // A declaration (param, attr, let, input, output, local) or a statement, to its end of line.
    void declaration() {
        const Token &t = peek();
        user_check(t.kind == Tok::Ident, t.loc)
            << "expected a declaration or statement, found " << describe(t);
        if (t.text == "param" || t.text == "attr") {
            param_declaration();
            return;
        }
        if (t.text == "let") {
            let_declaration();
            return;
        }
        if (t.text == "view") {
            view_declaration();
            return;
        }
        if (t.text == "input" || t.text == "output" || t.text == "local") {
            tensor_declaration();
            return;
        }
        user_check(t.text != "op", t.loc)
            << "a file holds one op; found a second 'op' (put each op in its own file)";
        user_check(!is_keyword(t.text), t.loc)
            << "expected a declaration or statement, found keyword '" << t.text << "'";
        statement();
    }

    // param|attr NAME [= INT] {, NAME [= INT]}: a parameter's default is positive; an attribute
    // needs one, zero or positive.
    void param_declaration() {
        bool is_attr = peek().text == "attr";
        next();
        do {
            Token name = expect(Tok::Ident, is_attr ? "an attribute name" : "a parameter name");
            declare(name);
            ParamDecl p{name.text, std::nullopt, is_attr, name.loc};
            if (is_punct("=")) {
                next();
                SourceLoc at = peek().loc;
                p.default_value = parse_int_literal();
                user_check(is_attr || *p.default_value > 0, at)
                    << "parameter '" << name.text << "' has default " << *p.default_value
                    << "; a parameter is a size and must be positive";
                user_check(!is_attr || *p.default_value >= 0, at)
                    << "attribute '" << name.text << "' has default " << *p.default_value
                    << "; an attribute must be zero or positive";
            }
            user_check(!is_attr || p.default_value, name.loc)
                << "attribute '" << name.text << "' needs a default value (attr " << name.text
                << " = 1)";
            def_.params.push_back(p);
        } while (accept_comma());
        end_of_line();
    }

    // let NAME = size expression
    void let_declaration() {
        next();
        Token name = expect(Tok::Ident, "a name");
        expect_punct("=");
        Expr value = expr({});
        check_size_expr(value, "let '" + name.text + "'");
        declare(name);
        def_.lets.push_back({name.text, value, name.loc});
        end_of_line();
    }

    // view CONDITION: NAME = SIZE {, NAME = SIZE} (ViewDecl). The condition compares parameters and
    // attributes (== != < <= > >=, joined by && and ||); each NAME is a parameter set once, each SIZE
    // an integer expression of parameters and attributes. Lets are not allowed in either: they
    // follow from the shape the view makes.
    void view_declaration() {
        ViewDecl v;
        v.loc = next().loc;
        v.when = expr({});
        check_view_condition(v.when);
        expect_punct(":");
        do {
            Token name = expect(Tok::Ident, "a parameter for the view to set");
            const ParamDecl *p = def_.find_param(name.text);
            user_check(p && !p->is_attr, name.loc)
                << "a view sets parameters; '" << name.text << "' is "
                << (p ? "an attribute" : "not a parameter");
            for (const auto &[set, value] : v.set)
                user_check(set != name.text, name.loc) << "the view sets '" << name.text << "' twice";
            expect_punct("=");
            Expr value = expr({});
            check_size_expr(value, "the view's value of '" + name.text + "'");
            check_no_lets(value);
            v.set.push_back({name.text, value});
        } while (accept_comma());
        def_.views.push_back(v);
        end_of_line();
    }

    void check_view_condition(const Expr &e) {
        static const std::set<std::string> compare = {"==", "!=", "<", "<=", ">", ">="};
        bool logic = e->kind == ExprKind::Binary && (e->name == "&&" || e->name == "||");
        user_check(logic || (e->kind == ExprKind::Binary && compare.count(e->name)), start_loc(e))
            << "a view's condition compares parameters (==, !=, <, <=, >, >=, joined by && and ||), "
               "found '" << to_string(e) << "'";
        for (const auto &a : e->args) {
            if (logic) {
                check_view_condition(a);
                continue;
            }
            check_size_expr(a, "the view's condition");
            check_no_lets(a);
        }
    }

    void check_no_lets(const Expr &e) {
        user_check(e->kind != ExprKind::Param || def_.find_param(e->name), e->loc)
            << "a view uses parameters and attributes, not let '" << e->name
            << "' (lets follow from the shape the view makes)";
        for (const auto &a : e->args)
            check_no_lets(a);
    }

    // input|output|local NAME : TYPE [dims] [zero_pad]
    void tensor_declaration() {
        TensorDecl d;
        d.role = peek().text == "input"    ? TensorRole::Input
                 : peek().text == "output" ? TensorRole::Output
                                           : TensorRole::Local;
        next();
        Token name = expect(Tok::Ident, "a tensor name");
        declare(name);
        d.name = name.text;
        d.loc = name.loc;
        expect_punct(":");
        d.dtype = element_type(expect(Tok::Ident, "a type (" + dtype_names_listed() + ")"));
        expect_punct("[");
        do {
            Expr dim = expr({});
            check_size_expr(dim, "dimension of '" + d.name + "'");
            d.dims.push_back(dim);
        } while (accept_comma());
        expect_punct("]");
        if (peek().kind == Tok::Ident && peek().text == "zero_pad") {
            user_check(d.role == TensorRole::Input, peek().loc)
                << "only inputs can be zero_pad; '" << d.name << "' is "
                << (d.role == TensorRole::Output ? "an output" : "a local");
            next();
            d.zero_pad = true;
        }
        def_.tensors.push_back(d);
        end_of_line();
    }

    // A type of the dtype table (base/DType.h); UserError for any other name.
    static DType element_type(const Token &type) {
        std::optional<DType> t = dtype_from_name(type.text);
        user_check(t.has_value(), type.loc)
            << "unknown type '" << type.text << "' (expected " << dtype_names_listed() << ")";
        return t.value_or(DType::F32);
    }

    // A size expression (dimension, let, reduction extent) may use only integers, parameters and
    // lets, with + - * / and max/min.
    void check_size_expr(const Expr &e, const std::string &what) {
        switch (e->kind) {
        case ExprKind::IntConst:
        case ExprKind::Param:
            return;
        case ExprKind::Binary:
            user_check(e->name == "+" || e->name == "-" || e->name == "*" || e->name == "/", e->loc)
                << what << ": operator '" << e->name << "' is not allowed in a size";
            check_size_expr(e->args[0], what);
            check_size_expr(e->args[1], what);
            return;
        case ExprKind::Unary:
            user_check(e->name == "-", e->loc)
                << what << ": operator '" << e->name << "' is not allowed in a size";
            check_size_expr(e->args[0], what);
            return;
        case ExprKind::Call:
            user_check(e->name == "max" || e->name == "min", e->loc)
                << what << ": '" << e->name << "' is not allowed in a size (only max and min)";
            for (const auto &a : e->args)
                check_size_expr(a, what);
            return;
        default:
            user_check(false, e->loc)
                << what << " must be an integer expression of parameters, found '" << to_string(e)
                << "'";
        }
    }

    void statement() {
        Token name = next();
        const TensorDecl *t = def_.find_tensor(name.text);
        user_check(t, name.loc)
            << "unknown tensor '" << name.text
            << "' (declare it with input, output or local before its statement)";
        user_check(t->role != TensorRole::Input, name.loc)
            << "input '" << name.text << "' cannot be assigned";
        user_check(!def_.statement_for(name.text), name.loc)
            << "tensor '" << name.text << "' is defined twice";
        Statement s;
        s.tensor = name.text;
        s.loc = name.loc;
        expect_punct("[");
        std::set<std::string> vars;
        do {
            Token v = expect(Tok::Ident, "an index variable");
            user_check(!names_.count(v.text) && !is_keyword(v.text) && !functions().count(v.text),
                       v.loc)
                << "index variable '" << v.text
                << "' hides a declaration or built-in of the same name";
            user_check(vars.insert(v.text).second, v.loc)
                << "index variable '" << v.text << "' appears twice on the left-hand side";
            s.vars.push_back(v.text);
        } while (accept_comma());
        expect_punct("]");
        user_check(s.vars.size() == t->dims.size(), name.loc)
            << "tensor '" << t->name << "' has rank " << t->dims.size() << " but is indexed with "
            << s.vars.size() << (s.vars.size() == 1 ? " variable" : " variables");
        expect_punct("=");
        // A reduction: sum|max|min '(' IDENT ':' ...
        if (starts_reduction()) {
            Token kind = next();
            s.reduce = kind.text == "sum"   ? ReduceKind::Sum
                       : kind.text == "max" ? ReduceKind::Max
                                            : ReduceKind::Min;
            expect_punct("(");
            do {
                Token rv = expect(Tok::Ident, "a reduction variable");
                user_check(!names_.count(rv.text) && !is_keyword(rv.text) &&
                               !functions().count(rv.text),
                           rv.loc)
                    << "reduction variable '" << rv.text
                    << "' hides a declaration or built-in of the same name";
                user_check(vars.insert(rv.text).second, rv.loc)
                    << "reduction variable '" << rv.text << "' is already an index variable";
                expect_punct(":");
                Expr extent = expr({});
                check_size_expr(extent, "extent of '" + rv.text + "'");
                s.reduce_vars.push_back({rv.text, extent, rv.loc});
            } while (accept_comma());
            expect_punct(")");
        } else if (peek().kind == Tok::Ident && peek().text == "sum") {
            user_check(false, peek().loc)
                << "expected 'sum(var: extent, ...) expression', found 'sum' without a reduction "
                   "variable";
        }
        s.body = expr(vars);
        def_.statements.push_back(s);
        end_of_line();
    }

    // sum|max|min '(' IDENT ':'  -- a reduction rather than a call of max or min.
    bool starts_reduction() const {
        return peek().kind == Tok::Ident && is_reduce_word(peek().text) && is_punct("(", 1) &&
               peek(2).kind == Tok::Ident && is_punct(":", 3);
    }

    // Counts nesting for the duration of one recursive step.
    struct Nest {
        Parser &p;
        explicit Nest(Parser &parser, const SourceLoc &loc) : p(parser) {
            user_check(++p.depth_ <= max_nesting, loc)
                << "expression is nested too deeply (more than " << max_nesting << " levels)";
        }
        ~Nest() { p.depth_--; }
    };

    static int precedence(const Token &t) {
        if (t.kind != Tok::Punct)
            return 0;
        const std::string &op = t.text;
        if (op == "||")
            return 1;
        if (op == "&&")
            return 2;
        if (op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=") {
            return 3;
        }
        if (op == "+" || op == "-")
            return 4;
        if (op == "*" || op == "/")
            return 5;
        return 0;
    }

    // expr := binary expression by precedence climbing, left-associative. `vars` are the index
    // variables in scope (empty for size expressions).
    Expr expr(const std::set<std::string> &vars, int min_prec = 1) {
        Nest nest(*this, peek().loc);
        Expr lhs = unary(vars);
        int d = tree_depth_;
        while (true) {
            int p = precedence(peek());
            if (p == 0 || p < min_prec)
                break;
            Token t = next();
            Expr rhs = expr(vars, p + 1);
            d = grow(std::max(d, tree_depth_), t.loc);
            auto n = std::make_shared<ExprNode>();
            n->kind = ExprKind::Binary;
            n->loc = t.loc;
            n->name = t.text;
            n->args = {lhs, rhs};
            lhs = n;
        }
        tree_depth_ = d;
        return lhs;
    }

    // The depth of a node over children of depth `d`.
    int grow(int d, const SourceLoc &loc) {
        user_check(d + 1 <= max_depth, loc)
            << "expression is too deep (more than " << max_depth << " operations on one path)";
        return d + 1;
    }

    Expr unary(const std::set<std::string> &vars) {
        if (!is_punct("-") && !is_punct("!"))
            return primary(vars);
        Token t = next();
        Nest nest(*this, t.loc);
        Expr a = unary(vars);
        tree_depth_ = grow(tree_depth_, t.loc);
        if (t.text == "-" && a->kind == ExprKind::IntConst) {
            auto n = std::make_shared<ExprNode>(*a);
            n->int_value = -a->int_value;
            n->loc = t.loc;
            return n;
        }
        if (t.text == "-" && a->kind == ExprKind::FloatConst) {
            auto n = std::make_shared<ExprNode>(*a);
            n->float_value = -a->float_value;
            n->loc = t.loc;
            return n;
        }
        auto n = std::make_shared<ExprNode>();
        n->kind = ExprKind::Unary;
        n->loc = t.loc;
        n->name = t.text;
        n->args = {a};
        return n;
    }

    Expr primary(const std::set<std::string> &vars) {
        user_check(peek().kind != Tok::Newline && peek().kind != Tok::End, peek().loc)
            << "expected an expression, found " << describe(peek())
            << " (a statement continues on the next line only inside brackets)";
        Token t = next();
        auto n = std::make_shared<ExprNode>();
        n->loc = t.loc;
        tree_depth_ = 1;
        if (t.kind == Tok::Int) {
            n->kind = ExprKind::IntConst;
            n->int_value = int_value(t, false);
            return n;
        }
        if (t.kind == Tok::Float) {
            n->kind = ExprKind::FloatConst;
            n->float_value = std::strtod(t.text.c_str(), nullptr);
            // In range when it rounds to a finite float: float32's largest value printed shortest
            // (3.4028235e+38) is a little above FLT_MAX as a double.
            user_check(std::isfinite(n->float_value) && std::isfinite(std::strtof(t.text.c_str(), nullptr)), t.loc)
                << "float " << t.text << " is out of the range of f32";
            return n;
        }
        if (t.kind == Tok::Punct && t.text == "(") {
            Expr e = expr(vars);
            expect_punct(")");
            return e;
        }
        user_check(t.kind == Tok::Ident, t.loc) << "expected an expression, found " << describe(t);
        n->name = t.text;
        if (is_punct("["))
            return tensor_read(t, n, vars);
        if (is_punct("("))
            return function_call(t, n, vars);
        return named_value(t, n, vars);
    }

    // NAME [ index, ... ]: a read of a declared tensor, already defined, at affine indices.
    Expr tensor_read(const Token &t, std::shared_ptr<ExprNode> n,
                     const std::set<std::string> &vars) {
        const TensorDecl *td = def_.find_tensor(t.text);
        user_check(td, t.loc) << "unknown tensor '" << t.text << "'";
        user_check(!vars.empty(), t.loc)
            << "tensor '" << t.text << "' cannot be read in a size expression";
        user_check(td->role == TensorRole::Input || def_.statement_for(t.text), t.loc)
            << "tensor '" << t.text << "' is read before it is defined";
        next();
        n->kind = ExprKind::Access;
        int d = 0;
        if (!is_punct("]")) {
            do {
                Expr idx = expr(vars);
                d = std::max(d, tree_depth_);
                check_index(idx, t.text);
                n->args.push_back(idx);
            } while (accept_comma());
        }
        expect_punct("]");
        tree_depth_ = grow(d, t.loc);
        user_check(n->args.size() == td->dims.size(), t.loc)
            << "tensor '" << t.text << "' has rank " << td->dims.size() << " but is indexed with "
            << n->args.size() << (n->args.size() == 1 ? " index" : " indices");
        return n;
    }

    // NAME ( arg, ... ): a built-in function with its number of arguments.
    Expr function_call(const Token &t, std::shared_ptr<ExprNode> n,
                       const std::set<std::string> &vars) {
        // pos_ is just past the name: a reduction inside an expression looks like a call.
        user_check(!(is_reduce_word(t.text) && peek(1).kind == Tok::Ident && is_punct(":", 2)),
                   t.loc)
            << "a reduction '" << t.text
            << "(var: extent) ...' must be the whole right-hand side of a statement; "
               "compute it into a local tensor first";
        auto f = functions().find(t.text);
        user_check(f != functions().end(), t.loc)
            << "unknown function '" << t.text << "' (known: " << function_list() << ")";
        next();
        n->kind = ExprKind::Call;
        int d = 0;
        if (!is_punct(")")) {
            do {
                n->args.push_back(expr(vars));
                d = std::max(d, tree_depth_);
            } while (accept_comma());
        }
        expect_punct(")");
        tree_depth_ = grow(d, t.loc);
        user_check(static_cast<int>(n->args.size()) == f->second, t.loc)
            << "function '" << t.text << "' takes " << f->second << " argument"
            << (f->second == 1 ? "" : "s") << ", found " << n->args.size();
        return n;
    }

    // NAME: an index variable in scope, a parameter or a let; UserError naming what it is instead.
    Expr named_value(const Token &t, std::shared_ptr<ExprNode> n,
                     const std::set<std::string> &vars) {
        if (vars.count(t.text)) {
            n->kind = ExprKind::IndexVar;
            return n;
        }
        const ParamDecl *p = def_.find_param(t.text);
        bool is_let = false;
        for (const auto &l : def_.lets)
            is_let |= l.name == t.text;
        if (p || is_let) {
            n->kind = ExprKind::Param;
            return n;
        }
        user_check(!def_.find_tensor(t.text), t.loc)
            << "tensor '" << t.text << "' must be indexed: " << t.text << "[...]";
        user_check(!functions().count(t.text), t.loc)
            << "function '" << t.text << "' must be called: " << t.text << "(...)";
        user_check(false, t.loc) << "unknown name '" << t.text << "'"
                                 << (vars.empty() ? " (sizes may use parameters, attributes "
                                                    "and earlier lets)"
                                                  : " (not a parameter, attribute, let or index "
                                                    "variable of this statement)");
        return n;
    }

    // An index must be affine in the index variables: a sum of terms, each an integer expression
    // of parameters times at most one index variable.
    void check_index(const Expr &e, const std::string &tensor) {
        user_check(is_affine(e), start_loc(e))
            << "index '" << to_string(e) << "' of tensor '" << tensor
            << "' is not affine: use sums of index variables times integer constants or parameters";
    }
    static bool has_var(const Expr &e) {
        if (e->kind == ExprKind::IndexVar)
            return true;
        for (const auto &a : e->args) {
            if (has_var(a))
                return true;
        }
        return false;
    }
    static bool is_int_const_expr(const Expr &e) {
        switch (e->kind) {
        case ExprKind::IntConst:
        case ExprKind::Param:
            return true;
        case ExprKind::Unary:
            return e->name == "-" && is_int_const_expr(e->args[0]);
        case ExprKind::Binary:
            return (e->name == "+" || e->name == "-" || e->name == "*" || e->name == "/") &&
                   is_int_const_expr(e->args[0]) && is_int_const_expr(e->args[1]);
        default:
            return false;
        }
    }
    static bool is_affine(const Expr &e) {
        if (!has_var(e))
            return is_int_const_expr(e);
        switch (e->kind) {
        case ExprKind::IndexVar:
            return true;
        case ExprKind::Unary:
            return e->name == "-" && is_affine(e->args[0]);
        case ExprKind::Binary:
            if (e->name == "+" || e->name == "-") {
                return is_affine(e->args[0]) && is_affine(e->args[1]);
            }
            if (e->name == "*") {
                return (is_affine(e->args[0]) && is_int_const_expr(e->args[1])) ||
                       (is_affine(e->args[1]) && is_int_const_expr(e->args[0]));
            }
            return false;
        default:
            return false;
        }
    }

    void check_whole() {
        SourceLoc end = toks_.back().loc;
        const TensorDecl *output = nullptr;
        for (const auto &t : def_.tensors) {
            if (t.role != TensorRole::Output)
                continue;
            user_check(!output, t.loc) << "op '" << def_.name << "' has a second output '" << t.name
                                       << "' (an op has exactly one output tensor)";
            output = &t;
        }
        user_check(output, end) << "op '" << def_.name
                                << "' has no output tensor (declare one: output Y: f32[...])";
        user_check(!def_.statements.empty(), end)
            << "op '" << def_.name << "' has no statements (the output '" << output->name
            << "' must be defined: " << output->name << "[...] = ...)";
        for (const auto &t : def_.tensors) {
            if (t.role != TensorRole::Input) {
                user_check(def_.statement_for(t.name), t.loc)
                    << "tensor '" << t.name << "' is declared but never defined";
            }
        }
        user_check(def_.statements.back().tensor == output->name, def_.statements.back().loc)
            << "the last statement must define the output '" << output->name << "'";
        for (const auto &t : def_.tensors) {
            if (t.role == TensorRole::Input) {
                user_check(is_read(t.name), t.loc) << "input '" << t.name << "' is never read";
            }
            if (t.role == TensorRole::Local) {
                user_check(is_read(t.name), t.loc)
                    << "local '" << t.name << "' is defined but never read";
            }
        }
    }
    bool is_read(const std::string &tensor) const {
        for (const auto &s : def_.statements) {
            if (reads(s.body, tensor))
                return true;
        }
        return false;
    }
    static bool reads(const Expr &e, const std::string &tensor) {
        if (e->kind == ExprKind::Access && e->name == tensor)
            return true;
        for (const auto &a : e->args) {
            if (reads(a, tensor))
                return true;
        }
        return false;
    }
};

} // namespace

ComputeDef parse_compute(const std::string &text, const std::string &filename) {
    return Parser(text, filename).parse();
}

} // namespace opgen
