#pragma once

// What every command shares: how it parses its arguments, says what went wrong, and which
// exit code it returns (0 success, 1 the work failed, 2 the command line itself was wrong).

#include "common/expected.h"

#include <QCommandLineParser>
#include <QString>
#include <QStringList>

#include <type_traits>
#include <utility>

namespace tandem::cli {

constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kUsage = 2;

// "tandem: MESSAGE" on stderr.
void printErr(const QString& s);
// A line on stdout, flushed (the summaries scripts read).
void printOut(const QString& s);
// A line on stderr as it is (progress and log lines).
void say(const QString& s);

// A command's parser that keeps the options and arguments it was given, so that the command's
// help is written from exactly what it parses: in UTF-8, wrapped between words to the terminal.
class Parser : public QCommandLineParser {
public:
    bool addOption(const QCommandLineOption& option);
    void addPositionalArgument(const QString& name, const QString& description);
    const QList<QCommandLineOption>& options() const { return m_options; }
    // "Usage: tandem COMMAND [options] ARGS", the description, then each option with its value
    // and its text below it, no line wider than `width` (a single word longer than that stays
    // whole).
    QString help(const QString& command, int width) const;

private:
    QList<QCommandLineOption> m_options;
    QList<std::pair<QString, QString>> m_arguments; // name, description
};

// `text` in lines of at most `width` columns, each indented by `indent`, broken between words.
QString wrap(const QString& text, int width, int indent);
// The width help is wrapped to: $COLUMNS, or the terminal's, or 80; at least 60, at most 100.
int helpWidth();

// Says what failed and returns its exit code: kUsage for a wrong argument, kFailed otherwise.
int fail(const Error& e);
inline int usage(const QString& message) {
    return fail(makeError(ErrorCode::InvalidArgument, message));
}

// Parses a command's arguments, with --help and --home added. Returns false when the command
// should exit now with `*exit`: after --help (kOk) or a wrong command line (kUsage).
// Positional arguments are refused unless `positional`.
bool parse(Parser& p, const QString& command, const QStringList& args, const QString& description,
           int* exit, bool positional = false);

// Reads numeric options, each against its range; the first problem lands in `error`.
struct OptionReader {
    QCommandLineParser& p;
    QString error;

    template <typename T> void read(const char* name, T& dst, double lo, double hi) {
        const QString n = QLatin1String(name);
        if (!error.isEmpty() || !p.isSet(n))
            return;
        const QString v = p.value(n);
        bool ok = false;
        double d;
        if constexpr (std::is_floating_point_v<T>) {
            d = v.toDouble(&ok);
        } else {
            const qlonglong i = v.toLongLong(&ok);
            d = double(i);
        }
        if (!ok) {
            error = QStringLiteral("--%1: \"%2\" is not a %3")
                        .arg(n, v,
                             std::is_floating_point_v<T> ? QStringLiteral("number")
                                                         : QStringLiteral("whole number"));
            return;
        }
        if (d < lo || d > hi) {
            error = QStringLiteral("--%1: %2 is outside %3..%4").arg(n, v).arg(lo).arg(hi);
            return;
        }
        if constexpr (std::is_floating_point_v<T>)
            dst = static_cast<T>(d);
        else
            dst = static_cast<T>(v.toLongLong());
    }
};

} // namespace tandem::cli
