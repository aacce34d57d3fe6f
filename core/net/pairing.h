#pragma once

#include "net/connection.h"
#include "net/truststore.h"

#include <QObject>
#include <QTimer>

#include <functional>

namespace tandem {

// What a person is asked when two devices pair: the code both screens show, and who the
// other device says it is (its name is a hint; its device ID is what TLS proved).
struct PairingQuestion {
    QString code; // six digits
    QString peerName;
    QString peerId;
    QString peerAddress;
};

// The core never shows a dialog: it asks through this. The GUI answers with a dialog, the
// command line with a y/n prompt, tests by script. `answer` may be called later, from the
// same thread, at most once.
class PairingPrompt {
public:
    virtual ~PairingPrompt() = default;
    virtual void ask(const PairingQuestion& q, std::function<void(bool)> answer) = 0;
};

enum class PairState {
    Start,             // initiator, before the request
    AwaitRequest,      // responder: waits for the initiator's commitment
    AwaitNonce,        // initiator: committed, waits for the responder's nonce
    AwaitReveal,       // responder: revealed its nonce, waits for the initiator's
    AwaitUser,         // both: the code is shown, waits for this side's person
    AwaitPeerDecision, // both: this side said yes, waits for the other side
    Paired,            // both said yes: each now trusts the other's device ID
    Failed,
};
QString pairStateName(PairState s);

// Why an attempt failed, so a front end can say what to do next in its own words.
enum class PairFailure {
    None,
    Timeout,        // nobody answered within the time limit
    RejectedByPeer, // the other person said the codes differ
    RejectedHere,   // this side's person said the codes differ
    PeerRefused,    // the other node refused (busy, rate limited, not accepting)
    ConnectionLost, // the connection closed or could not be made
    Interference,   // a commitment did not match, or the peer broke the protocol
    Storage,        // the trust store could not be written
};

// One pairing attempt over an open TLS connection (certificates exchanged, not yet trusted).
// Short authenticated string with commitments, as Bluetooth's numeric comparison: the
// initiator commits to its nonce Na before it sees Nb; the responder reveals Nb before it sees
// Na; both show code = 6 digits of SHA-256(idI, idR, Na, Nb). A man in the middle holds two
// different TLS sessions, so the two codes match only if it guessed, with probability 1e-6
// per attempt, and nothing it sees lets it test guesses offline. The code is never used as a
// key.
class PairingSession : public QObject {
    Q_OBJECT

public:
    enum class Role { Initiator, Responder };

    PairingSession(Role role, Connection* connection, const QString& myId, const QString& myName,
                   const QString& home, PairingPrompt* prompt, QObject* parent = nullptr);

    void start();
    // Feeds a message that arrived before the session existed (the request that made a node
    // start a responder session).
    void handle(const wire::Message& m) { onMessage(m); }
    PairState state() const { return m_state; }
    QString code() const { return m_code; }
    QString error() const { return m_error; }
    PairFailure failure() const { return m_failure; }
    void setTimeout(int ms) { m_timer.setInterval(ms); }

    // Exposed for tests: the commitment and the code from their inputs.
    static QByteArray commitment(const QString& initiatorId, const QByteArray& nonce);
    static QString deriveCode(const QString& initiatorId, const QString& responderId,
                              const QByteArray& initiatorNonce, const QByteArray& responderNonce);

Q_SIGNALS:
    void finished(bool paired, const QString& message);

private:
    void onMessage(const wire::Message& m);
    void askUser();
    void onUserAnswer(bool yes);
    void complete();
    void fail(PairFailure kind, const QString& why, bool tellPeer = true);

    Role m_role;
    Connection* m_conn;
    QString m_myId, m_myName, m_home;
    PairingPrompt* m_prompt;
    PairState m_state;
    QTimer m_timer;
    QByteArray m_myNonce, m_peerNonce, m_peerCommitment;
    QString m_peerName;
    QString m_code;
    QString m_error;
    PairFailure m_failure = PairFailure::None;
    bool m_peerAccepted = false;
};

} // namespace tandem
