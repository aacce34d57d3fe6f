#include "net/pairing.h"

#include "common/failpoint.h"
#include "net/identity.h"

#include <QCryptographicHash>
#include <QLoggingCategory>

#include <openssl/rand.h>

Q_LOGGING_CATEGORY(lcPairing, "tandem.pairing")

namespace tandem {

QString pairStateName(PairState s) {
    switch (s) {
    case PairState::Start:
        return QStringLiteral("start");
    case PairState::AwaitRequest:
        return QStringLiteral("awaiting request");
    case PairState::AwaitNonce:
        return QStringLiteral("awaiting nonce");
    case PairState::AwaitReveal:
        return QStringLiteral("awaiting reveal");
    case PairState::AwaitUser:
        return QStringLiteral("awaiting confirmation");
    case PairState::AwaitPeerDecision:
        return QStringLiteral("awaiting the other side");
    case PairState::Paired:
        return QStringLiteral("paired");
    case PairState::Failed:
        return QStringLiteral("failed");
    }
    return {};
}

namespace {
QByteArray randomNonce() {
    QByteArray n(32, Qt::Uninitialized);
    if (RAND_bytes(reinterpret_cast<unsigned char*>(n.data()), int(n.size())) != 1)
        return {};
    return n;
}
} // namespace

QByteArray PairingSession::commitment(const QString& initiatorId, const QByteArray& nonce) {
    // Bound to the initiator's certificate: a commitment replayed from another session (or
    // another device) cannot be opened by the attacker who replays it.
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData("tandem-pair-commit-v1");
    h.addData(initiatorId.toLatin1());
    h.addData(nonce);
    return h.result();
}

QString PairingSession::deriveCode(const QString& initiatorId, const QString& responderId,
                                   const QByteArray& initiatorNonce,
                                   const QByteArray& responderNonce) {
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData("tandem-pair-code-v1");
    h.addData(initiatorId.toLatin1());
    h.addData(responderId.toLatin1());
    h.addData(initiatorNonce);
    h.addData(responderNonce);
    const QByteArray d = h.result();
    const quint64 v = (quint64(uchar(d[0])) << 32) | (quint64(uchar(d[1])) << 24) |
                      (quint64(uchar(d[2])) << 16) | (quint64(uchar(d[3])) << 8) |
                      quint64(uchar(d[4]));
    return QStringLiteral("%1").arg(v % 1000000, 6, 10, QLatin1Char('0'));
}

PairingSession::PairingSession(Role role, Connection* connection, const QString& myId,
                               const QString& myName, const QString& home, PairingPrompt* prompt,
                               QObject* parent)
    : QObject(parent)
    , m_role(role)
    , m_conn(connection)
    , m_myId(myId)
    , m_myName(myName)
    , m_home(home)
    , m_prompt(prompt)
    , m_state(role == Role::Initiator ? PairState::Start : PairState::AwaitRequest) {
    m_timer.setSingleShot(true);
    m_timer.setInterval(60000);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        fail(PairFailure::Timeout,
             QStringLiteral("pairing timed out after %1 s; start again on both machines")
                 .arg(m_timer.interval() / 1000));
    });
    connect(m_conn, &Connection::received, this, &PairingSession::onMessage);
    connect(m_conn, &Connection::closed, this, [this](const QString& reason) {
        if (m_state == PairState::Start) // never connected: the TLS handshake did not finish
            fail(PairFailure::ConnectionLost,
                 QStringLiteral("cannot reach the other device (%1)").arg(reason), false);
        else if (m_state != PairState::Paired && m_state != PairState::Failed)
            fail(PairFailure::ConnectionLost,
                 QStringLiteral("the other device closed the connection (%1)").arg(reason), false);
    });
}

void PairingSession::start() {
    m_timer.start();
    m_myNonce = randomNonce();
    if (m_myNonce.isEmpty()) {
        fail(PairFailure::Interference, QStringLiteral("no secure random numbers are available"));
        return;
    }
    if (m_role == Role::Initiator) {
        m_conn->send(wire::PairRequest{commitment(m_myId, m_myNonce), m_myName});
        m_state = PairState::AwaitNonce;
    }
}

void PairingSession::onMessage(const wire::Message& m) {
    if (const auto* d = std::get_if<wire::PairDecision>(&m)) {
        if (m_state != PairState::AwaitUser && m_state != PairState::AwaitPeerDecision) {
            fail(PairFailure::Interference,
                 QStringLiteral("the other device answered before the code was shown"));
            return;
        }
        if (!d->accepted) {
            fail(PairFailure::RejectedByPeer,
                 QStringLiteral("the other device's user rejected the code"), false);
            return;
        }
        m_peerAccepted = true;
        if (m_state == PairState::AwaitPeerDecision)
            complete();
        return;
    }
    if (const auto* r = std::get_if<wire::Reject>(&m)) {
        fail(PairFailure::PeerRefused,
             QStringLiteral("the other device refused: %1").arg(r->message), false);
        return;
    }
    switch (m_state) {
    case PairState::AwaitRequest:
        if (const auto* req = std::get_if<wire::PairRequest>(&m)) {
            if (req->commitment.size() != 32) {
                fail(PairFailure::Interference, QStringLiteral("a malformed pairing request"));
                return;
            }
            m_peerCommitment = req->commitment;
            m_peerName = req->displayName;
            if (TANDEM_FAILPOINT("pairing.exchange")) {
                fail(PairFailure::Interference, QStringLiteral("failpoint pairing.exchange"));
                return;
            }
            m_conn->send(wire::PairNonce{m_myNonce, m_myName});
            m_state = PairState::AwaitReveal;
            return;
        }
        break;
    case PairState::AwaitNonce:
        if (const auto* n = std::get_if<wire::PairNonce>(&m)) {
            if (n->nonce.size() != 32) {
                fail(PairFailure::Interference, QStringLiteral("a malformed pairing nonce"));
                return;
            }
            m_peerNonce = n->nonce;
            m_peerName = n->displayName;
            m_conn->send(wire::PairReveal{m_myNonce});
            m_code = deriveCode(m_myId, m_conn->peerId(), m_myNonce, m_peerNonce);
            askUser();
            return;
        }
        break;
    case PairState::AwaitReveal:
        if (const auto* rv = std::get_if<wire::PairReveal>(&m)) {
            // The initiator's nonce must be the one it committed to before it saw ours.
            if (commitment(m_conn->peerId(), rv->nonce) != m_peerCommitment) {
                fail(PairFailure::Interference,
                     QStringLiteral(
                         "the other device's answer does not match what it committed to; "
                         "someone may be interfering with the network. Nothing was paired."));
                return;
            }
            m_peerNonce = rv->nonce;
            m_code = deriveCode(m_conn->peerId(), m_myId, m_peerNonce, m_myNonce);
            askUser();
            return;
        }
        break;
    case PairState::Start:
    case PairState::AwaitUser:
    case PairState::AwaitPeerDecision:
    case PairState::Paired:
    case PairState::Failed:
        break;
    }
    fail(PairFailure::Interference, QStringLiteral("an unexpected %1 during pairing (%2)")
                                        .arg(wire::messageName(m), pairStateName(m_state)));
}

void PairingSession::askUser() {
    m_state = PairState::AwaitUser;
    PairingQuestion q{m_code, m_peerName, m_conn->peerId(), m_conn->peerAddress()};
    QPointer<PairingSession> self(this);
    m_prompt->ask(q, [self](bool yes) {
        if (self)
            self->onUserAnswer(yes);
    });
}

void PairingSession::onUserAnswer(bool yes) {
    if (m_state != PairState::AwaitUser)
        return;
    if (!yes) {
        m_conn->send(wire::PairDecision{false});
        fail(PairFailure::RejectedHere,
             QStringLiteral("the code was rejected here; nothing was paired"), false);
        return;
    }
    m_conn->send(wire::PairDecision{true});
    m_state = PairState::AwaitPeerDecision;
    if (m_peerAccepted)
        complete();
}

void PairingSession::complete() {
    if (auto st = TrustStore(m_home).add(m_conn->peerId(), m_peerName); !st) {
        fail(PairFailure::Storage, st.error().message);
        return;
    }
    m_state = PairState::Paired;
    m_timer.stop();
    qCDebug(lcPairing) << "paired with" << m_conn->peerId();
    Q_EMIT finished(true, QStringLiteral("paired with %1 (device %2)")
                              .arg(m_peerName, shortDeviceIdText(m_conn->peerId())));
}

void PairingSession::fail(PairFailure kind, const QString& why, bool tellPeer) {
    if (m_state == PairState::Failed || m_state == PairState::Paired)
        return;
    m_state = PairState::Failed;
    m_error = why;
    m_failure = kind;
    m_timer.stop();
    if (tellPeer)
        m_conn->send(wire::Reject{wire::RejectCode::Protocol, why});
    Q_EMIT finished(false, why);
}

} // namespace tandem
