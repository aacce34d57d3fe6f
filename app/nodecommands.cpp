#include "app/nodecommands.h"

#include "app/cli.h"
#include "common/ports.h"
#include "engine/devices.h"
#include "net/discovery.h"
#include "net/identity.h"
#include "net/pairing.h"
#include "net/server.h"
#include "net/truststore.h"
#include "node/nodeservice.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QHash>
#include <QHostInfo>
#include <QProcess>
#include <QSocketNotifier>
#include <QTimer>

#include <cstdio>

#if !defined(Q_OS_WIN)
#include <unistd.h>
#endif

namespace tandem::cli {

namespace {

// Asks on the terminal: shows the code and reads y or n from standard input without blocking
// the event loop (the peer's answer and the timeout must still arrive).
class TerminalPrompt : public PairingPrompt {
public:
    void ask(const PairingQuestion& q, std::function<void(bool)> answer) override {
        fprintf(stdout, "CODE %s\n", qPrintable(q.code));
        fflush(stdout);
        say(QStringLiteral("Pair with \"%1\" at %2 (device %3)?\nCheck that the other screen shows "
                           "the same code: "
                           "%4 %5\nSame code? [y/N]")
                .arg(q.peerName, q.peerAddress, q.peerId.left(16), q.code.left(3), q.code.mid(3)));
        m_answer = std::move(answer);
#if !defined(Q_OS_WIN)
        m_notifier = std::make_unique<QSocketNotifier>(STDIN_FILENO, QSocketNotifier::Read);
        QObject::connect(m_notifier.get(), &QSocketNotifier::activated, [this] {
            char buf[64] = {};
            const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf - 1);
            m_notifier->setEnabled(false);
            const QString line =
                n > 0 ? QString::fromLocal8Bit(buf, int(n)).trimmed().toLower() : QString();
            auto a = std::move(m_answer);
            if (a)
                a(line == QLatin1String("y") || line == QLatin1String("yes"));
        });
#else
        char buf[64] = {};
        const bool yes = fgets(buf, sizeof buf, stdin) && (buf[0] == 'y' || buf[0] == 'Y');
        auto a = std::move(m_answer);
        a(yes);
#endif
    }

private:
    std::function<void(bool)> m_answer;
    std::unique_ptr<QSocketNotifier> m_notifier;
};

struct Common {
    QString home;
    QString name;
    quint16 discoveryPort = Discovery::kDefaultPort;
    QList<QHostAddress> announceTo;
    bool announceToSet = false;
};

bool parseCommon(Parser& p, const QString& command, const QStringList& args,
                 const QString& description, const QList<QCommandLineOption>& extra, Common* c,
                 int* exit) {
    p.addOption({QStringLiteral("name"), QStringLiteral("The name other machines see [host name]."),
                 QStringLiteral("NAME")});
    p.addOption({QStringLiteral("discovery-port"),
                 QStringLiteral("UDP port of announcements [%1].").arg(kDiscoveryPort),
                 QStringLiteral("P")});
    p.addOption(
        {QStringLiteral("announce-to"),
         QStringLiteral(
             "Comma-separated addresses to announce to, instead of broadcast and multicast."),
         QStringLiteral("ADDRS")});
    for (const QCommandLineOption& o : extra)
        p.addOption(o);
    if (!parse(p, command, args, description, exit, true))
        return false;
    c->home = nodeHome(p.value(QStringLiteral("home")));
    c->name = p.value(QStringLiteral("name"));
    if (p.isSet(QStringLiteral("discovery-port"))) {
        bool ok = false;
        const uint v = p.value(QStringLiteral("discovery-port")).toUInt(&ok);
        if (!ok || v == 0 || v > 65535) {
            *exit = usage(QStringLiteral("--discovery-port must be 1..65535"));
            return false;
        }
        c->discoveryPort = quint16(v);
    }
    if (p.isSet(QStringLiteral("announce-to"))) {
        c->announceToSet = true;
        for (const QString& a :
             p.value(QStringLiteral("announce-to")).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            const QHostAddress h(a.trimmed());
            if (h.isNull()) {
                *exit = usage(QStringLiteral("--announce-to: \"%1\" is not an IP address").arg(a));
                return false;
            }
            c->announceTo << h;
        }
    }
    return true;
}

} // namespace

int cmdServe(const QStringList& args) {
    Parser p;
    Common c;
    int exit = 0;
    if (!parseCommon(
            p, QStringLiteral("serve"), args,
            QStringLiteral("Runs this node: announces it on the LAN and accepts pairing requests "
                           "(each is confirmed here by its code)."),
            {{QStringLiteral("listen"),
              QStringLiteral("Address for pairing requests [[::]:%1, IPv6 and IPv4].")
                  .arg(kServePort),
              QStringLiteral("HOST:PORT")},
             {QStringLiteral("headless"),
              QStringLiteral("No window (the only mode of this command for now).")},
             {QStringLiteral("devices"),
              QStringLiteral("The devices this node trains on when invited: all (one worker per "
                             "GPU), or a list such as cuda:0,cuda:1 [the best device]."),
              QStringLiteral("LIST")},
             {QStringLiteral("models"),
              QStringLiteral("A Hugging Face model folder, or a folder of them, that invited "
                             "runs take their base model from instead of receiving it."),
              QStringLiteral("DIR")}},
            &c, &exit))
        return exit;
    auto id = Identity::loadOrCreate(c.home);
    if (!id) {
        return fail(id.error());
    }
    auto hp = parseHostPort(p.isSet(QStringLiteral("listen"))
                                ? p.value(QStringLiteral("listen"))
                                : QStringLiteral("[::]:%1").arg(kServePort));
    if (!hp) {
        return usage(QStringLiteral("--listen: %1").arg(hp.error().message));
    }
    // "::" listens on IPv6 and IPv4 both, so a peer found by either kind of announcement
    // can reach it.
    NodeSettings ns;
    ns.home = c.home;
    ns.name = c.name;
    ns.devices = detectDevices();
    ns.modelsDir = p.value(QStringLiteral("models"));
    if (p.isSet(QStringLiteral("devices"))) {
        ns.workerDevices = p.value(QStringLiteral("devices"));
        if (auto chosen = chooseDevices(ns.devices, ns.workerDevices); !chosen) {
            return usage(QStringLiteral("--devices: %1").arg(chosen.error().message));
        }
    }
    ns.listenAddress = hp->first == QLatin1String("localhost")
                           ? QHostAddress(QHostAddress::LocalHost)
                       : hp->first == QLatin1String("::") ? QHostAddress(QHostAddress::Any)
                                                          : QHostAddress(hp->first);
    ns.listenPort = hp->second;
    ns.discoveryPort = c.discoveryPort;
    if (c.announceToSet)
        ns.announceTo = c.announceTo;
    TerminalPrompt prompt;
    NodeService node(ns, &prompt);
    int exitCode = 0;
    QObject::connect(&node, &NodeService::failed, [&](const QString& why) {
        printErr(why);
        exitCode = 1;
        QCoreApplication::exit(1);
    });
    QObject::connect(&node, &NodeService::started, [&](const QString& deviceId, quint16 port) {
        say(QStringLiteral("serving as %1 (%2); listening on %3:%4")
                .arg(node.displayName(), deviceId, ns.listenAddress.toString())
                .arg(port));
    });
    QObject::connect(&node, &NodeService::message, [](const QString& m) { say(m); });
    QObject::connect(&node, &NodeService::pairingFinished,
                     [](bool paired, PairFailure, const QString& msg) {
                         say(paired ? msg : QStringLiteral("pairing failed: %1").arg(msg));
                     });
    QTimer::singleShot(0, &node, &NodeService::start);
    const int rc = QCoreApplication::exec();
    return exitCode ? exitCode : rc;
}

int cmdPair(const QStringList& args) {
    Parser p;
    Common c;
    int exit = 0;
    p.addPositionalArgument(QStringLiteral("peer"),
                            QStringLiteral("ADDRESS[:PORT] or a device ID seen on the LAN"));
    if (!parseCommon(
            p, QStringLiteral("pair"), args,
            QStringLiteral(
                "Pairs with another Tandem node: both show a code, and you confirm it matches."),
            {{QStringLiteral("wait"),
              QStringLiteral("Seconds to look for a device ID on the LAN [6]."),
              QStringLiteral("S")}},
            &c, &exit))
        return exit;
    if (p.positionalArguments().size() != 1) {
        return usage(QStringLiteral("pair needs one ADDRESS[:PORT] or DEVICE-ID"));
    }
    auto id = Identity::loadOrCreate(c.home);
    if (!id) {
        return fail(id.error());
    }
    QString target = p.positionalArguments().first();
    QString host;
    quint16 port = kServePort;
    if (isDeviceId(target.toLower())) {
        // Find that device's address among the announcements.
        wire::Announcement self = Discovery::describeSelf(id->deviceId(), c.name, detectDevices());
        self.query = true;
        Discovery d(self);
        d.setPort(c.discoveryPort);
        if (c.announceToSet)
            d.setTargets(c.announceTo);
        if (auto st = d.start(); !st) {
            printErr(st.error().message);
            return kFailed;
        }
        QEventLoop loop;
        const int waitS =
            p.isSet(QStringLiteral("wait")) ? p.value(QStringLiteral("wait")).toInt() : 6;
        QTimer::singleShot(std::max(1, waitS) * 1000, &loop, &QEventLoop::quit);
        QObject::connect(&d, &Discovery::peersChanged, &loop, [&] {
            for (const Discovery::Peer& peer : d.peers())
                if (peer.announcement.deviceId == target.toLower()) {
                    host = peer.address.toString();
                    port = peer.announcement.tcpPort;
                    loop.quit();
                }
        });
        loop.exec();
        if (host.isEmpty()) {
            printErr(QStringLiteral("device %1 did not announce itself; is 'tandem serve' "
                                    "running there? Or give "
                                    "its address")
                         .arg(target.left(16)));
            return 1;
        }
    } else if (auto hp = parseHostPort(target)) {
        host = hp->first;
        port = hp->second;
    } else {
        host = target;
    }
    Connection* conn = Connection::connectTo(host, port, *id);
    TerminalPrompt prompt;
    PairingSession session(PairingSession::Role::Initiator, conn, id->deviceId(),
                           c.name.isEmpty() ? QHostInfo::localHostName() : c.name, c.home, &prompt);
    int code = 1;
    QObject::connect(&session, &PairingSession::finished, [&](bool paired, const QString& msg) {
        say(paired ? msg : QStringLiteral("tandem: pairing failed: %1").arg(msg));
        code = paired ? 0 : 1;
        QTimer::singleShot(300, [] { QCoreApplication::exit(0); });
    });
    QObject::connect(conn, &Connection::secured, &session, [&] { session.start(); });
    QObject::connect(conn, &Connection::closed, &session, [&](const QString& reason) {
        if (session.state() == PairState::Start) {
            printErr(QStringLiteral("cannot reach %1:%2: %3").arg(host).arg(port).arg(reason));
            QCoreApplication::exit(0);
        }
    });
    QCoreApplication::exec();
    delete conn;
    return code;
}

} // namespace tandem::cli
