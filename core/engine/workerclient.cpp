#include "engine/workerclient.h"

#include "engine/devices.h"
#include "engine/training.h"
#include "engine/worker/session.h"
#include "net/identity.h"

#include <QCoreApplication>
#include <QHostInfo>

#include <memory>
#include <vector>

namespace tandem {

int runWorker(const WorkerOptions& options, const std::function<void(const QString&)>& log) {
    QString threadWarning;
    setTorchThreads(options.threads, &threadWarning);
    if (!threadWarning.isEmpty())
        log(threadWarning);
    const QList<DeviceInfo> found = detectDevices();
    auto devices = options.devices.trimmed().isEmpty()
                       ? Expected<QList<DeviceInfo>>(QList<DeviceInfo>{found.first()})
                       : chooseDevices(found, options.devices);
    if (!devices) {
        log(devices.error().message);
        return 2;
    }
    auto identity = Identity::loadOrCreate(options.home);
    if (!identity) {
        log(identity.error().message);
        return 1;
    }
    // One worker per device, each with its own connection: the coordinator's balancer sees
    // each as a worker of its own and sizes its share to that device.
    const bool several = devices->size() > 1;
    std::vector<std::unique_ptr<WorkerSession>> clients;
    int running = int(devices->size());
    for (const DeviceInfo& d : *devices) {
        WorkerOptions o = options;
        const QString tag = d.torchDevice();
        if (several)
            o.name = QStringLiteral("%1 %2").arg(
                options.name.isEmpty() ? QHostInfo::localHostName() : options.name, tag);
        auto prefixed = [log, several, tag](const QString& line) {
            log(several ? QStringLiteral("[%1] %2").arg(tag, line) : line);
        };
        clients.push_back(std::make_unique<WorkerSession>(o, d, *identity, prefixed, [&running] {
            if (--running == 0)
                QCoreApplication::exit(0);
        }));
    }
    for (auto& c : clients)
        c->start();
    QCoreApplication::exec();
    int code = 0;
    for (const auto& c : clients)
        code = code != 0 ? code : c->exitCode();
    return code;
}

} // namespace tandem
