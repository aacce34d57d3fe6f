#pragma once

#include "engine/internal.h"

// Engine-internal: the links a sharded run's machines open to each other for the bytes of its
// steps (shardstep.h), beside their links to the coordinator, so that no byte of a step passes
// through the coordinator unless it owns a range.
//
// Each machine is paired with the coordinator; two of the run's other machines may never have
// been paired with each other. The coordinator, which every one of them trusts, introduces them:
// each gets the run's id, a token made for the run, and the device ID of every member (the
// SHA-256 of its certificate) with the address where it listens. A member that listens admits
// a link only from a device in that list, proven by its TLS certificate, and only with the run's
// token; a member that dials checks that the certificate at the address is the one the
// coordinator named, so neither a stranger on the LAN nor a machine from another run reaches a
// shard. A link carries only gradients and weights, which the owner checks (shardstep.h), never
// a model, code or a file. The list is the run's: a new one closes the links of devices it no
// longer names.

#include "common/expected.h"
#include "net/connection.h"
#include "net/identity.h"

#include <QByteArray>
#include <QHash>
#include <QHostAddress>
#include <QPointer>
#include <QString>
#include <QTimer>

#include <vector>

namespace tandem {

class Server;

struct ShardMember {
    QString deviceId;
    QString host;     // where it listens for links, as the coordinator sees it
    quint16 port = 0; // 0: it listens for none (it owns no range)
};

struct ShardIntroduction {
    QString runId;
    QByteArray token; // kShardTokenBytes random bytes, made by the coordinator for the run
    std::vector<ShardMember> members;

    const ShardMember* find(const QString& deviceId) const;
    // A new run's token.
    static QByteArray newToken();
};

inline constexpr int kShardTokenBytes = 32;

// A member's end that listens: it admits the links of the devices it was introduced to.
class ShardListener : public QObject {
    Q_OBJECT

public:
    explicit ShardListener(const Identity& identity, QObject* parent = nullptr);
    ~ShardListener() override;

    Status listen(const QHostAddress& address, quint16 port = 0);
    quint16 port() const;
    // Who may link from now on. A link being admitted from a device the new list does not name
    // is closed; links already handed out (linked()) are their receiver's to close.
    void introduce(const ShardIntroduction& introduction);
    // How long a secured connection may take to say which run it joins (10 s).
    void setJoinTimeout(int ms) { m_joinMs = ms; }
    // Secured connections that have not yet joined.
    int joining() const { return int(m_joining.size()); }

Q_SIGNALS:
    // An introduced device joined with the run's token. The receiver takes `link` (reparent it).
    void linked(tandem::Connection* link, const QString& deviceId);
    // A connection was refused, and why: for the log.
    void refused(const QString& why);

private:
    void onSecured(Connection* c);
    void onJoin(Connection* c, const wire::Message& m);
    void refuse(Connection* c, const QString& why);

    Server* m_server = nullptr;
    ShardIntroduction m_intro;
    int m_joinMs = 10000;
    QHash<Connection*, QTimer*> m_joining;
};

// A member's end that dials: a link to one member, checked to be the device the coordinator
// introduced, then joined with the run's token.
class ShardDial : public QObject {
    Q_OBJECT

public:
    ShardDial(const Identity& identity, const ShardIntroduction& introduction,
              const ShardMember& to, QObject* parent = nullptr);
    // How long the whole, connection to welcome, may take (10 s).
    void setTimeout(int ms) { m_timer.setInterval(ms); }
    // Only a test of the link: once the machine at the address has proven it is the member
    // named, the link closes and reached() says so; it never joins (a machine that would join
    // the run asks whether it can reach every member before the run is set up for it).
    void setProbe(bool probe) { m_probe = probe; }

Q_SIGNALS:
    // The member admitted the link. The receiver takes `link` (reparent it).
    void linked(tandem::Connection* link);
    // A probe's answer: the member named answered at its address.
    void reached();
    void failed(const QString& why);

private:
    // Closes the connection, saying `why`; nothing more is said of it.
    void end(const QString& why);
    void fail(const QString& why);

    ShardMember m_to;
    bool m_probe = false;
    QPointer<Connection> m_conn;
    QTimer m_timer;
    bool m_done = false;
};

} // namespace tandem
