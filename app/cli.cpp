#include "app/cli.h"

#include <cstdio>

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

bool parse(QCommandLineParser& p, const QString& command, const QStringList& args,
           const QString& description, int* exit, bool positional) {
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
        fprintf(stdout, "%s", qPrintable(p.helpText()));
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
