#pragma once

// Debian's /usr/bin/python3 with torch (python3-torch), the interpreter of the Python references
// (tests/python).

#include "testpaths.h"

#include <QByteArray>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace testutil {

inline QString torchPython() {
    return QStringLiteral("/usr/bin/python3");
}

// Whether it has torch. It asks where the package lies rather than importing it: an import
// loads LibTorch and its libraries, seconds on a loaded machine, for each test that asks.
inline bool pythonHasTorch() {
    if (!QFileInfo::exists(torchPython()))
        return false;
    QProcess p;
    p.start(torchPython(), {QStringLiteral("-c"),
                            QStringLiteral("import importlib.util, sys; "
                                           "sys.exit(importlib.util.find_spec('torch') is None)")});
    return p.waitForFinished(120000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

// Runs a reference script, `args` its path and arguments, in the one interpreter this test
// keeps for them (tests/python/serve.py), started on first use, so that torch loads once a test
// rather than once a script. What the script printed goes to `out`; false, with the command and
// its error output in `error`, where it did not exit with 0 or the interpreter went.
inline bool runReference(const QStringList& args, QString* out, QString* error,
                         const QByteArray& input = QByteArray(), int timeoutMs = 600000) {
    static QProcess* server = nullptr;
    const QString command = torchPython() + QLatin1Char(' ') + args.join(QLatin1Char(' '));
    if (!server || server->state() != QProcess::Running) {
        delete server;
        server = new QProcess;
        server->setProcessChannelMode(QProcess::ForwardedErrorChannel);
        server->start(torchPython(), {testpaths::pythonDir() + QStringLiteral("/serve.py")});
        if (!server->waitForStarted(60000)) {
            *error = command + QStringLiteral(": cannot start ") + torchPython();
            return false;
        }
    }
    QJsonObject request{{QStringLiteral("argv"), QJsonArray::fromStringList(args)},
                        {QStringLiteral("stdin"), QString::fromUtf8(input)}};
    server->write(QJsonDocument(request).toJson(QJsonDocument::Compact) + '\n');
    while (!server->canReadLine()) {
        if (server->state() != QProcess::Running || !server->waitForReadyRead(timeoutMs)) {
            *error = command + QStringLiteral(": the references' interpreter (serve.py) ") +
                     (server->state() == QProcess::Running ? QStringLiteral("did not answer")
                                                           : QStringLiteral("ended"));
            server->kill();
            server->waitForFinished(10000);
            return false;
        }
    }
    const QJsonObject answer = QJsonDocument::fromJson(server->readLine()).object();
    if (answer.value(QStringLiteral("code")).toInt(-1) != 0) {
        *error = command + QStringLiteral(": ") + answer.value(QStringLiteral("err")).toString();
        return false;
    }
    *out = answer.value(QStringLiteral("out")).toString();
    return true;
}

} // namespace testutil
