#include "engine/workerclient.h"

#include "engine/devices.h"
#include "engine/training.h"
#include "engine/worker/session.h"
#include "net/identity.h"

#include <QCoreApplication>
#include <QHostInfo>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <memory>
#include <vector>

namespace tandem {

namespace {
std::atomic<bool> g_leave{false};

extern "C" void onLeaveSignal(int) {
    g_leave.store(true); // only an atomic store: anything else is not async-signal-safe
}
} // namespace

int runWorker(const WorkerOptions& options, const std::function<void(const QString&)>& log) {
    QString threadWarning;
    setTorchThreads(options.threads, &threadWarning);
    if (!threadWarning.isEmpty())
        log(threadWarning);
    const QList<DeviceInfo> found = detectDevices();
    if (options.holdsOnly && !options.devices.trimmed().isEmpty()) {
        log(QStringLiteral("--hold-only computes nothing, so it takes no --device or --devices: "
                           "the range it holds stays in this machine's memory"));
        return 2;
    }
    // A machine that only holds keeps its copy of the weights in memory, not on an accelerator.
    auto devices = options.holdsOnly ? chooseDevices(found, QStringLiteral("cpu"))
                   : options.devices.trimmed().isEmpty()
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
    if (const int last =
            std::max(options.shardPort, options.shardAdvertisedPort) + int(devices->size()) - 1;
        options.shardPort + options.shardAdvertisedPort > 0 && last > 65535) {
        log(QStringLiteral("%1 workers take %1 ports from --shard-port or --shard-advertise, "
                           "which would pass 65535: choose a lower port")
                .arg(devices->size()));
        return 2;
    }
    for (int k = 0; k < int(devices->size()); ++k) {
        const DeviceInfo& d = devices->at(k);
        WorkerOptions o = options;
        // Each worker listens on a port of its own for a sharded run's links.
        o.shardPort = options.shardPort ? quint16(options.shardPort + k) : 0;
        o.shardAdvertisedPort =
            options.shardAdvertisedPort ? quint16(options.shardAdvertisedPort + k) : 0;
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
    // SIGTERM (the app's Stop lending, a service manager) and Ctrl+C leave the run: the
    // coordinator hears it at once and goes on without this machine, and the machine's
    // History records its part of the run as ended, not interrupted.
    g_leave.store(false);
    std::signal(SIGINT, onLeaveSignal);
#if defined(SIGTERM)
    std::signal(SIGTERM, onLeaveSignal);
#endif
    QTimer leave;
    QObject::connect(&leave, &QTimer::timeout, [&clients, &leave] {
        if (!g_leave.load())
            return;
        leave.stop();
        for (auto& c : clients)
            c->leave(QStringLiteral("this machine stopped lending to the run"));
    });
    leave.start(100);
    QCoreApplication::exec();
#if defined(SIGTERM)
    std::signal(SIGTERM, SIG_DFL);
#endif
    std::signal(SIGINT, SIG_DFL);
    int code = 0;
    for (const auto& c : clients)
        code = code != 0 ? code : c->exitCode();
    return code;
}

} // namespace tandem
