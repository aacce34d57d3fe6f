#pragma once

#include <QCommandLineOption>
#include <QList>
#include <QString>
#include <QStringList>

namespace tandem {

// The command line of `tandem worker`, in one place: the options the command reads, and the
// arguments a node writes when it starts a worker for an invitation, so that the two cannot
// drift apart.
struct WorkerCommand {
    QString host;
    quint16 port = 0;
    QString home;
    QString cacheDir;  // empty: the worker's default
    QString modelsDir; // empty: none
    QString name;      // empty: the host name
    QString devices;   // empty: the best device
    QString events;    // "-": typed events on stdout (WorkerOptions::events); empty: none

    // "worker --connect HOST:PORT --home …", the arguments after the program.
    QStringList arguments() const;
    // The options of `tandem worker` (--home is every command's).
    static QList<QCommandLineOption> options();
};

} // namespace tandem
