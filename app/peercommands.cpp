// tandem identity, tandem trust and tandem peers: who this node is, whom it trusts, and who
// announces itself on the LAN.

#include "app/nodecommands.h"

#include "app/cli.h"
#include "engine/devices.h"
#include "net/discovery.h"
#include "net/identity.h"
#include "net/server.h"
#include "net/truststore.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTimer>

#include <cstdio>
#include <functional>

namespace tandem::cli {

int cmdIdentity(const QStringList& args) {
    Parser p;
    int exit = kOk;
    if (!parse(p, QStringLiteral("identity"), args,
               QStringLiteral("Prints this node's device ID (made on first use)."), &exit))
        return exit;
    const QString home = nodeHome(p.value(QStringLiteral("home")));
    auto id = Identity::loadOrCreate(home);
    if (!id)
        return fail(id.error());
    printErr(QStringLiteral("home %1").arg(home));
    printOut(id->deviceId());
    return kOk;
}

int cmdTrust(const QStringList& args) {
    Parser p;
    p.addPositionalArgument(QStringLiteral("action"), QStringLiteral("list, add or remove"));
    p.addPositionalArgument(QStringLiteral("id"), QStringLiteral("a device ID"));
    p.addOption({QStringLiteral("name"), QStringLiteral("A name to remember the device by."),
                 QStringLiteral("NAME")});
    p.setApplicationDescription(
        QStringLiteral("Lists, adds or removes the devices this node accepts."));
    p.addOption({{QStringLiteral("h"), QStringLiteral("help")}, QStringLiteral("Show this help.")});
    p.addOption({QStringLiteral("home"), QStringLiteral("This node's home folder."),
                 QStringLiteral("DIR")});
    QStringList full = args;
    full.prepend(QStringLiteral("tandem trust"));
    if (!p.parse(full)) {
        printErr(QStringLiteral("trust: %1").arg(p.errorText()));
        return kUsage;
    }
    if (p.isSet(QStringLiteral("help"))) {
        fputs(p.help(QStringLiteral("trust"), helpWidth()).toUtf8().constData(), stdout);
        return kOk;
    }
    const QStringList pos = p.positionalArguments();
    TrustStore store(nodeHome(p.value(QStringLiteral("home"))));
    const QString action = pos.value(0, QStringLiteral("list"));
    if (action == QLatin1String("list") && pos.size() <= 1) {
        auto list = store.load();
        if (!list)
            return fail(list.error());
        for (const TrustStore::Entry& e : *list)
            printOut(QStringLiteral("%1  %2").arg(e.id, e.name));
        return kOk;
    }
    if ((action == QLatin1String("add") || action == QLatin1String("remove")) && pos.size() == 2) {
        if (action == QLatin1String("add")) {
            if (auto st = store.add(pos[1], p.value(QStringLiteral("name"))); !st)
                return fail(st.error());
            printErr(QStringLiteral("trusting %1").arg(pos[1]));
            return kOk;
        }
        auto removed = store.remove(pos[1]);
        if (!removed)
            return fail(removed.error());
        if (!*removed) {
            printErr(QStringLiteral("%1 was not trusted").arg(pos[1]));
            return kFailed;
        }
        printErr(QStringLiteral("no longer trusting %1").arg(pos[1]));
        return kOk;
    }
    printErr(QStringLiteral("usage: tandem trust list | add ID | remove ID [--home DIR]"));
    return kUsage;
}

int cmdPeers(const QStringList& args) {
    Parser p;
    p.addOption({QStringLiteral("json"), QStringLiteral("Print a JSON array.")});
    p.addOption(
        {QStringLiteral("wait"), QStringLiteral("Seconds to listen [4]."), QStringLiteral("S")});
    p.addOption({QStringLiteral("expect"),
                 QStringLiteral("Stop listening as soon as this many peers are seen."),
                 QStringLiteral("N")});
    p.addOption({QStringLiteral("add"),
                 QStringLiteral("Also ask this address directly (networks that block broadcast)."),
                 QStringLiteral("HOST[:PORT]")});
    p.addOption({QStringLiteral("discovery-port"),
                 QStringLiteral("UDP port of announcements [%1].").arg(Discovery::kDefaultPort),
                 QStringLiteral("P")});
    p.addOption(
        {QStringLiteral("announce-to"),
         QStringLiteral(
             "Comma-separated addresses to announce to, instead of the broadcast address and "
             "the multicast groups."),
         QStringLiteral("ADDRS")});
    p.addOption({QStringLiteral("name"),
                 QStringLiteral("The name this node announces [host name]."),
                 QStringLiteral("NAME")});
    int exit = kOk;
    if (!parse(p, QStringLiteral("peers"), args,
               QStringLiteral("Lists the Tandem nodes on the LAN."), &exit))
        return exit;
    int waitS = 4, port = Discovery::kDefaultPort, expect = 0;
    OptionReader r{p, {}};
    r.read("wait", waitS, 0, 3600);
    r.read("expect", expect, 0, 100000);
    r.read("discovery-port", port, 1, 65535);
    if (!r.error.isEmpty())
        return fail(makeError(ErrorCode::InvalidArgument, r.error));
    const QString home = nodeHome(p.value(QStringLiteral("home")));
    auto id = Identity::loadOrCreate(home);
    if (!id)
        return fail(id.error());
    wire::Announcement self =
        Discovery::describeSelf(id->deviceId(), p.value(QStringLiteral("name")), detectDevices());
    self.query = true; // a listing wants answers now, not within an announcement interval
    Discovery d(self);
    d.setPort(quint16(port));
    if (p.isSet(QStringLiteral("announce-to"))) {
        QList<QHostAddress> targets;
        for (const QString& a :
             p.value(QStringLiteral("announce-to")).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            QHostAddress h(a.trimmed());
            if (h.isNull())
                return fail(
                    makeError(ErrorCode::InvalidArgument,
                              QStringLiteral("--announce-to: \"%1\" is not an IP address").arg(a)));
            targets << h;
        }
        d.setTargets(targets);
    }
    if (auto st = d.start(); !st)
        return fail(st.error());
    if (p.isSet(QStringLiteral("add"))) {
        QString host = p.value(QStringLiteral("add"));
        quint16 addPort = Discovery::kDefaultPort;
        if (auto hp = parseHostPort(host)) {
            host = hp->first;
            addPort = hp->second;
        }
        const QHostAddress h(host);
        if (h.isNull())
            return fail(makeError(ErrorCode::InvalidArgument,
                                  QStringLiteral("--add: \"%1\" is not an IP address").arg(host)));
        d.addAddress(h, addPort);
    }
    QEventLoop loop;
    QTimer::singleShot(waitS * 1000, &loop, &QEventLoop::quit);
    if (expect > 0)
        QObject::connect(&d, &Discovery::peersChanged, &loop, [&] {
            if (d.peers().size() >= expect)
                loop.quit();
        });
    loop.exec();
    const TrustStore trust(home);
    QJsonArray out;
    for (const Discovery::Peer& peer : d.peers()) {
        const wire::Announcement& a = peer.announcement;
        QJsonArray devs;
        for (const DeviceInfo& dev : a.devices)
            devs.append(dev.toJson());
        out.append(QJsonObject{{QStringLiteral("device_id"), a.deviceId},
                               {QStringLiteral("name"), a.displayName},
                               {QStringLiteral("address"), peer.address.toString()},
                               {QStringLiteral("tcp_port"), a.tcpPort},
                               {QStringLiteral("os"), a.os},
                               {QStringLiteral("app_version"), a.appVersion},
                               {QStringLiteral("protocol_version"), qint64(a.protocolVersion)},
                               {QStringLiteral("devices"), devs},
                               {QStringLiteral("paired"), trust.contains(a.deviceId)}});
    }
    if (p.isSet(QStringLiteral("json"))) {
        printOut(QString::fromUtf8(QJsonDocument(out).toJson(QJsonDocument::Indented)).trimmed());
        return kOk;
    }
    if (out.isEmpty())
        printErr(QStringLiteral(
                     "no Tandem node answered within %1 s. Is Tandem running on the other machine? "
                     "Firewalls must let UDP port %2 through; on Wi-Fi that blocks broadcast, "
                     "use --add ADDRESS.")
                     .arg(waitS)
                     .arg(port));
    for (const QJsonValue& v : out) {
        const QJsonObject o = v.toObject();
        QStringList devs;
        for (const QJsonValue& dv : o.value(QStringLiteral("devices")).toArray())
            devs << dv.toObject().value(QStringLiteral("name")).toString();
        printOut(QStringLiteral("%1  %2  %3  %4  Tandem %5  %6  [%7]")
                     .arg(o.value(QStringLiteral("device_id")).toString().left(16),
                          o.value(QStringLiteral("name")).toString(),
                          o.value(QStringLiteral("address")).toString(),
                          o.value(QStringLiteral("os")).toString(),
                          o.value(QStringLiteral("app_version")).toString(),
                          o.value(QStringLiteral("paired")).toBool() ? QStringLiteral("paired")
                                                                     : QStringLiteral("not paired"),
                          devs.join(QStringLiteral(", "))));
    }
    return kOk;
}

} // namespace tandem::cli
