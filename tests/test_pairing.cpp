// The pairing state machine over real TLS on loopback: both sides confirm, either side
// rejects, a timeout, a tampered reveal, a replayed commitment and messages out of order.

#include "net/connection.h"
#include "net/identity.h"
#include "net/pairing.h"
#include "net/server.h"
#include "net/truststore.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace tandem;

namespace {

// Answers as scripted: yes, no, or never (to let the timeout fire). Records what it was shown
// and the session's state at the time.
class ScriptedPrompt : public PairingPrompt {
public:
    enum class Answer { Yes, No, Never };
    explicit ScriptedPrompt(Answer a)
        : m_answer(a) {}
    void ask(const PairingQuestion& q, std::function<void(bool)> answer) override {
        shown = q;
        asked = true;
        if (m_answer != Answer::Never)
            QTimer::singleShot(0, [answer, yes = m_answer == Answer::Yes] { answer(yes); });
    }
    PairingQuestion shown;
    bool asked = false;

private:
    Answer m_answer;
};

} // namespace

class TestPairing : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void codeDerivation();
    void bothConfirm();
    void responderRejects();
    void initiatorRejects();
    void timeout();
    void tamperedReveal();
    void replayedCommitment();
    void decisionBeforeTheCode();
    void manInTheMiddleIsCaught();

private:
    struct Pair {
        std::unique_ptr<Server> server;
        Connection* client = nullptr;
        Connection* serverSide = nullptr;
    };
    Pair connect(const Identity& serverId, const Identity& clientId);
    QString home(const char* n) { return m_tmp.filePath(QLatin1String(n)); }

    QTemporaryDir m_tmp;
    Identity m_a, m_b, m_c;
};

void TestPairing::initTestCase() {
    m_a = Identity::loadOrCreate(home("a")).value();
    m_b = Identity::loadOrCreate(home("b")).value();
    m_c = Identity::loadOrCreate(home("c")).value();
}

void TestPairing::init() {
    for (const char* h : {"a", "b", "c"})
        QFile::remove(TrustStore(home(h)).path());
}

TestPairing::Pair TestPairing::connect(const Identity& serverId, const Identity& clientId) {
    Pair p;
    p.server = std::make_unique<Server>(serverId);
    if (!p.server->listenOn(QHostAddress::LocalHost, 0).ok())
        return p;
    QSignalSpy accepted(p.server.get(), &Server::connectionSecured);
    p.client = Connection::connectTo(QStringLiteral("127.0.0.1"), p.server->serverPort(), clientId,
                                     p.server.get());
    QSignalSpy secured(p.client, &Connection::secured);
    if (!accepted.wait(20000))
        return p;
    if (p.client->state() != Connection::State::Secured && !secured.wait(20000))
        return p;
    p.serverSide = accepted.first().first().value<Connection*>();
    return p;
}

void TestPairing::codeDerivation() {
    const QByteArray n1(32, '\1'), n2(32, '\2');
    const QString c = PairingSession::deriveCode(m_a.deviceId(), m_b.deviceId(), n1, n2);
    QCOMPARE(c.size(), 6);
    QVERIFY(c.toInt() >= 0);
    QCOMPARE(PairingSession::deriveCode(m_a.deviceId(), m_b.deviceId(), n1, n2), c);
    QVERIFY(PairingSession::deriveCode(m_b.deviceId(), m_a.deviceId(), n1, n2) != c);
    QVERIFY(PairingSession::deriveCode(m_a.deviceId(), m_b.deviceId(), n2, n1) != c);
    QVERIFY(PairingSession::commitment(m_a.deviceId(), n1) !=
            PairingSession::commitment(m_c.deviceId(), n1));
    // Codes spread over the whole range: 2000 random nonces hit many distinct codes.
    QSet<QString> codes;
    for (int i = 0; i < 2000; ++i)
        codes.insert(
            PairingSession::deriveCode(m_a.deviceId(), m_b.deviceId(), QByteArray::number(i), n2));
    QVERIFY(codes.size() > 1990);
}

void TestPairing::bothConfirm() {
    Pair p = connect(m_b, m_a);
    QVERIFY(p.serverSide);
    ScriptedPrompt yesA(ScriptedPrompt::Answer::Yes), yesB(ScriptedPrompt::Answer::Yes);
    PairingSession initiator(PairingSession::Role::Initiator, p.client, m_a.deviceId(),
                             QStringLiteral("laptop"), home("a"), &yesA);
    PairingSession responder(PairingSession::Role::Responder, p.serverSide, m_b.deviceId(),
                             QStringLiteral("desktop"), home("b"), &yesB);
    QCOMPARE(initiator.state(), PairState::Start);
    QCOMPARE(responder.state(), PairState::AwaitRequest);
    QSignalSpy doneA(&initiator, &PairingSession::finished),
        doneB(&responder, &PairingSession::finished);
    responder.start();
    initiator.start();
    QCOMPARE(initiator.state(), PairState::AwaitNonce);
    QVERIFY(doneA.wait(20000) || !doneA.isEmpty());
    if (doneB.isEmpty())
        QVERIFY(doneB.wait(20000));
    QCOMPARE(initiator.state(), PairState::Paired);
    QCOMPARE(responder.state(), PairState::Paired);
    // Both screens showed the same code, and the names each side announced.
    QVERIFY(yesA.asked && yesB.asked);
    QCOMPARE(yesA.shown.code, yesB.shown.code);
    QCOMPARE(yesA.shown.peerName, QStringLiteral("desktop"));
    QCOMPARE(yesB.shown.peerName, QStringLiteral("laptop"));
    QCOMPARE(yesA.shown.peerId, m_b.deviceId());
    QVERIFY(TrustStore(home("a")).contains(m_b.deviceId()));
    QVERIFY(TrustStore(home("b")).contains(m_a.deviceId()));
}

void TestPairing::responderRejects() {
    Pair p = connect(m_b, m_a);
    QVERIFY(p.serverSide);
    ScriptedPrompt yes(ScriptedPrompt::Answer::Yes), no(ScriptedPrompt::Answer::No);
    PairingSession initiator(PairingSession::Role::Initiator, p.client, m_a.deviceId(),
                             QStringLiteral("a"), home("a"), &yes);
    PairingSession responder(PairingSession::Role::Responder, p.serverSide, m_b.deviceId(),
                             QStringLiteral("b"), home("b"), &no);
    QSignalSpy doneA(&initiator, &PairingSession::finished);
    responder.start();
    initiator.start();
    QVERIFY(doneA.wait(20000));
    QCOMPARE(initiator.state(), PairState::Failed);
    QCOMPARE(responder.state(), PairState::Failed);
    QVERIFY2(initiator.error().contains(QStringLiteral("rejected the code")),
             qPrintable(initiator.error()));
    QVERIFY(!TrustStore(home("a")).contains(m_b.deviceId()));
    QVERIFY(!TrustStore(home("b")).contains(m_a.deviceId()));
}

void TestPairing::initiatorRejects() {
    Pair p = connect(m_b, m_a);
    QVERIFY(p.serverSide);
    ScriptedPrompt no(ScriptedPrompt::Answer::No), yes(ScriptedPrompt::Answer::Yes);
    PairingSession initiator(PairingSession::Role::Initiator, p.client, m_a.deviceId(),
                             QStringLiteral("a"), home("a"), &no);
    PairingSession responder(PairingSession::Role::Responder, p.serverSide, m_b.deviceId(),
                             QStringLiteral("b"), home("b"), &yes);
    QSignalSpy doneB(&responder, &PairingSession::finished);
    responder.start();
    initiator.start();
    QVERIFY(doneB.wait(20000));
    QCOMPARE(responder.state(), PairState::Failed);
    QCOMPARE(initiator.state(), PairState::Failed);
    QVERIFY(!TrustStore(home("b")).contains(m_a.deviceId()));
}

void TestPairing::timeout() {
    Pair p = connect(m_b, m_a);
    QVERIFY(p.serverSide);
    ScriptedPrompt yes(ScriptedPrompt::Answer::Yes), never(ScriptedPrompt::Answer::Never);
    PairingSession initiator(PairingSession::Role::Initiator, p.client, m_a.deviceId(),
                             QStringLiteral("a"), home("a"), &yes);
    PairingSession responder(PairingSession::Role::Responder, p.serverSide, m_b.deviceId(),
                             QStringLiteral("b"), home("b"), &never);
    responder.setTimeout(800);
    QSignalSpy doneB(&responder, &PairingSession::finished),
        doneA(&initiator, &PairingSession::finished);
    responder.start();
    initiator.start();
    // The code is on both screens; the initiator said yes and waits for the other side.
    QVERIFY(QTest::qWaitFor(
        [&] { return never.asked && initiator.state() == PairState::AwaitPeerDecision; }, 20000));
    QCOMPARE(responder.state(), PairState::AwaitUser);
    QVERIFY(doneB.wait(20000));
    QVERIFY2(responder.error().contains(QStringLiteral("timed out")),
             qPrintable(responder.error()));
    // The initiator said yes and waited; the responder's failure reaches it.
    if (doneA.isEmpty())
        QVERIFY(doneA.wait(20000));
    QCOMPARE(initiator.state(), PairState::Failed);
    QVERIFY(!TrustStore(home("a")).contains(m_b.deviceId()));
}

void TestPairing::tamperedReveal() {
    // An initiator that reveals another nonce than it committed to (what a man in the middle
    // must do to steer the code) is caught by the responder.
    Pair p = connect(m_b, m_a);
    QVERIFY(p.serverSide);
    ScriptedPrompt yes(ScriptedPrompt::Answer::Yes);
    PairingSession responder(PairingSession::Role::Responder, p.serverSide, m_b.deviceId(),
                             QStringLiteral("b"), home("b"), &yes);
    QSignalSpy done(&responder, &PairingSession::finished);
    responder.start();
    QObject::connect(p.client, &Connection::received, this, [&](const wire::Message& m) {
        if (std::holds_alternative<wire::PairNonce>(m))
            p.client->send(wire::PairReveal{QByteArray(32, '\x02')});
    });
    p.client->send(
        wire::PairRequest{PairingSession::commitment(m_a.deviceId(), QByteArray(32, '\x01')),
                          QStringLiteral("mitm")});
    QVERIFY(done.wait(20000));
    QCOMPARE(responder.state(), PairState::Failed);
    QVERIFY2(responder.error().contains(QStringLiteral("does not match what it committed to")),
             qPrintable(responder.error()));
    QVERIFY(!yes.asked); // no code was ever shown
    QVERIFY(!TrustStore(home("b")).contains(m_a.deviceId()));
}

void TestPairing::replayedCommitment() {
    // Device C replays A's commitment and even A's nonce: the commitment is bound to A's
    // certificate, so it does not open on C's connection.
    Pair p = connect(m_b, m_c);
    QVERIFY(p.serverSide);
    ScriptedPrompt yes(ScriptedPrompt::Answer::Yes);
    PairingSession responder(PairingSession::Role::Responder, p.serverSide, m_b.deviceId(),
                             QStringLiteral("b"), home("b"), &yes);
    QSignalSpy done(&responder, &PairingSession::finished);
    responder.start();
    const QByteArray nonceA(32, '\x07');
    QObject::connect(p.client, &Connection::received, this, [&](const wire::Message& m) {
        if (std::holds_alternative<wire::PairNonce>(m))
            p.client->send(wire::PairReveal{nonceA});
    });
    p.client->send(
        wire::PairRequest{PairingSession::commitment(m_a.deviceId(), nonceA), QStringLiteral("a")});
    QVERIFY(done.wait(20000));
    QCOMPARE(responder.state(), PairState::Failed);
    QVERIFY(!yes.asked);
    QVERIFY(!TrustStore(home("b")).contains(m_c.deviceId()));
}

void TestPairing::decisionBeforeTheCode() {
    Pair p = connect(m_b, m_a);
    QVERIFY(p.serverSide);
    ScriptedPrompt yes(ScriptedPrompt::Answer::Yes);
    PairingSession responder(PairingSession::Role::Responder, p.serverSide, m_b.deviceId(),
                             QStringLiteral("b"), home("b"), &yes);
    QSignalSpy done(&responder, &PairingSession::finished);
    responder.start();
    p.client->send(wire::PairRequest{QByteArray(32, '\x03'), QStringLiteral("eager")});
    p.client->send(wire::PairDecision{true});
    QVERIFY(done.wait(20000));
    QCOMPARE(responder.state(), PairState::Failed);
    QVERIFY2(responder.error().contains(QStringLiteral("before the code was shown")),
             qPrintable(responder.error()));
}

void TestPairing::manInTheMiddleIsCaught() {
    // C sits between A and B with its own certificate (it cannot present theirs) and relays
    // every pairing message unchanged. B sees C's certificate, and A's commitment is bound to
    // A's, so it does not open: B stops before it shows any code.
    Pair toC = connect(m_c, m_a); // A believes it talks to B; it talks to C
    Pair toB = connect(m_b, m_c); // C talks to B as itself
    QVERIFY(toC.serverSide && toB.serverSide);
    QObject::connect(toC.serverSide, &Connection::received, this,
                     [&](const wire::Message& m) { toB.client->send(m); });
    QObject::connect(toB.client, &Connection::received, this,
                     [&](const wire::Message& m) { toC.serverSide->send(m); });
    ScriptedPrompt a(ScriptedPrompt::Answer::Yes), b(ScriptedPrompt::Answer::Yes);
    PairingSession initiator(PairingSession::Role::Initiator, toC.client, m_a.deviceId(),
                             QStringLiteral("a"), home("a"), &a);
    PairingSession responder(PairingSession::Role::Responder, toB.serverSide, m_b.deviceId(),
                             QStringLiteral("b"), home("b"), &b);
    QSignalSpy doneB(&responder, &PairingSession::finished),
        doneA(&initiator, &PairingSession::finished);
    responder.start();
    initiator.start();
    QVERIFY(doneB.wait(20000));
    QCOMPARE(responder.state(), PairState::Failed);
    QVERIFY(!b.asked);
    if (doneA.isEmpty())
        QVERIFY(doneA.wait(20000));
    QCOMPARE(initiator.state(), PairState::Failed);
    // Had C re-committed in its own name, the codes would differ: each binds the certificates
    // its side actually sees.
    const QByteArray na(32, '\x01'), nb(32, '\x02');
    QVERIFY(PairingSession::deriveCode(m_a.deviceId(), m_c.deviceId(), na, nb) !=
            PairingSession::deriveCode(m_c.deviceId(), m_b.deviceId(), na, nb));
    QVERIFY(!TrustStore(home("a")).contains(m_c.deviceId()));
    QVERIFY(!TrustStore(home("b")).contains(m_c.deviceId()));
}

QTEST_GUILESS_MAIN(TestPairing)
#include "test_pairing.moc"
