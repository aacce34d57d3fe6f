#include "node/workercommand.h"

#include "common/ports.h"

#include <QCommandLineParser>

namespace tandem {

namespace {
const QString kConnect = QStringLiteral("connect"), kHome = QStringLiteral("home"),
              kCache = QStringLiteral("cache"), kModels = QStringLiteral("models"),
              kName = QStringLiteral("name"), kDevices = QStringLiteral("devices"),
              kEvents = QStringLiteral("events");

QString dashed(const QString& option) {
    return QStringLiteral("--") + option;
}
} // namespace

QStringList WorkerCommand::arguments() const {
    QStringList args{QStringLiteral("worker"), dashed(kConnect), hostPort(host, port)};
    const std::pair<const QString&, const QString&> optional[] = {
        {kHome, home}, {kCache, cacheDir},  {kModels, modelsDir},
        {kName, name}, {kDevices, devices}, {kEvents, events}};
    for (const auto& [option, value] : optional)
        if (!value.isEmpty())
            args << dashed(option) << value;
    return args;
}

QList<QCommandLineOption> WorkerCommand::options() {
    return {{kConnect, QStringLiteral("The coordinator's address."), QStringLiteral("HOST:PORT")},
            {QStringLiteral("threads"), QStringLiteral("LibTorch threads [one per core]."),
             QStringLiteral("N")},
            {kName, QStringLiteral("The name the coordinator shows for this machine [host name]."),
             QStringLiteral("NAME")},
            {kCache,
             QStringLiteral("Folder for datasets and base models received from "
                            "coordinators [HOME/cache]."),
             QStringLiteral("DIR")},
            {kModels,
             QStringLiteral("A Hugging Face model folder, or a folder of them, to take a "
                            "run's base model from instead of receiving it."),
             QStringLiteral("DIR")},
            {QStringLiteral("reconnect"),
             QStringLiteral("Seconds to keep trying to reach the coordinator [60]."),
             QStringLiteral("S")},
            {QStringLiteral("coordinator-timeout"),
             QStringLiteral("Take the coordinator for lost after this many seconds of "
                            "silence [60]."),
             QStringLiteral("S")},
            {QStringLiteral("max-batch"),
             QStringLiteral("The most samples this device takes per step [no limit]."),
             QStringLiteral("N")},
            {QStringLiteral("hold-only"),
             QStringLiteral("Join a sharded run only to hold a range of its weights and "
                            "optimizer state, and compute nothing.")},
            {QStringLiteral("shard-port"),
             QStringLiteral("Listen on PORT for the other machines of a sharded run, e.g. "
                            "for a firewall rule [any free port]."),
             QStringLiteral("PORT")},
            {QStringLiteral("shard-advertise"),
             QStringLiteral("Tell the other machines of a sharded run to reach this one at "
                            "PORT, where a port forward in front of it listens [--shard-port]."),
             QStringLiteral("PORT")},
            {QStringLiteral("device"),
             QStringLiteral("The device to compute on: cuda:N, mps or cpu [the best]."),
             QStringLiteral("DEVICE")},
            {kEvents,
             QStringLiteral("Write what happens in the run as JSON lines to FILE, or to stdout "
                            "with -."),
             QStringLiteral("FILE|-")},
            {kDevices,
             QStringLiteral("One worker per device: all (every GPU), or a list such as "
                            "cuda:0,cuda:1."),
             QStringLiteral("LIST")}};
}

} // namespace tandem
