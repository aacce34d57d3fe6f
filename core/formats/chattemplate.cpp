// The chat template interpreter: the template is cut into text, {{ }} and {% %} parts (with
// Hugging Face's trim_blocks and lstrip_blocks, and "-" whitespace control), parsed into a
// tree of statements and expressions, and evaluated over values that are Jinja's: undefined,
// none, booleans, integers, strings, lists and mappings.

#include "formats/chattemplate.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QStringList>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <variant>

namespace tandem {

namespace {

struct TemplateError {
    QString what;
    int line;
};

[[noreturn]] void fail(int line, const QString& what) {
    throw TemplateError{what, line};
}

// A template comes with a downloaded model: what it may ask for is capped, each cap far above
// what a real template needs (the families' are a few kB, nest a few levels deep and loop once
// over the conversation), and one passed stops it with its reason.
constexpr qsizetype kMaxSource = 1 << 20; // characters of template text
constexpr int kMaxDepth = 100; // nested statements, and levels of expressions (about 2 a bracket)
constexpr int64_t kMaxIterations = 1 << 17; // loop iterations in one rendering
constexpr qsizetype kMaxChars = 8 << 20;    // characters of any text it builds, its output too
constexpr size_t kMaxItems = 1 << 20;       // items of any list it builds

void needChars(qint64 n, int line) {
    if (n > kMaxChars)
        fail(
            line,
            QStringLiteral("the template builds a text of more than %1 characters").arg(kMaxChars));
}

void needItems(size_t n, int line) {
    if (n > kMaxItems)
        fail(line,
             QStringLiteral("the template builds a list of more than %1 items").arg(kMaxItems));
}

// One level deeper while reading: statements in statements, expressions in expressions.
thread_local int tDepth = 0;
struct Deeper {
    explicit Deeper(int line) {
        if (++tDepth > kMaxDepth) {
            --tDepth;
            fail(line, QStringLiteral("it nests more than %1 levels deep").arg(kMaxDepth));
        }
    }
    ~Deeper() { --tDepth; }
    Deeper(const Deeper&) = delete;
    Deeper& operator=(const Deeper&) = delete;
};

// ---- Values --------------------------------------------------------------------------------

struct Value;
using List = std::vector<Value>;
using Map = std::map<QString, Value>;

struct Undefined {};
struct None {};

struct Value {
    std::variant<Undefined, None, bool, int64_t, QString, std::shared_ptr<List>,
                 std::shared_ptr<Map>>
        v;
    Value() = default;
    Value(None n)
        : v(n) {}
    Value(bool b)
        : v(b) {}
    Value(int64_t i)
        : v(i) {}
    Value(QString s)
        : v(std::move(s)) {}
    Value(List l)
        : v(std::make_shared<List>(std::move(l))) {}
    Value(Map m)
        : v(std::make_shared<Map>(std::move(m))) {}

    bool undefined() const { return v.index() == 0; }
    bool none() const { return v.index() == 1; }
    const bool* boolean() const { return std::get_if<bool>(&v); }
    const int64_t* integer() const { return std::get_if<int64_t>(&v); }
    const QString* string() const { return std::get_if<QString>(&v); }
    List* list() const {
        auto p = std::get_if<std::shared_ptr<List>>(&v);
        return p ? p->get() : nullptr;
    }
    Map* map() const {
        auto p = std::get_if<std::shared_ptr<Map>>(&v);
        return p ? p->get() : nullptr;
    }
    bool truthy() const {
        if (auto b = boolean())
            return *b;
        if (auto i = integer())
            return *i != 0;
        if (auto s = string())
            return !s->isEmpty();
        if (auto l = list())
            return !l->empty();
        if (auto m = map())
            return !m->empty();
        return false;
    }
};

QJsonValue toJson(const Value& v) {
    if (auto b = v.boolean())
        return *b;
    if (auto i = v.integer())
        return qint64(*i);
    if (auto s = v.string())
        return *s;
    if (auto l = v.list()) {
        QJsonArray a;
        for (const Value& x : *l)
            a.append(toJson(x));
        return a;
    }
    if (auto m = v.map()) {
        QJsonObject o;
        for (const auto& [k, x] : *m)
            o.insert(k, toJson(x));
        return o;
    }
    return QJsonValue::Null;
}

// As Hugging Face's tojson writes it: json.dumps with ", " and ": ", non-ASCII kept.
// (A list may hold the same long text many times over: what is written is counted as it
// grows. Line 0: the statement's, filled in where it is run.)
void writePythonJson(const Value& v, QString& out) {
    if (auto l = v.list()) {
        out += QLatin1Char('[');
        for (size_t i = 0; i < l->size(); ++i) {
            if (i > 0)
                out += QStringLiteral(", ");
            writePythonJson((*l)[i], out);
        }
        out += QLatin1Char(']');
    } else if (auto m = v.map()) {
        out += QLatin1Char('{');
        bool first = true;
        for (const auto& [k, x] : *m) {
            if (!first)
                out += QStringLiteral(", ");
            first = false;
            writePythonJson(Value(k), out);
            out += QStringLiteral(": ");
            writePythonJson(x, out);
        }
        out += QLatin1Char('}');
    } else {
        if (auto s = v.string())
            needChars(out.size() + 2 * s->size(), 0);
        out +=
            QString::fromUtf8(QJsonDocument(QJsonArray{toJson(v)}).toJson(QJsonDocument::Compact))
                .mid(1)
                .chopped(1);
    }
    needChars(out.size(), 0);
}

QString pythonJson(const Value& v) {
    QString out;
    writePythonJson(v, out);
    return out;
}

// `s` with every `from` replaced by `to`, when the result stays within the cap.
QString replaced(const QString& s, const QString& from, const QString& to, int line) {
    const qint64 hits = from.isEmpty() ? s.size() + 1 : s.count(from);
    needChars(s.size() + hits * (to.size() - from.size()), line);
    return QString(s).replace(from, to);
}

QString text(const Value& v) {
    if (v.undefined())
        return {};
    if (v.none())
        return QStringLiteral("None");
    if (v.list() || v.map())
        return pythonJson(v);
    if (auto b = v.boolean())
        return *b ? QStringLiteral("True") : QStringLiteral("False");
    if (auto i = v.integer())
        return QString::number(*i);
    if (auto s = v.string())
        return *s;
    return {};
}

bool equal(const Value& a, const Value& b) {
    if (a.v.index() != b.v.index())
        return (a.undefined() || a.none()) && (b.undefined() || b.none()) ? a.none() == b.none()
                                                                          : false;
    if (auto s = a.string())
        return *s == *b.string();
    if (auto i = a.integer())
        return *i == *b.integer();
    if (auto x = a.boolean())
        return *x == *b.boolean();
    if (a.list() || a.map())
        return toJson(a) == toJson(b);
    return true;
}

// ---- Expressions ---------------------------------------------------------------------------

struct Expr;
using ExprP = std::shared_ptr<const Expr>;
struct Expr {
    enum Kind {
        Literal,
        Name,
        Attr,
        Index,
        Slice,
        Call,
        Filter,
        Test,
        Not,
        Neg,
        Binary,
        Cond,
        ListOf,
        MapOf
    } kind;
    int line = 0;
    Value value;          // Literal
    QString name;         // Name, Attr, Filter, Test, Binary (the operator), Call's method name
    std::vector<ExprP> a; // operands: the object first
    bool negated = false; // Test: "is not"
    bool method = false;  // Call: a[0] is the object whose method `name` is called
    std::vector<std::pair<QString, ExprP>> keywords; // Call: name=value arguments
};

struct Lexer {
    QString s;
    qsizetype i = 0;
    int line;
    QStringList tokens; // strings keep their quote: 'text
    qsizetype at = 0;

    Lexer(const QString& src, int l)
        : s(src)
        , line(l) {
        static const QStringList ops{QStringLiteral("//"), QStringLiteral("=="),
                                     QStringLiteral("!="), QStringLiteral("<="),
                                     QStringLiteral(">=")};
        while (i < s.size()) {
            const QChar c = s[i];
            if (c.isSpace()) {
                ++i;
            } else if (c == QLatin1Char('\'') || c == QLatin1Char('"')) {
                QString lit(QLatin1Char('\''));
                ++i;
                while (i < s.size() && s[i] != c) {
                    if (s[i] == QLatin1Char('\\') && i + 1 < s.size()) {
                        const QChar e = s[++i];
                        lit += e == QLatin1Char('n')   ? QChar(QLatin1Char('\n'))
                               : e == QLatin1Char('t') ? QChar(QLatin1Char('\t'))
                               : e == QLatin1Char('r') ? QChar(QLatin1Char('\r'))
                                                       : e;
                    } else {
                        lit += s[i];
                    }
                    ++i;
                }
                if (i >= s.size())
                    fail(line, QStringLiteral("a string is not closed"));
                ++i;
                tokens << lit;
            } else if (c.isLetter() || c == QLatin1Char('_') || c.isDigit()) {
                const qsizetype from = i;
                while (i < s.size() && (s[i].isLetterOrNumber() || s[i] == QLatin1Char('_')))
                    ++i;
                tokens << s.mid(from, i - from);
            } else {
                const QString two = s.mid(i, 2);
                if (ops.contains(two)) {
                    tokens << two;
                    i += 2;
                } else {
                    tokens << QString(c);
                    ++i;
                }
            }
        }
    }
    QString peek(qsizetype k = 0) const {
        return at + k < tokens.size() ? tokens[at + k] : QString();
    }
    QString next() {
        if (at >= tokens.size())
            fail(line, QStringLiteral("the expression ends too early"));
        return tokens[at++];
    }
    bool take(const QString& t) {
        if (peek() == t && !t.startsWith(QLatin1Char('\''))) {
            ++at;
            return true;
        }
        return false;
    }
    void expect(const QString& t) {
        if (!take(t))
            fail(line, QStringLiteral("expected \"%1\" but found \"%2\"").arg(t, peek()));
    }
    bool done() const { return at >= tokens.size(); }
};

// A node still being built; it is only read once it is an ExprP.
std::shared_ptr<Expr> make(Expr::Kind k, int line, std::vector<ExprP> a = {}, QString name = {}) {
    auto e = std::make_shared<Expr>();
    e->kind = k;
    e->line = line;
    e->a = std::move(a);
    e->name = std::move(name);
    return e;
}

ExprP parseExpr(Lexer& l);

bool isName(const QString& t) {
    return !t.isEmpty() && (t[0].isLetter() || t[0] == QLatin1Char('_'));
}

std::vector<ExprP> parseArgs(Lexer& l, const QString& close,
                             std::vector<std::pair<QString, ExprP>>* keywords = nullptr) {
    std::vector<ExprP> args;
    while (!l.take(close)) {
        if (isName(l.peek()) && l.peek(1) == QLatin1String("=")) {
            if (!keywords)
                fail(l.line,
                     QStringLiteral("keyword arguments (%1=) are not supported").arg(l.peek()));
            const QString key = l.next();
            l.next();
            keywords->emplace_back(key, parseExpr(l));
        } else {
            args.push_back(parseExpr(l));
        }
        if (!l.take(QStringLiteral(",")) && l.peek() != close)
            fail(l.line, QStringLiteral("expected \",\" or \"%1\"").arg(close));
    }
    return args;
}

ExprP parsePrimary(Lexer& l) {
    const QString t = l.next();
    if (t.startsWith(QLatin1Char('\''))) {
        auto e = make(Expr::Literal, l.line);
        e->value = Value(t.mid(1));
        return e;
    }
    if (!t.isEmpty() && t[0].isDigit()) {
        bool ok = false;
        const int64_t n = t.toLongLong(&ok);
        if (!ok)
            fail(l.line, QStringLiteral("the number %1 is not supported").arg(t));
        auto e = make(Expr::Literal, l.line);
        e->value = Value(n);
        return e;
    }
    if (t == QLatin1String("(")) {
        ExprP e = parseExpr(l);
        l.expect(QStringLiteral(")"));
        return e;
    }
    if (t == QLatin1String("["))
        return make(Expr::ListOf, l.line, parseArgs(l, QStringLiteral("]")));
    if (t == QLatin1String("{")) {
        std::vector<ExprP> kv;
        while (!l.take(QStringLiteral("}"))) {
            kv.push_back(parseExpr(l));
            l.expect(QStringLiteral(":"));
            kv.push_back(parseExpr(l));
            l.take(QStringLiteral(","));
        }
        return make(Expr::MapOf, l.line, kv);
    }
    if (!isName(t))
        fail(l.line, QStringLiteral("unexpected \"%1\"").arg(t));
    auto e = make(Expr::Literal, l.line);
    if (t == QLatin1String("true") || t == QLatin1String("True"))
        e->value = Value(true);
    else if (t == QLatin1String("false") || t == QLatin1String("False"))
        e->value = Value(false);
    else if (t == QLatin1String("none") || t == QLatin1String("None"))
        e->value = Value(None{});
    else
        return make(Expr::Name, l.line, {}, t);
    return e;
}

ExprP parsePostfix(Lexer& l) {
    ExprP e = parsePrimary(l);
    for (;;) {
        if (l.take(QStringLiteral("."))) {
            const QString name = l.next();
            if (l.take(QStringLiteral("("))) {
                std::vector<ExprP> a{e};
                for (ExprP x : parseArgs(l, QStringLiteral(")")))
                    a.push_back(x);
                auto c = make(Expr::Call, l.line, a, name);
                c->method = true;
                e = c;
            } else
                e = make(Expr::Attr, l.line, {e}, name);
        } else if (l.take(QStringLiteral("["))) {
            // x[i], or a slice x[from:to:step] with any part left out.
            auto part = [&](std::initializer_list<const char*> ends) -> ExprP {
                for (const char* end : ends)
                    if (l.peek() == QLatin1String(end))
                        return nullptr;
                return parseExpr(l);
            };
            ExprP from = part({":"});
            if (!l.take(QStringLiteral(":"))) {
                l.expect(QStringLiteral("]"));
                e = make(Expr::Index, l.line, {e, from});
                continue;
            }
            ExprP to = part({":", "]"});
            ExprP step = l.take(QStringLiteral(":")) ? part({"]"}) : nullptr;
            l.expect(QStringLiteral("]"));
            e = make(Expr::Slice, l.line, {e, from, to, step});
        } else if (l.peek() == QLatin1String("(") && e->kind == Expr::Name) {
            l.next();
            std::vector<std::pair<QString, ExprP>> keywords;
            auto call = make(Expr::Call, l.line, {}, e->name);
            call->a = parseArgs(l, QStringLiteral(")"), &keywords);
            call->keywords = std::move(keywords);
            e = call;
        } else if (l.take(QStringLiteral("|"))) {
            const QString name = l.next();
            std::vector<ExprP> a{e};
            if (l.take(QStringLiteral("(")))
                for (ExprP x : parseArgs(l, QStringLiteral(")")))
                    a.push_back(x);
            e = make(Expr::Filter, l.line, a, name);
        } else {
            return e;
        }
    }
}

ExprP parseUnary(Lexer& l) {
    const Deeper deeper(l.line);
    if (l.take(QStringLiteral("-")))
        return make(Expr::Neg, l.line, {parseUnary(l)});
    return parsePostfix(l);
}

ExprP parseBinary(Lexer& l, int level);

// Levels, loosest first: or, and, not, comparisons/in/is, ~, + -, * / // %.
const std::vector<QStringList>& levels() {
    static const std::vector<QStringList> l{
        {QStringLiteral("or")},
        {QStringLiteral("and")},
        {},
        {QStringLiteral("=="), QStringLiteral("!="), QStringLiteral("<"), QStringLiteral(">"),
         QStringLiteral("<="), QStringLiteral(">="), QStringLiteral("in")},
        {QStringLiteral("~")},
        {QStringLiteral("+"), QStringLiteral("-")},
        {QStringLiteral("*"), QStringLiteral("/"), QStringLiteral("//"), QStringLiteral("%")}};
    return l;
}

ExprP parseBinary(Lexer& l, int level) {
    if (level >= int(levels().size()))
        return parseUnary(l);
    if (level == 2) {
        if (l.take(QStringLiteral("not"))) {
            const Deeper deeper(l.line);
            return make(Expr::Not, l.line, {parseBinary(l, 2)});
        }
        return parseBinary(l, 3);
    }
    ExprP e = parseBinary(l, level + 1);
    for (;;) {
        QString op = l.peek();
        if (level == 3 && op == QLatin1String("is")) {
            l.next();
            const bool neg = l.take(QStringLiteral("not"));
            auto t = make(Expr::Test, l.line, {e}, l.next());
            t->negated = neg;
            e = t;
            continue;
        }
        if (level == 3 && op == QLatin1String("not") && l.peek(1) == QLatin1String("in")) {
            l.next();
            l.next();
            e = make(
                Expr::Not, l.line,
                {make(Expr::Binary, l.line, {e, parseBinary(l, level + 1)}, QStringLiteral("in"))});
            continue;
        }
        if (!levels()[size_t(level)].contains(op))
            return e;
        l.next();
        e = make(Expr::Binary, l.line, {e, parseBinary(l, level + 1)}, op);
    }
}

ExprP parseExpr(Lexer& l) {
    const Deeper deeper(l.line);
    ExprP e = parseBinary(l, 0);
    if (l.take(QStringLiteral("if"))) {
        ExprP cond = parseBinary(l, 0);
        ExprP otherwise = l.take(QStringLiteral("else")) ? parseExpr(l) : nullptr;
        return make(Expr::Cond, l.line, {cond, e, otherwise});
    }
    return e;
}

} // namespace

Expected<ChatMessage> chatMessageFromJson(const QJsonValue& value) {
    const QJsonObject msg = value.toObject();
    const QString role = msg.value(QStringLiteral("role")).toString();
    if (role != QLatin1String("system") && role != QLatin1String("user") &&
        role != QLatin1String("assistant"))
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("a message's role is \"%1\"; messages take system, user "
                                        "and assistant")
                             .arg(role));
    const QJsonValue content = msg.value(QStringLiteral("content"));
    if (!content.isString())
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("a %1 message has no \"content\" string").arg(role));
    return ChatMessage{role, content.toString()};
}

// ---- Statements ----------------------------------------------------------------------------

// GCC warns when a type with linkage holds one from an anonymous namespace outside the main
// file; a unity build includes this file into a generated one, and Node is private to it anyway.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsubobject-linkage"
#endif
struct ChatTemplate::Node {
    enum Kind { Text, Output, If, For, Set, Block } kind = Block;
    int line = 0;
    QString text;                  // Text; For: the loop variable; Set: the name
    QString attr;                  // Set ns.attr
    ExprP expr;                    // Output, For (the sequence), Set
    std::vector<ExprP> conditions; // If: one per branch; null for else
    std::vector<std::vector<std::shared_ptr<const Node>>> bodies; // If branches; For: body, else
};
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace {

using Node = ChatTemplate::Node;
using NodeP = std::shared_ptr<const Node>;
using Nodes = std::vector<NodeP>;

// ---- Evaluation ----------------------------------------------------------------------------

struct Scope {
    std::vector<QHash<QString, Value>> frames{1};
    int64_t iterations = 0; // of every loop so far, against kMaxIterations
    Value get(const QString& name) const {
        for (auto f = frames.rbegin(); f != frames.rend(); ++f)
            if (auto it = f->constFind(name); it != f->constEnd())
                return *it;
        return {};
    }
};

Value eval(const ExprP& e, Scope& scope);

int64_t toInt(const Value& v, int line, const QString& what) {
    if (auto i = v.integer())
        return *i;
    if (auto b = v.boolean())
        return *b ? 1 : 0;
    fail(line, QStringLiteral("%1 needs a number").arg(what));
}

QString toText(const Value& v, int line, const QString& what) {
    if (auto s = v.string())
        return *s;
    fail(line, QStringLiteral("%1 needs a string").arg(what));
}

Value index(const Value& obj, const Value& key, int line) {
    if (auto m = obj.map()) {
        const auto it = m->find(text(key));
        return it == m->end() ? Value() : it->second;
    }
    if (auto l = obj.list()) {
        int64_t i = toInt(key, line, QStringLiteral("a list index"));
        i = i < 0 ? i + int64_t(l->size()) : i;
        return i >= 0 && i < int64_t(l->size()) ? (*l)[size_t(i)] : Value();
    }
    if (auto s = obj.string()) {
        const QList<uint> chars = s->toUcs4();
        int64_t i = toInt(key, line, QStringLiteral("a string index"));
        i = i < 0 ? i + chars.size() : i;
        return i >= 0 && i < chars.size()
                   ? Value(QString::fromUcs4(reinterpret_cast<const char32_t*>(&chars[i]), 1))
                   : Value();
    }
    return {};
}

List items(const Value& v) {
    List out;
    if (auto m = v.map())
        for (const auto& [k, x] : *m)
            out.push_back(Value(List{Value(k), x}));
    return out;
}

QString stripped(QString s, const Value& chars, bool left, bool right) {
    auto strip = [&](QChar c) {
        return chars.string() ? chars.string()->contains(c) : c.isSpace();
    };
    qsizetype a = 0, b = s.size();
    while (left && a < b && strip(s[a]))
        ++a;
    while (right && b > a && strip(s[b - 1]))
        --b;
    return s.mid(a, b - a);
}

Value method(const Value& obj, const QString& name, const List& args, int line) {
    auto arg = [&](size_t i) { return i < args.size() ? args[i] : Value(); };
    if (auto s = obj.string()) {
        if (name == QLatin1String("strip"))
            return stripped(*s, arg(0), true, true);
        if (name == QLatin1String("lstrip"))
            return stripped(*s, arg(0), true, false);
        if (name == QLatin1String("rstrip"))
            return stripped(*s, arg(0), false, true);
        if (name == QLatin1String("startswith"))
            return s->startsWith(toText(arg(0), line, name));
        if (name == QLatin1String("endswith"))
            return s->endsWith(toText(arg(0), line, name));
        if (name == QLatin1String("upper"))
            return s->toUpper();
        if (name == QLatin1String("lower"))
            return s->toLower();
        if (name == QLatin1String("replace"))
            return replaced(*s, toText(arg(0), line, name), toText(arg(1), line, name), line);
        if (name == QLatin1String("split")) {
            List parts;
            if (arg(0).string())
                needItems(size_t(arg(0).string()->isEmpty() ? s->size() + 2
                                                            : s->count(*arg(0).string()) + 1),
                          line);
            const QStringList p =
                arg(0).string()
                    ? s->split(*arg(0).string())
                    : s->split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
            for (const QString& x : p)
                parts.push_back(Value(x));
            return parts;
        }
    }
    if (auto m = obj.map()) {
        if (name == QLatin1String("get")) {
            const Value v = index(obj, arg(0), line);
            return v.undefined() ? (args.size() > 1 ? arg(1) : Value(None{})) : v;
        }
        if (name == QLatin1String("items"))
            return items(obj);
        if (name == QLatin1String("keys") || name == QLatin1String("values")) {
            List out;
            for (const auto& [k, x] : *m)
                out.push_back(name == QLatin1String("keys") ? Value(k) : x);
            return out;
        }
    }
    fail(line, QStringLiteral("the method .%1() is not supported").arg(name));
}

Value filter(const QString& name, const Value& v, const List& args, int line) {
    auto arg = [&](size_t i) { return i < args.size() ? args[i] : Value(); };
    if (name == QLatin1String("trim"))
        return v.string() ? Value(v.string()->trimmed()) : v;
    if (name == QLatin1String("length") || name == QLatin1String("count")) {
        if (auto l = v.list())
            return int64_t(l->size());
        if (auto m = v.map())
            return int64_t(m->size());
        return int64_t(text(v).toUcs4().size()); // characters, as Python counts them
    }
    if (name == QLatin1String("upper"))
        return text(v).toUpper();
    if (name == QLatin1String("lower"))
        return text(v).toLower();
    if (name == QLatin1String("capitalize") || name == QLatin1String("title")) {
        QString s = text(v).toLower();
        for (qsizetype i = 0; i < s.size(); ++i)
            if (i == 0 || (name == QLatin1String("title") && !s[i - 1].isLetterOrNumber()))
                s[i] = s[i].toUpper();
        return s;
    }
    if (name == QLatin1String("first") || name == QLatin1String("last")) {
        auto l = v.list();
        if (!l || l->empty())
            return {};
        return name == QLatin1String("first") ? l->front() : l->back();
    }
    if (name == QLatin1String("join")) {
        QStringList parts;
        const QString separator = text(arg(0));
        qint64 size = 0;
        if (auto l = v.list())
            for (const Value& x : *l) {
                parts << text(x);
                size += parts.last().size() + separator.size();
                needChars(size, line);
            }
        return parts.join(separator);
    }
    if (name == QLatin1String("default") || name == QLatin1String("d"))
        return v.undefined() || (arg(1).truthy() && !v.truthy()) ? arg(0) : v;
    if (name == QLatin1String("tojson"))
        return pythonJson(v);
    if (name == QLatin1String("string") || name == QLatin1String("safe"))
        return text(v);
    if (name == QLatin1String("int"))
        return v.string() ? Value(int64_t(v.string()->toLongLong())) : Value(toInt(v, line, name));
    if (name == QLatin1String("list")) {
        if (v.list())
            return v;
        const QString t = text(v);
        needItems(size_t(t.size()), line);
        List out;
        for (QChar c : t)
            out.push_back(Value(QString(c)));
        return out;
    }
    if (name == QLatin1String("items"))
        return items(v);
    if (name == QLatin1String("reverse")) {
        if (auto l = v.list())
            return List(l->rbegin(), l->rend());
        QList<uint> chars = text(v).toUcs4();
        std::reverse(chars.begin(), chars.end());
        return QString::fromUcs4(reinterpret_cast<const char32_t*>(chars.constData()),
                                 chars.size());
    }
    if (name == QLatin1String("replace"))
        return replaced(text(v), toText(arg(0), line, name), toText(arg(1), line, name), line);
    fail(line, QStringLiteral("the filter |%1 is not supported").arg(name));
}

bool test(const QString& name, const Value& v, int line) {
    if (name == QLatin1String("defined"))
        return !v.undefined();
    if (name == QLatin1String("undefined"))
        return v.undefined();
    if (name == QLatin1String("none"))
        return v.none();
    if (name == QLatin1String("string"))
        return v.string();
    if (name == QLatin1String("number") || name == QLatin1String("integer"))
        return v.integer();
    if (name == QLatin1String("boolean"))
        return v.boolean();
    if (name == QLatin1String("true") || name == QLatin1String("false"))
        return v.boolean() && *v.boolean() == (name == QLatin1String("true"));
    if (name == QLatin1String("mapping"))
        return v.map();
    if (name == QLatin1String("iterable") || name == QLatin1String("sequence"))
        return v.list() || v.string() || v.map();
    if (name == QLatin1String("even") || name == QLatin1String("odd"))
        return (toInt(v, line, name) % 2 == 0) == (name == QLatin1String("even"));
    fail(line, QStringLiteral("the test \"is %1\" is not supported").arg(name));
}

Value call(const Expr& e, Scope& scope) {
    List args;
    for (size_t i = 0; i < e.a.size(); ++i)
        args.push_back(eval(e.a[i], scope));
    if (e.method) {
        const Value obj = args.front();
        args.erase(args.begin());
        return method(obj, e.name, args, e.line);
    }
    if (e.name == QLatin1String("namespace")) {
        Map m;
        for (const auto& [k, x] : e.keywords)
            m[k] = eval(x, scope);
        return m;
    }
    if (!e.keywords.empty())
        fail(e.line, QStringLiteral("keyword arguments to %1() are not supported").arg(e.name));
    if (e.name == QLatin1String("raise_exception"))
        fail(e.line, QStringLiteral("the template refuses the conversation: %1")
                         .arg(args.empty() ? QString() : text(args[0])));
    if (e.name == QLatin1String("range")) {
        const int64_t from = args.size() > 1 ? toInt(args[0], e.line, e.name) : 0;
        const int64_t to = toInt(args.back(), e.line, e.name);
        List out;
        for (int64_t i = from; i < to && i - from < 1000000; ++i)
            out.push_back(Value(i));
        return out;
    }
    fail(e.line, QStringLiteral("the function %1() is not supported").arg(e.name));
}

Value arithmetic(const QString& op, const Value& x, const Value& y, int line) {
    if (op == QLatin1String("+")) {
        if (x.string() && y.string()) {
            needChars(x.string()->size() + y.string()->size(), line);
            return *x.string() + *y.string();
        }
        if (x.list() && y.list()) {
            needItems(x.list()->size() + y.list()->size(), line);
            List l = *x.list();
            l.insert(l.end(), y.list()->begin(), y.list()->end());
            return l;
        }
    }
    if (x.string() && op == QLatin1String("%"))
        fail(line, QStringLiteral("string formatting with %% is not supported"));
    const int64_t a = toInt(x, line, QStringLiteral("\"%1\"").arg(op));
    const int64_t b = toInt(y, line, QStringLiteral("\"%1\"").arg(op));
    // Worked out in floating point first: a result within ±2^62 cannot overflow in int64.
    const bool sum = op == QLatin1String("+"), difference = op == QLatin1String("-"),
               product = op == QLatin1String("*");
    const double approx = sum          ? double(a) + double(b)
                          : difference ? double(a) - double(b)
                          : product    ? double(a) * double(b)
                                       : double(a);
    // (A quotient's is its dividend: INT64_MIN / -1, the one that overflows, is refused too.)
    if (!(std::fabs(approx) < 0x1p62))
        fail(line, QStringLiteral("\"%1\" goes past the integers a template counts with").arg(op));
    if (sum)
        return a + b;
    if (difference)
        return a - b;
    if (product)
        return a * b;
    if (b == 0)
        fail(line, QStringLiteral("division by zero"));
    if (op == QLatin1String("%"))
        return ((a % b) + b) % b;
    return a / b; // "/" and "//" on the integers templates count with
}

Value binary(const Expr& e, Scope& scope) {
    const QString& op = e.name;
    const Value x = eval(e.a[0], scope);
    if (op == QLatin1String("and"))
        return x.truthy() ? eval(e.a[1], scope) : x;
    if (op == QLatin1String("or"))
        return x.truthy() ? x : eval(e.a[1], scope);
    const Value y = eval(e.a[1], scope);
    if (op == QLatin1String("=="))
        return equal(x, y);
    if (op == QLatin1String("!="))
        return !equal(x, y);
    if (op == QLatin1String("~")) {
        const QString a = text(x), b = text(y);
        needChars(a.size() + b.size(), e.line);
        return a + b;
    }
    if (op == QLatin1String("in")) {
        if (auto s = y.string())
            return s->contains(text(x));
        if (auto l = y.list())
            return std::any_of(l->begin(), l->end(), [&](const Value& v) { return equal(v, x); });
        if (auto m = y.map())
            return m->count(text(x)) > 0;
        return false;
    }
    if (op.startsWith(QLatin1Char('<')) || op.startsWith(QLatin1Char('>'))) {
        int c = 0;
        if (x.string() && y.string())
            c = x.string()->compare(*y.string());
        else {
            const int64_t a = toInt(x, e.line, op), b = toInt(y, e.line, op);
            c = a < b ? -1 : a > b ? 1 : 0;
        }
        if (op == QLatin1String("<"))
            return c < 0;
        if (op == QLatin1String(">"))
            return c > 0;
        return op == QLatin1String("<=") ? c <= 0 : c >= 0;
    }
    return arithmetic(op, x, y, e.line);
}

// x[from:to:step] as Python takes it: any part left out, negative positions from the end, and a
// negative step walking backwards from the end (messages[::-1]).
Value slice(const Expr& e, Scope& scope) {
    const Value obj = eval(e.a[0], scope);
    const QList<uint> chars = obj.list() ? QList<uint>() : text(obj).toUcs4();
    const int64_t n = obj.list() ? int64_t(obj.list()->size()) : chars.size();
    auto number = [&](const ExprP& x) {
        return toInt(eval(x, scope), e.line, QStringLiteral("a slice"));
    };
    const int64_t step = e.a.size() > 3 && e.a[3] ? number(e.a[3]) : 1;
    if (step == 0)
        fail(e.line, QStringLiteral("a slice's step cannot be zero"));
    // Python's bounds: clamped to [0, n] going forwards, to [-1, n - 1] going backwards.
    auto bound = [&](const ExprP& x, int64_t missing) {
        if (!x)
            return missing;
        int64_t i = number(x);
        if (i < 0)
            i += n;
        return step > 0 ? std::clamp<int64_t>(i, 0, n) : std::clamp<int64_t>(i, -1, n - 1);
    };
    const int64_t from = bound(e.a[1], step > 0 ? 0 : n - 1);
    const int64_t to = bound(e.a[2], step > 0 ? n : -1);
    std::vector<int64_t> picked;
    for (int64_t i = from; step > 0 ? i < to : i > to; i += step)
        picked.push_back(i);
    if (auto l = obj.list()) {
        List out;
        for (int64_t i : picked)
            out.push_back((*l)[size_t(i)]);
        return out;
    }
    QList<uint> out;
    for (int64_t i : picked)
        out.push_back(chars[i]);
    return QString::fromUcs4(reinterpret_cast<const char32_t*>(out.constData()), out.size());
}

Value eval(const ExprP& e, Scope& scope) {
    switch (e->kind) {
    case Expr::Literal:
        return e->value;
    case Expr::Name:
        return scope.get(e->name);
    case Expr::Attr:
        return index(eval(e->a[0], scope), Value(e->name), e->line);
    case Expr::Index:
        return index(eval(e->a[0], scope), eval(e->a[1], scope), e->line);
    case Expr::Slice:
        return slice(*e, scope);
    case Expr::Call:
        return call(*e, scope);
    case Expr::Filter: {
        List args;
        for (size_t i = 1; i < e->a.size(); ++i)
            args.push_back(eval(e->a[i], scope));
        return filter(e->name, eval(e->a[0], scope), args, e->line);
    }
    case Expr::Test:
        return test(e->name, eval(e->a[0], scope), e->line) != e->negated;
    case Expr::Not:
        return !eval(e->a[0], scope).truthy();
    case Expr::Neg: {
        const int64_t v = toInt(eval(e->a[0], scope), e->line, QStringLiteral("\"-\""));
        if (v == std::numeric_limits<int64_t>::min())
            fail(e->line, QStringLiteral("\"-\" goes past the integers a template counts with"));
        return -v;
    }
    case Expr::Binary:
        return binary(*e, scope);
    case Expr::Cond:
        return eval(e->a[0], scope).truthy() ? eval(e->a[1], scope)
               : e->a[2]                     ? eval(e->a[2], scope)
                                             : Value();
    case Expr::ListOf: {
        List l;
        for (const ExprP& x : e->a)
            l.push_back(eval(x, scope));
        return l;
    }
    case Expr::MapOf: {
        Map m;
        for (size_t i = 0; i + 1 < e->a.size(); i += 2)
            m[text(eval(e->a[i], scope))] = eval(e->a[i + 1], scope);
        return m;
    }
    }
    return {};
}

void run(const Nodes& nodes, Scope& scope, QString& out);

void loopOnce(Scope& scope, int line) {
    if (++scope.iterations > kMaxIterations)
        fail(line, QStringLiteral("the template loops more than %1 times").arg(kMaxIterations));
}

void runFor(const Node& n, Scope& scope, QString& out) {
    const Value seq = eval(n.expr, scope);
    List values;
    if (auto l = seq.list())
        values = *l;
    else if (auto m = seq.map())
        for (const auto& [k, x] : *m)
            values.push_back(Value(k));
    else if (!seq.undefined() && !seq.none())
        fail(n.line, QStringLiteral("for can only go over a list or a mapping"));
    if (n.conditions.front()) {
        List kept;
        for (const Value& v : values) {
            loopOnce(scope, n.line);
            scope.frames.emplace_back();
            scope.frames.back().insert(n.text, v);
            if (eval(n.conditions.front(), scope).truthy())
                kept.push_back(v);
            scope.frames.pop_back();
        }
        values = std::move(kept);
    }
    const int64_t count = int64_t(values.size());
    for (int64_t i = 0; i < count; ++i) {
        loopOnce(scope, n.line);
        scope.frames.emplace_back();
        Map loop{{QStringLiteral("index0"), Value(i)},
                 {QStringLiteral("index"), Value(i + 1)},
                 {QStringLiteral("revindex0"), Value(count - 1 - i)},
                 {QStringLiteral("revindex"), Value(count - i)},
                 {QStringLiteral("first"), Value(i == 0)},
                 {QStringLiteral("last"), Value(i == count - 1)},
                 {QStringLiteral("length"), Value(count)}};
        if (i > 0)
            loop[QStringLiteral("previtem")] = values[size_t(i - 1)];
        if (i + 1 < count)
            loop[QStringLiteral("nextitem")] = values[size_t(i + 1)];
        scope.frames.back().insert(QStringLiteral("loop"), Value(loop));
        scope.frames.back().insert(n.text, values[size_t(i)]);
        run(n.bodies[0], scope, out);
        scope.frames.pop_back();
    }
    if (count == 0)
        run(n.bodies[1], scope, out);
}

void runNode(const Node& node, Scope& scope, QString& out);

void run(const Nodes& nodes, Scope& scope, QString& out) {
    for (const NodeP& n : nodes) {
        try {
            runNode(*n, scope, out);
        } catch (TemplateError& e) {
            if (e.line == 0) // from a value's text, which has no line of its own
                e.line = n->line;
            throw;
        }
        needChars(out.size(), n->line);
    }
}

void runNode(const Node& n, Scope& scope, QString& out) {
    switch (n.kind) {
    case Node::Text:
        out += n.text;
        break;
    case Node::Output:
        out += text(eval(n.expr, scope));
        break;
    case Node::If:
        for (size_t i = 0; i < n.conditions.size(); ++i)
            if (!n.conditions[i] || eval(n.conditions[i], scope).truthy()) {
                run(n.bodies[i], scope, out);
                break;
            }
        break;
    case Node::For:
        runFor(n, scope, out);
        break;
    case Node::Set: {
        const Value v = eval(n.expr, scope);
        if (n.attr.isEmpty()) {
            scope.frames.back().insert(n.text, v);
        } else {
            Map* ns = scope.get(n.text).map();
            if (!ns)
                fail(n.line, QStringLiteral("%1 is not a namespace()").arg(n.text));
            (*ns)[n.attr] = v;
        }
        break;
    }
    case Node::Block:
        run(n.bodies[0], scope, out);
        break;
    }
}

// ---- Reading the template ------------------------------------------------------------------

struct Part {
    enum Kind { Text, Output, Statement } kind;
    QString body;
    int line;
};

// Cuts the source into text, {{ }} and {% %}, dropping {# #}, with "-" whitespace control and
// Hugging Face's trim_blocks (the newline after a block tag goes) and lstrip_blocks (spaces
// and tabs before a block tag on its line go).
std::vector<Part> cut(const QString& src) {
    std::vector<Part> parts;
    qsizetype i = 0;
    bool stripNext = false;
    // Lines are counted as the cut moves on (counting from the start at every tag would take
    // time growing with the square of the template's length).
    qsizetype counted = 0;
    int lines = 1;
    while (i < src.size()) {
        qsizetype open = src.indexOf(QLatin1Char('{'), i);
        while (open >= 0 && open + 1 < src.size() && !QStringLiteral("{%#").contains(src[open + 1]))
            open = src.indexOf(QLatin1Char('{'), open + 1);
        if (open < 0 || open + 1 >= src.size())
            open = src.size();
        QString text = src.mid(i, open - i);
        if (stripNext)
            text = stripped(text, Value(), true, false);
        stripNext = false;
        if (open >= src.size()) {
            parts.push_back({Part::Text, text, 0});
            break;
        }
        const QChar kind = src[open + 1];
        lines += int(QStringView(src).mid(counted, open - counted).count(QLatin1Char('\n')));
        counted = open;
        const int line = lines;
        const QString close = kind == QLatin1Char('{')   ? QStringLiteral("}}")
                              : kind == QLatin1Char('%') ? QStringLiteral("%}")
                                                         : QStringLiteral("#}");
        const qsizetype end = src.indexOf(close, open + 2);
        if (end < 0)
            fail(line, QStringLiteral("a \"%1\" is not closed").arg(src.mid(open, 2)));
        QString body = src.mid(open + 2, end - open - 2);
        const bool block = kind != QLatin1Char('{');
        if (body.startsWith(QLatin1Char('-'))) {
            text = stripped(text, Value(), false, true);
            body.remove(0, 1);
        } else if (body.startsWith(QLatin1Char('+'))) {
            body.remove(0, 1);
        } else if (block) {
            const qsizetype nl = text.lastIndexOf(QLatin1Char('\n'));
            const QString tail = text.mid(nl + 1);
            if (std::all_of(tail.begin(), tail.end(), [](QChar c) {
                    return c == QLatin1Char(' ') || c == QLatin1Char('\t');
                }))
                text.truncate(nl + 1);
        }
        parts.push_back({Part::Text, text, line});
        i = end + 2;
        if (body.endsWith(QLatin1Char('-'))) {
            stripNext = true;
            body.chop(1);
        } else if (body.endsWith(QLatin1Char('+'))) {
            body.chop(1);
        } else if (block) {
            if (src.mid(i, 1) == QLatin1String("\n"))
                i += 1;
            else if (src.mid(i, 2) == QLatin1String("\r\n"))
                i += 2;
        }
        if (kind != QLatin1Char('#'))
            parts.push_back(
                {kind == QLatin1Char('{') ? Part::Output : Part::Statement, body.trimmed(), line});
    }
    return parts;
}

ExprP wholeExpr(Lexer& l) {
    ExprP e = parseExpr(l);
    if (!l.done())
        fail(l.line, QStringLiteral("unexpected \"%1\"").arg(l.peek()));
    return e;
}

// Statements up to one whose keyword is in `until` (returned in *ended, with its lexer).
Nodes parseNodes(const std::vector<Part>& parts, size_t& i, const QStringList& until,
                 QString* ended, std::unique_ptr<Lexer>* endLexer) {
    const Deeper deeper(i < parts.size() ? parts[i].line : 1);
    Nodes out;
    while (i < parts.size()) {
        const Part& p = parts[i++];
        auto n = std::make_shared<Node>();
        n->line = p.line;
        if (p.kind == Part::Text) {
            if (p.body.isEmpty())
                continue;
            n->kind = Node::Text;
            n->text = p.body;
        } else if (p.kind == Part::Output) {
            Lexer l(p.body, p.line);
            n->kind = Node::Output;
            n->expr = wholeExpr(l);
        } else {
            auto l = std::make_unique<Lexer>(p.body, p.line);
            const QString word = l->next();
            if (until.contains(word)) {
                *ended = word;
                *endLexer = std::move(l);
                return out;
            }
            if (word == QLatin1String("if")) {
                n->kind = Node::If;
                n->conditions.push_back(wholeExpr(*l));
                QString end;
                std::unique_ptr<Lexer> el;
                const QStringList stops{QStringLiteral("elif"), QStringLiteral("else"),
                                        QStringLiteral("endif")};
                for (;;) {
                    n->bodies.push_back(parseNodes(parts, i, stops, &end, &el));
                    if (end == QLatin1String("elif"))
                        n->conditions.push_back(wholeExpr(*el));
                    else if (end == QLatin1String("else"))
                        n->conditions.push_back(nullptr);
                    else if (end == QLatin1String("endif"))
                        break;
                    else
                        fail(p.line, QStringLiteral("this {% if %} has no {% endif %}"));
                }
            } else if (word == QLatin1String("for")) {
                n->kind = Node::For;
                n->text = l->next();
                if (l->peek() == QLatin1String(","))
                    fail(p.line, QStringLiteral("unpacking in {% for %} is not supported"));
                l->expect(QStringLiteral("in"));
                n->expr = parseBinary(*l, 0);
                n->conditions.push_back(l->take(QStringLiteral("if")) ? wholeExpr(*l) : nullptr);
                if (!l->done())
                    fail(p.line, QStringLiteral("unexpected \"%1\"").arg(l->peek()));
                QString end;
                std::unique_ptr<Lexer> el;
                const QStringList stops{QStringLiteral("else"), QStringLiteral("endfor")};
                n->bodies.push_back(parseNodes(parts, i, stops, &end, &el));
                if (end == QLatin1String("else"))
                    n->bodies.push_back(
                        parseNodes(parts, i, {QStringLiteral("endfor")}, &end, &el));
                else
                    n->bodies.push_back({});
                if (end != QLatin1String("endfor"))
                    fail(p.line, QStringLiteral("this {% for %} has no {% endfor %}"));
            } else if (word == QLatin1String("set")) {
                n->kind = Node::Set;
                n->text = l->next();
                if (l->take(QStringLiteral(".")))
                    n->attr = l->next();
                if (!l->take(QStringLiteral("=")))
                    fail(p.line, QStringLiteral("{% set %} blocks are not supported; use "
                                                "{% set name = value %}"));
                n->expr = wholeExpr(*l);
            } else if (word == QLatin1String("generation")) {
                n->kind = Node::Block;
                QString end;
                std::unique_ptr<Lexer> el;
                n->bodies.push_back(
                    parseNodes(parts, i, {QStringLiteral("endgeneration")}, &end, &el));
                if (end.isEmpty())
                    fail(p.line, QStringLiteral("this {% generation %} has no end"));
            } else {
                fail(p.line, QStringLiteral("{% %1 %} is not supported").arg(word));
            }
        }
        out.push_back(n);
    }
    if (!until.isEmpty())
        fail(parts.empty() ? 1 : parts.back().line,
             QStringLiteral("the template ends before {% %1 %}").arg(until.last()));
    return out;
}

QString where(const QString& name, int line) {
    return QStringLiteral("%1, chat template line %2").arg(name).arg(line);
}

} // namespace

Expected<ChatTemplate> ChatTemplate::parse(const QString& source, const QString& name) {
    if (source.size() > kMaxSource)
        return makeError(ErrorCode::Unsupported,
                         QStringLiteral("%1: the chat template is %2 characters long, more than "
                                        "the %3 Tandem reads")
                             .arg(name)
                             .arg(source.size())
                             .arg(kMaxSource));
    try {
        const std::vector<Part> parts = cut(source);
        size_t i = 0;
        QString ended;
        std::unique_ptr<Lexer> l;
        auto root = std::make_shared<Node>();
        root->kind = Node::Block;
        root->bodies.push_back(parseNodes(parts, i, {}, &ended, &l));
        ChatTemplate t;
        t.m_root = root;
        t.m_name = name;
        return t;
    } catch (const TemplateError& e) {
        return makeError(ErrorCode::Unsupported, QStringLiteral("%1: %2; Tandem cannot use this "
                                                                "template")
                                                     .arg(where(name, e.line), e.what));
    }
}

Expected<QString> ChatTemplate::render(const std::vector<ChatMessage>& messages,
                                       bool addGenerationPrompt, const QString& bosToken,
                                       const QString& eosToken) const {
    Scope scope;
    List list;
    for (const ChatMessage& m : messages)
        list.push_back(Value(Map{{QStringLiteral("role"), Value(m.role)},
                                 {QStringLiteral("content"), Value(m.content)}}));
    scope.frames[0].insert(QStringLiteral("messages"), Value(list));
    scope.frames[0].insert(QStringLiteral("add_generation_prompt"), Value(addGenerationPrompt));
    scope.frames[0].insert(QStringLiteral("bos_token"), Value(bosToken));
    scope.frames[0].insert(QStringLiteral("eos_token"), Value(eosToken));
    QString out;
    try {
        run(m_root->bodies[0], scope, out);
    } catch (const TemplateError& e) {
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("%1: %2").arg(where(m_name, e.line), e.what));
    }
    return out;
}

} // namespace tandem
