#include "commands.h"

#include "version.h"

#include <QCoreApplication>
#include <QLoggingCategory>

int main(int argc, char** argv) {
    // Diagnostics stay quiet unless asked for (QT_LOGGING_RULES="tandem.*.debug=true").
    QLoggingCategory::setFilterRules(QStringLiteral("tandem.*.debug=false"));
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("Tandem"));
    QCoreApplication::setOrganizationName(QStringLiteral("Tandem"));
    QCoreApplication::setApplicationVersion(tandem::appVersion());
    return tandem::cli::run(QCoreApplication::arguments());
}
