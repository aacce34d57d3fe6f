// Identity, the trust store and the TLS transport on loopback: two nodes that talk, and the
// connections the listener must drop (junk bytes, no certificate, silence, too many at once).

#include "net/blobpipe.h"
#include "net/connection.h"
#include "net/discovery.h"
#include "net/identity.h"
#include "net/server.h"
#include "net/truststore.h"
#include "node/workercommand.h"

#include <QCommandLineParser>

#include <QElapsedTimer>
#include <QFile>
#include <QNetworkDatagram>
#include <QSignalSpy>
#include <QSslSocket>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QUdpSocket>

#include <atomic>
#include <cstring>
#include <thread>

using namespace tandem;

namespace {
// `n` bytes that differ from their neighbours, so that a part out of place shows.
QByteArray patterned(int n, int step) {
    QByteArray b(n, Qt::Uninitialized);
    for (int i = 0; i < n; ++i)
        b[i] = char(i * step + 1);
    return b;
}
} // namespace

class TestNet : public QObject {
    Q_OBJECT

private:
    void securedPair(Server& server, Connection** client, Connection** serverSide);

private Q_SLOTS:
    void initTestCase();
    void identityIsMadeOnceAndKept();
    void trustStore();
    void hostPort();
    void workerCommandReadsWhatANodeWrites();
    void twoNodesTalkOverTls();
    void blobsTravelInParts();
    void aBlobGoesAsItsProducerFillsIt();
    void aBlobIsReadAPartAtATimeAsItGoes();
    void aPipedBlobHoldsAFewPartsAtATime();
    void aPeerThatDoesNotReadLeavesTheBlobQueued();
    void theLastMessageIsNeverDropped();
    void theLastMessageSurvivesAPeerStillTalking();
    void junkBytesAreDropped();
    void clientWithoutCertificateIsDropped();
    void silentClientTimesOut();
    void unauthenticatedConnectionsAreCapped();
    void floodFromOneAddressLeavesOthersAPath();
    void floodInTheSameBurstLeavesAPairedPeerItsSlot();
    void silentConnectionsCloseEarly();
    void damagedTrustStoreTrustsNobodyAndIsKept();
    void oversizedFrameClosesTheConnection();
    void idlePeerIsDropped();
    void discoveryFindsAndForgetsPeers();
    void discoveryAnswersANodeThatStartsLater();
    void discoveryAnswersAPeerHeardForTheFirstTime();
    void discoveryByAddress();
    void announcementsAreHintsAndCapped();

private:
    Identity make(const QString& name);
    // A client with a certificate connects from 127.0.0.1 and finishes its handshake.
    bool pairedPeerGetsIn(Server& server) {
        QSignalSpy accepted(&server, &Server::connectionSecured);
        std::unique_ptr<Connection> client(
            Connection::connectTo(QStringLiteral("127.0.0.1"), server.serverPort(), m_b));
        return accepted.wait(20000);
    }
    QTemporaryDir m_tmp;
    Identity m_a, m_b;
};

Identity TestNet::make(const QString& name) {
    auto id = Identity::loadOrCreate(m_tmp.filePath(name));
    if (!id)
        qFatal("%s", qPrintable(id.error().message));
    return *id;
}

void TestNet::initTestCase() {
    if (!QSslSocket::supportsSsl())
        QSKIP("this Qt has no TLS backend");
    m_a = make(QStringLiteral("a"));
    m_b = make(QStringLiteral("b"));
}

void TestNet::identityIsMadeOnceAndKept() {
    QVERIFY(isDeviceId(m_a.deviceId()));
    QVERIFY(m_a.deviceId() != m_b.deviceId());
    QCOMPARE(make(QStringLiteral("a")).deviceId(), m_a.deviceId()); // loaded, not remade
    QCOMPARE(deviceIdOf(m_a.certificate()), m_a.deviceId());
    const QFile key(m_tmp.filePath(QStringLiteral("a/identity/key.pem")));
    QCOMPARE(key.permissions() & (QFileDevice::ReadOther | QFileDevice::ReadGroup),
             QFileDevice::Permissions());
    QCOMPARE(m_a.key().algorithm(), QSsl::Ec);

    // A damaged identity is reported, not silently replaced (peers pinned the old one).
    const QString home = m_tmp.filePath(QStringLiteral("damaged"));
    QVERIFY(Identity::loadOrCreate(home).ok());
    QFile f(home + QStringLiteral("/identity/cert.pem"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("not a certificate");
    f.close();
    auto broken = Identity::loadOrCreate(home);
    QVERIFY(!broken.ok());
    QVERIFY(broken.error().message.contains(QStringLiteral("damaged")));
}

void TestNet::trustStore() {
    TrustStore t(m_tmp.filePath(QStringLiteral("trust")));
    QVERIFY(!t.contains(m_b.deviceId()));
    QVERIFY(t.add(m_b.deviceId().toUpper(), QStringLiteral("desktop")).ok());
    QVERIFY(t.contains(m_b.deviceId()));
    QVERIFY(t.add(m_b.deviceId()).ok()); // idempotent
    QCOMPARE(t.entries().size(), 1);
    QCOMPARE(t.entries().first().name, QStringLiteral("desktop"));
    // Another handle on the same file sees the change at once.
    QVERIFY(TrustStore(m_tmp.filePath(QStringLiteral("trust"))).contains(m_b.deviceId()));
    auto bad = t.add(QStringLiteral("1234"));
    QVERIFY(!bad.ok());
    QCOMPARE(bad.error().code, ErrorCode::InvalidArgument);
    QCOMPARE(t.remove(m_b.deviceId()).value(), true);
    QCOMPARE(t.remove(m_b.deviceId()).value(), false);
    QVERIFY(!t.contains(m_b.deviceId()));
}

void TestNet::hostPort() {
    QCOMPARE(parseHostPort(QStringLiteral("127.0.0.1:7300")).value(),
             std::make_pair(QStringLiteral("127.0.0.1"), quint16(7300)));
    QCOMPARE(parseHostPort(QStringLiteral("[::1]:0")).value().first, QStringLiteral("::1"));
    QVERIFY(!parseHostPort(QStringLiteral("7300")).ok());
    QVERIFY(!parseHostPort(QStringLiteral("host:99999")).ok());
}

void TestNet::twoNodesTalkOverTls() {
    Server server(m_a);
    QVERIFY(server.listenOn(QHostAddress::LocalHost, 0).ok());
    QSignalSpy accepted(&server, &Server::connectionSecured);
    Connection* client =
        Connection::connectTo(QStringLiteral("127.0.0.1"), server.serverPort(), m_b, this);
    QSignalSpy clientSecured(client, &Connection::secured);
    QVERIFY(accepted.wait(20000));
    if (clientSecured.isEmpty())
        QVERIFY(clientSecured.wait(20000));
    auto* serverSide = accepted.first().first().value<Connection*>();
    // Each side sees the other's certificate hash: the pinned identity.
    QCOMPARE(serverSide->peerId(), m_b.deviceId());
    QCOMPARE(clientSecured.first().first().toString(), m_a.deviceId());

    QSignalSpy got(serverSide, &Connection::received);
    wire::Hello h;
    h.displayName = QStringLiteral("laptop");
    client->send(h);
    QVERIFY(got.wait(20000));
    QCOMPARE(std::get<wire::Hello>(got.first().first().value<wire::Message>()).displayName,
             QStringLiteral("laptop"));
    delete client;
}

// A client connection to `server` and the server's side of it, both secured (null on failure).
void TestNet::securedPair(Server& server, Connection** client, Connection** serverSide) {
    QVERIFY(server.listenOn(QHostAddress::LocalHost, 0).ok());
    QSignalSpy accepted(&server, &Server::connectionSecured);
    Connection* c =
        Connection::connectTo(QStringLiteral("127.0.0.1"), server.serverPort(), m_b, this);
    QSignalSpy secured(c, &Connection::secured);
    QVERIFY(accepted.wait(20000));
    if (c->state() != Connection::State::Secured)
        QVERIFY(secured.wait(20000));
    *client = c;
    *serverSide = accepted.first().first().value<Connection*>();
}

void TestNet::blobsTravelInParts() {
    Server server(m_a);
    Connection *client = nullptr, *serverSide = nullptr;
    securedPair(server, &client, &serverSide);
    QVERIFY(client && serverSide);
    serverSide->setBlobCap(wire::BlobKind::Tensors, 5 << 20);
    const QByteArray big = patterned(int(wire::kBlobPartBytes * 3 + 17), 31);
    const uint64_t id = client->sendBlob(wire::BlobKind::Tensors, big);
    client->send(wire::DataOffer{id}); // a message after the blob marks its arrival
    QSignalSpy got(serverSide, &Connection::received);
    QVERIFY(got.wait(20000));
    QCOMPARE(serverSide->takeBlob(id).value(), big);
    // A slice of the same bytes goes as a blob of its own, its parts from the whole.
    const qint64 at = wire::kBlobPartBytes - 5, size = wire::kBlobPartBytes * 2 + 9;
    QByteArray whole = big;
    const qint64 handed = client->bytesHandedOver();
    const uint64_t slice = client->sendBlobSlice(wire::BlobKind::Tensors, whole, at, size);
    // The slice's bytes count as handed over, not the whole's (and a few headers).
    const qint64 grew = client->bytesHandedOver() - handed;
    QVERIFY2(grew >= size && grew < size + 1024, qPrintable(QString::number(grew)));
    client->send(wire::DataOffer{slice});
    QVERIFY(got.wait(20000));
    QCOMPARE(serverSide->takeBlob(slice).value(), big.mid(at, size));
    delete client;
}

// What the TLS layer has encrypted waits for the network in the TCP socket below it: counted
// with the plain text it has not encrypted yet, a peer that reads nothing leaves a blob in the
// queue, the bytes still shared with their sender, not copied into the socket's buffers.
void TestNet::aPeerThatDoesNotReadLeavesTheBlobQueued() {
    Server server(m_a);
    Connection *client = nullptr, *serverSide = nullptr;
    securedPair(server, &client, &serverSide);
    QVERIFY(client && serverSide);
    QSslSocket* stalled = serverSide->findChild<QSslSocket*>();
    QVERIFY(stalled);
    stalled->disconnect(serverSide); // nothing reads what arrives
    stalled->setReadBufferSize(64 * 1024);
    const QByteArray big(64 << 20, 'x');
    const uint64_t id = client->sendBlob(wire::BlobKind::Tensors, big);
    QTest::qWait(1500);
    QVERIFY(client->sending(id));
    // The mark, a part over it and the TLS layer's records around them at most, whatever the
    // kernel's buffers took: not the blob's 64 MiB.
    qInfo("%lld bytes in the socket's buffers", qlonglong(client->buffered()));
    QVERIFY2(client->buffered() <= 4 * wire::kBlobPartBytes,
             qPrintable(QString::number(client->buffered())));
    delete client;
}

void TestNet::aBlobGoesAsItsProducerFillsIt() {
    Server server(m_a);
    Connection *client = nullptr, *serverSide = nullptr;
    securedPair(server, &client, &serverSide);
    QVERIFY(client && serverSide);
    serverSide->setBlobCap(wire::BlobKind::Tensors, 5 << 20);
    QSignalSpy got(serverSide, &Connection::received);
    QByteArray data(int(wire::kBlobPartBytes * 2 + 5), '\0');
    char* fill = data.data(); // the producer's pointer, taken before the blob shares the bytes
    const uint64_t id = client->openBlob(wire::BlobKind::Tensors, data);
    // A frame right behind a blob still being produced passes it.
    client->send(wire::DataRequest{QString(64, QLatin1Char('f'))});
    QVERIFY(got.wait(20000));
    QCOMPARE(
        std::get<wire::DataRequest>(got.takeFirst().first().value<wire::Message>()).datasetHash,
        QString(64, QLatin1Char('f')));
    QVERIFY(!serverSide->takeBlob(id));
    // The front, then the rest, as the producer finishes them.
    std::memset(fill, 'a', size_t(wire::kBlobPartBytes) + 3);
    client->growBlob(id, wire::kBlobPartBytes + 3);
    std::memset(fill + wire::kBlobPartBytes + 3, 'b', size_t(wire::kBlobPartBytes) + 2);
    client->growBlob(id, data.size());
    client->send(wire::DataOffer{id}); // behind the blob, which is now whole: after it
    QVERIFY(got.wait(20000));
    QVERIFY(std::holds_alternative<wire::DataOffer>(got.first().first().value<wire::Message>()));
    const QByteArray arrived = serverSide->takeBlob(id).value();
    QCOMPARE(arrived.left(int(wire::kBlobPartBytes) + 3),
             QByteArray(int(wire::kBlobPartBytes) + 3, 'a'));
    QCOMPARE(arrived.mid(int(wire::kBlobPartBytes) + 3),
             QByteArray(int(wire::kBlobPartBytes) + 2, 'b'));
    delete client;
}

// A blob of a file (the model's archive a worker is sent) is read as the socket takes it, a
// part at a time, never whole; a read that fails closes the connection, saying why.
void TestNet::aBlobIsReadAPartAtATimeAsItGoes() {
    Server server(m_a);
    Connection *client = nullptr, *serverSide = nullptr;
    securedPair(server, &client, &serverSide);
    QVERIFY(client && serverSide);
    serverSide->setBlobCap(wire::BlobKind::Tensors, 5 << 20);
    const QByteArray big = patterned(int(wire::kBlobPartBytes * 3 + 17), 13);
    qint64 largestRead = 0, readBytes = 0;
    const uint64_t id = client->sendBlobFrom(wire::BlobKind::Tensors, big.size(),
                                             [&](qint64 at, qint64 n) -> Expected<QByteArray> {
                                                 largestRead = std::max(largestRead, n);
                                                 readBytes += n;
                                                 return big.mid(at, n);
                                             });
    client->send(wire::DataOffer{id});
    QSignalSpy got(serverSide, &Connection::received);
    QVERIFY(got.wait(20000));
    QCOMPARE(serverSide->takeBlob(id).value(), big);
    QCOMPARE(largestRead, wire::kBlobPartBytes);
    QCOMPARE(readBytes, qint64(big.size()));

    // The second part cannot be read: the peer hears the connection end, and this side says why.
    QSignalSpy closed(client, &Connection::closed);
    QSignalSpy peerClosed(serverSide, &Connection::closed);
    client->sendBlobFrom(wire::BlobKind::Tensors, big.size(),
                         [&](qint64 at, qint64 n) -> Expected<QByteArray> {
                             if (at > 0)
                                 return makeError(ErrorCode::Io, QStringLiteral("disk gone"));
                             return big.mid(at, n);
                         });
    QVERIFY(closed.count() > 0 || closed.wait(20000));
    QVERIFY2(closed.first().first().toString().contains(QStringLiteral("disk gone")),
             qPrintable(closed.first().first().toString()));
    QVERIFY(peerClosed.count() > 0 || peerClosed.wait(20000));
    QVERIFY(!serverSide->takeBlob(id + 1));
    delete client;
}

// A blob made on another thread (a range's optimizer state on its way to the coordinator) goes
// through a pipe that holds a few parts of it at once: its maker waits while the socket drains
// them, and a maker whose connection is gone is told so instead of waiting for ever.
void TestNet::aPipedBlobHoldsAFewPartsAtATime() {
    Server server(m_a);
    Connection *client = nullptr, *serverSide = nullptr;
    securedPair(server, &client, &serverSide);
    QVERIFY(client && serverSide);
    serverSide->setBlobCap(wire::BlobKind::Tensors, 32 << 20);
    const QByteArray big = patterned(int(wire::kBlobPartBytes * 12 + 17), 7);
    // Parts of the pipe that do not line up with the wire's.
    const qint64 cap = 2 * wire::kBlobPartBytes, chunk = wire::kBlobPartBytes / 2 + 3;
    auto pipe = std::make_shared<BlobPipe>(cap, chunk);
    const uint64_t id = client->openBlobFrom(wire::BlobKind::Tensors, big.size(),
                                             BlobPipe::readerOf(pipe, big.size()));
    bool wrote = false;
    std::thread maker([&] {
        bool ok = true;
        for (qint64 at = 0; ok && at < big.size();) {
            const qint64 n = std::min<qint64>(big.size() - at, 300'001);
            ok = pipe->write(big.constData() + at, n);
            at += n;
            const qint64 ready = pipe->ready();
            QMetaObject::invokeMethod(
                client, [client, id, ready] { client->growBlob(id, ready); }, Qt::QueuedConnection);
        }
        pipe->close();
        const qint64 ready = pipe->ready();
        QMetaObject::invokeMethod(
            client,
            [client, id, ready] {
                client->growBlob(id, ready);
                client->send(wire::DataOffer{id});
            },
            Qt::QueuedConnection);
        wrote = ok;
    });
    QSignalSpy got(serverSide, &Connection::received);
    QVERIFY(got.wait(60000));
    maker.join();
    QVERIFY(wrote);
    QCOMPARE(serverSide->takeBlob(id).value(), big);
    QVERIFY(!pipe->cancelled()); // read to its end: its reader went without cancelling it
    qInfo("the pipe held %lld bytes at most of %lld", qlonglong(pipe->heldPeak()),
          qlonglong(big.size()));
    QVERIFY2(pipe->heldPeak() < cap + chunk, qPrintable(QString::number(pipe->heldPeak())));

    // The connection goes while the maker waits for room: its writes fail, and it ends.
    auto stuck = std::make_shared<BlobPipe>(cap, chunk);
    client->openBlobFrom(wire::BlobKind::Tensors, big.size(),
                         BlobPipe::readerOf(stuck, big.size()));
    std::atomic<bool> refused{false};
    std::thread waiting([&] { refused = !stuck->write(big.constData(), big.size()); });
    QTRY_VERIFY_WITH_TIMEOUT(stuck->ready() >= cap, 20000); // it fills the pipe, then waits
    delete client;
    waiting.join();
    QVERIFY(refused);
    QVERIFY(stuck->cancelled());
}

// Closing drops what is still queued, but never the last message (the Bye that tells a worker
// why the run ended): queued behind held-back blobs, it would be lost, and the worker would
// take the closed socket for a lost link and try to reconnect.
void TestNet::theLastMessageIsNeverDropped() {
    Server server(m_a);
    Connection *client = nullptr, *serverSide = nullptr;
    securedPair(server, &client, &serverSide);
    QVERIFY(client && serverSide);
    QSignalSpy got(serverSide, &Connection::received);
    // A blob still being produced holds back the blob behind it, and every frame behind that.
    QByteArray producing(int(wire::kBlobPartBytes) * 2, '\0');
    client->openBlob(wire::BlobKind::Tensors, producing);
    client->sendBlob(wire::BlobKind::Tensors, QByteArray(100, 'x'));
    // A Bye that sends the worker away to connect again says so.
    client->close(QStringLiteral("the run ended"),
                  wire::Bye{QStringLiteral("the run ended"), /*again=*/true});
    QVERIFY(got.wait(20000));
    const auto m = got.first().first().value<wire::Message>();
    QVERIFY(std::holds_alternative<wire::Bye>(m));
    QCOMPARE(std::get<wire::Bye>(m).reason, QStringLiteral("the run ended"));
    QVERIFY(std::get<wire::Bye>(m).again);
    delete client;
}

// A coordinator that ends a run while its worker is still sending (a result, a ping) must not
// reset the connection: closing a socket with the peer's bytes unread in the kernel sends a
// reset, which throws away the Bye before the worker reads it. The closing side waits for the
// peer to hang up, dropping what it still sends.
void TestNet::theLastMessageSurvivesAPeerStillTalking() {
    Server server(m_a);
    Connection *client = nullptr, *serverSide = nullptr;
    securedPair(server, &client, &serverSide);
    QVERIFY(client && serverSide);
    QSignalSpy got(serverSide, &Connection::received);
    QSignalSpy serverClosed(serverSide, &Connection::closed);
    wire::Hello chatter;
    chatter.displayName = QString(400, QLatin1Char('c'));
    for (int round = 0; round < 10; ++round) {
        for (int i = 0; i < 200; ++i)
            serverSide->send(chatter);
        QCoreApplication::processEvents();
    }
    client->close(QStringLiteral("the run ended"), wire::Bye{QStringLiteral("the run ended")});
    for (int i = 0; i < 1000; ++i)
        serverSide->send(chatter);
    QTRY_VERIFY_WITH_TIMEOUT(!got.isEmpty() || !serverClosed.isEmpty(), 20000);
    QVERIFY2(!got.isEmpty(), "the connection ended without the Bye");
    const auto m = got.first().first().value<wire::Message>();
    QVERIFY(std::holds_alternative<wire::Bye>(m));
    delete client;
}

void TestNet::junkBytesAreDropped() {
    Server server(m_a);
    QVERIFY(server.listenOn(QHostAddress::LocalHost, 0).ok());
    QSignalSpy accepted(&server, &Server::connectionSecured);
    QTcpSocket raw;
    raw.connectToHost(QHostAddress::LocalHost, server.serverPort());
    QVERIFY(raw.waitForConnected(20000));
    raw.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n" + QByteArray(4096, '\x16'));
    // The server shares this thread: wait by spinning the event loop.
    QTRY_VERIFY_WITH_TIMEOUT(raw.state() == QAbstractSocket::UnconnectedState, 20000);
    QCOMPARE(accepted.size(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(server.unauthenticated(), 0, 20000);
}

void TestNet::clientWithoutCertificateIsDropped() {
    Server server(m_a);
    QVERIFY(server.listenOn(QHostAddress::LocalHost, 0).ok());
    QSignalSpy accepted(&server, &Server::connectionSecured);
    QSslSocket anon;
    QSslConfiguration c = QSslConfiguration::defaultConfiguration();
    c.setProtocol(QSsl::TlsV1_3OrLater);
    c.setPeerVerifyMode(QSslSocket::QueryPeer);
    anon.setSslConfiguration(c);
    anon.connectToHostEncrypted(QStringLiteral("127.0.0.1"), server.serverPort());
    // The handshake may complete from the client's view; the server closes it right after.
    QTRY_VERIFY_WITH_TIMEOUT(anon.state() == QAbstractSocket::UnconnectedState, 20000);
    QCOMPARE(accepted.size(), 0);
}

void TestNet::silentClientTimesOut() {
    Server server(m_a);
    server.setHandshakeTimeout(500);
    QVERIFY(server.listenOn(QHostAddress::LocalHost, 0).ok());
    QTcpSocket silent;
    silent.connectToHost(QHostAddress::LocalHost, server.serverPort());
    QVERIFY(silent.waitForConnected(20000));
    QTRY_COMPARE_WITH_TIMEOUT(server.unauthenticated(), 1, 20000);
    QTRY_VERIFY_WITH_TIMEOUT(silent.state() == QAbstractSocket::UnconnectedState, 20000);
    QCOMPARE(server.unauthenticated(), 0);
}

void TestNet::unauthenticatedConnectionsAreCapped() {
    Server server(m_a);
    server.setMaxUnauthenticated(3);
    server.setSilentTimeout(600000); // this test is about the cap, not the silence
    QVERIFY(server.listenOn(QHostAddress::LocalHost, 0).ok());
    std::vector<std::unique_ptr<QTcpSocket>> socks;
    for (int i = 0; i < 6; ++i) {
        socks.push_back(std::make_unique<QTcpSocket>());
        socks.back()->connectToHost(QHostAddress::LocalHost, server.serverPort());
        QVERIFY(socks.back()->waitForConnected(20000));
    }
    // Never more than three wait for their handshake: the oldest made room for the newest.
    QTRY_VERIFY_WITH_TIMEOUT(std::count_if(socks.begin(), socks.end(),
                                           [](const auto& s) {
                                               return s->state() ==
                                                      QAbstractSocket::UnconnectedState;
                                           }) == 3,
                             20000);
    QCOMPARE(server.unauthenticated(), 3);
    QVERIFY(socks[0]->state() == QAbstractSocket::UnconnectedState);
    // A real peer gets in while the silent ones hold every slot.
    QVERIFY(pairedPeerGetsIn(server));
    QVERIFY(server.refusedTotal() >= 4);
}

void TestNet::floodFromOneAddressLeavesOthersAPath() {
    Server server(m_a);
    server.setMaxPerAddress(4);
    server.setSilentTimeout(600000);
    QVERIFY(server.listenOn(QHostAddress::Any, 0).ok());
    // Ten silent connections from 127.0.0.2: only four are kept waiting.
    std::vector<std::unique_ptr<QTcpSocket>> socks;
    for (int i = 0; i < 10; ++i) {
        socks.push_back(std::make_unique<QTcpSocket>());
        socks.back()->bind(QHostAddress(QStringLiteral("127.0.0.2")), 0);
        socks.back()->connectToHost(QHostAddress::LocalHost, server.serverPort());
        QVERIFY(socks.back()->waitForConnected(20000));
    }
    QTRY_COMPARE_WITH_TIMEOUT(server.unauthenticated(), 4, 20000);
    QTRY_COMPARE_WITH_TIMEOUT(server.refusedTotal(), qint64(6), 20000);
    // A peer from another address is not affected.
    QVERIFY(pairedPeerGetsIn(server));
}

void TestNet::floodInTheSameBurstLeavesAPairedPeerItsSlot() {
    // A flood from many addresses reconnects faster than the server accepts, so a paired
    // peer's connection arrives in one burst of accepts with many of the flood's, and the slots
    // churn before its ClientHello is read. It keeps its slot anyway.
    Server server(m_a);
    server.setMaxUnauthenticated(8);
    server.setSilentTimeout(600000);
    QVERIFY(server.listenOn(QHostAddress::Any, 0).ok());
    std::vector<std::unique_ptr<QTcpSocket>> flood;
    // 40 connections from 40 addresses, left in the kernel's backlog (which holds 50): the
    // server's event loop does not run in between.
    const auto wave = [&] {
        for (int i = 0; i < 40; ++i) {
            flood.push_back(std::make_unique<QTcpSocket>());
            flood.back()->bind(QHostAddress(QStringLiteral("127.0.2.%1").arg(1 + i)), 0);
            flood.back()->connectToHost(QHostAddress::LocalHost, server.serverPort());
            if (!flood.back()->waitForConnected(20000))
                return false;
        }
        return true;
    };
    // Two waves give every address of the flood a record of refusals.
    QVERIFY(wave());
    QTRY_COMPARE_WITH_TIMEOUT(server.refusedTotal(), qint64(32), 20000);
    QVERIFY(wave());
    QTRY_COMPARE_WITH_TIMEOUT(server.refusedTotal(), qint64(72), 20000);
    QSignalSpy accepted(&server, &Server::connectionSecured);
    // The peer's TCP connection completes in the kernel at once, just ahead of a third wave.
    std::unique_ptr<Connection> peer(
        Connection::connectTo(QStringLiteral("127.0.0.1"), server.serverPort(), m_b));
    QVERIFY(wave());
    QVERIFY(accepted.wait(20000));
    // Each of the wave's 40 was refused or made room for another, and so did the peer.
    QTRY_COMPARE_WITH_TIMEOUT(server.refusedTotal(), qint64(113), 20000);
    QVERIFY(server.unauthenticated() <= 8);
}

void TestNet::silentConnectionsCloseEarly() {
    Server server(m_a);
    server.setSilentTimeout(300); // the handshake timeout stays at its 10 s
    QVERIFY(server.listenOn(QHostAddress::LocalHost, 0).ok());
    QTcpSocket silent;
    silent.connectToHost(QHostAddress::LocalHost, server.serverPort());
    QVERIFY(silent.waitForConnected(20000));
    QElapsedTimer t;
    t.start();
    QTRY_VERIFY_WITH_TIMEOUT(silent.state() == QAbstractSocket::UnconnectedState, 20000);
    QVERIFY2(t.elapsed() < 9000, qPrintable(QString::number(t.elapsed())));
    QCOMPARE(server.unauthenticated(), 0);
    // A client that started its handshake is not cut off as silent while it completes.
    QVERIFY(pairedPeerGetsIn(server));
}

void TestNet::damagedTrustStoreTrustsNobodyAndIsKept() {
    const QString home = m_tmp.filePath(QStringLiteral("damaged-trust"));
    TrustStore t(home);
    QVERIFY(t.add(m_b.deviceId(), QStringLiteral("desktop")).ok());
    QFile f(t.path());
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"devices\": [{\"id\": \"");
    f.close();
    auto loaded = t.load();
    QVERIFY(!loaded.ok());
    QCOMPARE(loaded.error().code, ErrorCode::Corrupt);
    QVERIFY2(loaded.error().message.contains(t.path()) &&
                 loaded.error().message.contains(QStringLiteral("damaged")),
             qPrintable(loaded.error().message));
    QVERIFY(!t.contains(m_b.deviceId()));
    // Adding to it would replace the devices it held with one: refused, file untouched.
    QVERIFY(!t.add(m_a.deviceId()).ok());
    QVERIFY(!t.remove(m_b.deviceId()).ok());
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), QByteArray("{\"devices\": [{\"id\": \""));
}

void TestNet::oversizedFrameClosesTheConnection() {
    Server server(m_a);
    QVERIFY(server.listenOn(QHostAddress::LocalHost, 0).ok());
    QSignalSpy accepted(&server, &Server::connectionSecured);
    Connection* client =
        Connection::connectTo(QStringLiteral("127.0.0.1"), server.serverPort(), m_b, this);
    QVERIFY(accepted.wait(20000));
    auto* serverSide = accepted.first().first().value<Connection*>();
    QSignalSpy closed(serverSide, &Connection::closed);
    QSignalSpy secured(client, &Connection::secured);
    if (client->state() != Connection::State::Secured)
        QVERIFY(secured.wait(20000));
    // A blob part of a kind the server never asked for: refused, connection closed.
    client->sendBlob(wire::BlobKind::Model, QByteArray(10, 'x'));
    QVERIFY(closed.wait(20000));
    QVERIFY2(closed.first().first().toString().contains(QStringLiteral("unexpected blob kind")),
             qPrintable(closed.first().first().toString()));
    delete client;
}

void TestNet::idlePeerIsDropped() {
    Server server(m_a);
    QVERIFY(server.listenOn(QHostAddress::LocalHost, 0).ok());
    QSignalSpy accepted(&server, &Server::connectionSecured);
    Connection* client =
        Connection::connectTo(QStringLiteral("127.0.0.1"), server.serverPort(), m_b, this);
    QVERIFY(accepted.wait(20000));
    auto* serverSide = accepted.first().first().value<Connection*>();
    QSignalSpy closed(serverSide, &Connection::closed);
    serverSide->setIdleTimeout(1000);
    // The client answers pings while its event loop runs; block it to play dead.
    QSignalSpy secured(client, &Connection::secured);
    if (client->state() != Connection::State::Secured)
        QVERIFY(secured.wait(20000));
    QVERIFY(!closed.wait(2500)); // alive: pongs arrive
    client->blockSignals(true);
    delete client; // gone without a word: the socket closes
    QVERIFY(closed.size() == 1 || closed.wait(20000));
}

namespace {

quint16 freeUdpPort() {
    QUdpSocket s;
    s.bind(QHostAddress::LocalHost, 0);
    return s.localPort();
}

wire::Announcement announcement(const Identity& id, const QString& name, quint16 tcp) {
    wire::Announcement a;
    a.deviceId = id.deviceId();
    a.displayName = name;
    a.os = QStringLiteral("test");
    a.tcpPort = tcp;
    return a;
}

} // namespace

void TestNet::discoveryFindsAndForgetsPeers() {
    // Loopback broadcast only: tests never announce beyond this machine.
    const quint16 port = freeUdpPort();
    Discovery a(announcement(m_a, QStringLiteral("desktop"), 7300)),
        b(announcement(m_b, QStringLiteral("laptop"), 7301));
    for (Discovery* d : {&a, &b}) {
        d->setPort(port);
        d->setTargets({QHostAddress(QStringLiteral("127.255.255.255"))});
        d->setInterval(200);
        d->setExpiry(1500);
        QVERIFY(d->start().ok());
    }
    QTRY_COMPARE_WITH_TIMEOUT(a.peers().size(), 1, 20000);
    QTRY_COMPARE_WITH_TIMEOUT(b.peers().size(), 1, 20000);
    QCOMPARE(a.peers().first().announcement.deviceId, m_b.deviceId());
    QCOMPARE(a.peers().first().announcement.displayName, QStringLiteral("laptop"));
    QCOMPARE(a.peers().first().announcement.tcpPort, quint16(7301));
    QCOMPARE(a.peers().first().address, QHostAddress(QHostAddress::LocalHost));
    // A node does not list itself, and a peer that falls silent expires.
    b.stop();
    QTRY_COMPARE_WITH_TIMEOUT(a.peers().size(), 0, 20000);
}

void TestNet::discoveryAnswersANodeThatStartsLater() {
    // Announcements a minute apart: the node that starts second hears the first only because
    // its own first announcement is a query, answered at once. The first node then stops, as
    // `tandem peers --expect=1` does once it has found what it wanted.
    const quint16 port = freeUdpPort();
    Discovery a(announcement(m_a, QStringLiteral("first"), 1)),
        b(announcement(m_b, QStringLiteral("second"), 2));
    for (Discovery* d : {&a, &b}) {
        d->setPort(port);
        d->setTargets({QHostAddress(QStringLiteral("127.255.255.255"))});
        d->setInterval(60000);
        d->setExpiry(120000);
    }
    QVERIFY(a.start().ok());
    QTest::qWait(200); // a's first announcement has gone out, to nobody
    QVERIFY(b.start().ok());
    QTRY_COMPARE_WITH_TIMEOUT(a.peers().size(), 1, 20000);
    a.stop();
    QTRY_COMPARE_WITH_TIMEOUT(b.peers().size(), 1, 20000);
    QCOMPARE(b.peers().first().announcement.deviceId, m_a.deviceId());
    QCOMPARE(b.peers().first().announcement.displayName, QStringLiteral("first"));
}

void TestNet::discoveryAnswersAPeerHeardForTheFirstTime() {
    // A plain announcement (not a query), as a node sends every few seconds: the first one from
    // a peer is answered at once, later ones are not.
    Discovery a(announcement(m_a, QStringLiteral("a"), 1));
    a.setPort(freeUdpPort());
    a.setTargets({});
    a.setInterval(60000);
    QVERIFY(a.start().ok());
    QUdpSocket peer;
    QVERIFY(peer.bind(QHostAddress::LocalHost, 0));
    const QByteArray plain = wire::encodeAnnouncement(announcement(m_b, QStringLiteral("b"), 2));
    QSignalSpy answered(&peer, &QUdpSocket::readyRead);
    peer.writeDatagram(plain, QHostAddress::LocalHost, a.port());
    QVERIFY(answered.wait(20000));
    auto reply = wire::decodeAnnouncement(peer.receiveDatagram().data());
    QVERIFY(reply.ok());
    QCOMPARE(reply->deviceId, m_a.deviceId());
    QVERIFY(!reply->query);
    QCOMPARE(a.peers().size(), 1);
    peer.writeDatagram(plain, QHostAddress::LocalHost, a.port());
    QVERIFY(!answered.wait(1500)); // already known: no answer
    QVERIFY(!peer.hasPendingDatagrams());
}

void TestNet::discoveryByAddress() {
    // No broadcast at all (as on Wi-Fi that blocks it): a query to one address is enough.
    Discovery a(announcement(m_a, QStringLiteral("a"), 1)),
        b(announcement(m_b, QStringLiteral("b"), 2));
    a.setPort(freeUdpPort());
    b.setPort(freeUdpPort());
    a.setTargets({});
    b.setTargets({});
    QVERIFY(a.start().ok());
    QVERIFY(b.start().ok());
    QTest::qWait(300);
    QCOMPARE(a.peers().size(), 0);
    a.addAddress(QHostAddress::LocalHost, b.port());
    QTRY_COMPARE_WITH_TIMEOUT(a.peers().size(), 1, 20000);
    QTRY_COMPARE_WITH_TIMEOUT(b.peers().size(), 1, 20000);
    QCOMPARE(a.peers().first().announcement.deviceId, m_b.deviceId());
}

void TestNet::announcementsAreHintsAndCapped() {
    const quint16 port = freeUdpPort();
    Discovery a(announcement(m_a, QStringLiteral("a"), 1));
    a.setPort(port);
    a.setTargets({});
    QVERIFY(a.start().ok());
    QUdpSocket junk;
    QSignalSpy changed(&a, &Discovery::peersChanged);
    junk.writeDatagram(QByteArray("TDMA") + QByteArray(100, '\xff'), QHostAddress::LocalHost, port);
    junk.writeDatagram(QByteArray(9000, 'x'), QHostAddress::LocalHost, port);
    junk.writeDatagram(QByteArray("hello"), QHostAddress::LocalHost, port);
    // An announcement bearing our own ID is ignored; a well-formed other one is listed.
    junk.writeDatagram(wire::encodeAnnouncement(announcement(m_a, QStringLiteral("me"), 1)),
                       QHostAddress::LocalHost, port);
    wire::Announcement other = announcement(m_b, QStringLiteral("other"), 9);
    junk.writeDatagram(wire::encodeAnnouncement(other), QHostAddress::LocalHost, port);
    QVERIFY(changed.wait(20000));
    QCOMPARE(a.peers().size(), 1);
    QCOMPARE(a.peers().first().announcement.displayName, QStringLiteral("other"));
    QVERIFY(!wire::decodeAnnouncement(QByteArray(wire::kMaxAnnouncementBytes + 1, 'T')).ok());
    QCOMPARE(wire::decodeAnnouncement(wire::encodeAnnouncement(other)).value().tcpPort, quint16(9));
}

void TestNet::workerCommandReadsWhatANodeWrites() {
    // The arguments a node writes for an invited worker parse with the options `tandem worker`
    // declares, to the same values: an IPv6 host in brackets, names with spaces, every field.
    WorkerCommand w;
    w.host = QStringLiteral("fe80::1%eth0");
    w.port = 40123;
    w.home = QStringLiteral("/home/a b/.tandem");
    w.cacheDir = QStringLiteral("/tmp/cache");
    w.name = QStringLiteral("gpu desktop");
    w.devices = QStringLiteral("cuda:0,cuda:1");
    const QStringList args = w.arguments();
    QCOMPARE(args.first(), QStringLiteral("worker"));
    QCommandLineParser p;
    p.addOptions(WorkerCommand::options());
    p.addOption({QStringLiteral("home"), QString(), QStringLiteral("DIR")});
    QVERIFY2(p.parse(QStringList{QStringLiteral("tandem")} + args.mid(1)),
             qPrintable(p.errorText()));
    QVERIFY(p.positionalArguments().isEmpty());
    const auto hp = parseHostPort(p.value(QStringLiteral("connect")));
    QVERIFY(hp.ok());
    QCOMPARE(hp->first, w.host);
    QCOMPARE(hp->second, w.port);
    QCOMPARE(p.value(QStringLiteral("home")), w.home);
    QCOMPARE(p.value(QStringLiteral("cache")), w.cacheDir);
    QCOMPARE(p.value(QStringLiteral("name")), w.name);
    QCOMPARE(p.value(QStringLiteral("devices")), w.devices);
    // Fields left empty are left out, so the worker uses its defaults.
    WorkerCommand bare;
    bare.host = QStringLiteral("127.0.0.1");
    bare.port = 1;
    QCOMPARE(bare.arguments(), (QStringList{QStringLiteral("worker"), QStringLiteral("--connect"),
                                            QStringLiteral("127.0.0.1:1")}));
}

QTEST_GUILESS_MAIN(TestNet)
#include "test_net.moc"
