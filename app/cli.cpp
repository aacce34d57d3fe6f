#include "app/cli.h"

#include <algorithm>
#include <cstdio>

#if defined(Q_OS_UNIX)
#include <sys/ioctl.h>
#include <unistd.h>
#endif

namespace tandem::cli {

void printErr(const QString& s) {
    fprintf(stderr, "tandem: %s\n", qPrintable(s));
    fflush(stderr);
}

void printOut(const QString& s) {
    fprintf(stdout, "%s\n", qPrintable(s));
    fflush(stdout);
}

void say(const QString& s) {
    fprintf(stderr, "%s\n", qPrintable(s));
    fflush(stderr);
}

int fail(const Error& e) {
    printErr(e.message);
    return e.code == ErrorCode::InvalidArgument ? kUsage : kFailed;
}

bool Parser::addOption(const QCommandLineOption& option) {
    m_options << option;
    return QCommandLineParser::addOption(option);
}

void Parser::addPositionalArgument(const QString& name, const QString& description) {
    m_arguments.emplace_back(name, description);
    QCommandLineParser::addPositionalArgument(name, description);
}

QString Parser::help(const QString& command, int width) const {
    QString usage = QStringLiteral("tandem %1 [options]").arg(command);
    for (const auto& a : m_arguments)
        usage += QLatin1Char(' ') + a.first.toUpper();
    QString out = QStringLiteral("Usage: ") + usage + QLatin1Char('\n');
    if (!applicationDescription().isEmpty())
        out += QLatin1Char('\n') + wrap(applicationDescription(), width, 0);
    if (!m_arguments.isEmpty()) {
        out += QStringLiteral("\nArguments:\n");
        for (const auto& a : m_arguments)
            out += QStringLiteral("  ") + a.first.toUpper() + QLatin1Char('\n') +
                   wrap(a.second, width, 6);
    }
    out += QStringLiteral("\nOptions:\n");
    for (const QCommandLineOption& o : m_options) {
        QStringList names;
        for (const QString& n : o.names())
            names << (n.size() == 1 ? QStringLiteral("-") : QStringLiteral("--")) + n;
        QString line = QStringLiteral("  ") + names.join(QStringLiteral(", "));
        if (!o.valueName().isEmpty())
            line += QLatin1Char(' ') + o.valueName();
        out += line + QLatin1Char('\n') + wrap(o.description(), width, 6);
    }
    return out;
}

QString wrap(const QString& text, int width, int indent) {
    const QString pad(indent, QLatin1Char(' '));
    QString out, line;
    for (const QString& word : text.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        if (!line.isEmpty() && indent + line.size() + 1 + word.size() > width) {
            out += pad + line + QLatin1Char('\n');
            line.clear();
        }
        line += (line.isEmpty() ? QString() : QStringLiteral(" ")) + word;
    }
    if (!line.isEmpty())
        out += pad + line + QLatin1Char('\n');
    return out;
}

int helpWidth() {
    int w = qEnvironmentVariableIntValue("COLUMNS");
#if defined(Q_OS_UNIX)
    winsize ws{};
    if (w <= 0 && isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0)
        w = ws.ws_col;
#endif
    return w <= 0 ? 80 : std::clamp(w, 60, 100);
}

bool parse(Parser& p, const QString& command, const QStringList& args, const QString& description,
           int* exit, bool positional) {
    p.setApplicationDescription(description);
    p.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help."));
    p.addOption(help);
    p.addOption({QStringLiteral("home"),
                 QStringLiteral("This node's home folder (identity, trust store, caches)."),
                 QStringLiteral("DIR")});
    QStringList full = args;
    full.prepend(QStringLiteral("tandem ") + command);
    if (!p.parse(full)) {
        printErr(QStringLiteral("%1: %2 (see 'tandem %1 --help')").arg(command, p.errorText()));
        *exit = kUsage;
        return false;
    }
    if (p.isSet(help)) {
        fputs(p.help(command, helpWidth()).toUtf8().constData(), stdout);
        *exit = kOk;
        return false;
    }
    if (!positional && !p.positionalArguments().isEmpty()) {
        printErr(QStringLiteral("%1: unexpected argument \"%2\"")
                     .arg(command, p.positionalArguments().first()));
        *exit = kUsage;
        return false;
    }
    return true;
}

} // namespace tandem::cli
