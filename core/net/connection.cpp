#include "net/connection.h"

#include "common/failpoint.h"

#include <QLoggingCategory>
#include <QRandomGenerator>
#include <QScopeGuard>

#include <algorithm>

namespace tandem {

Q_LOGGING_CATEGORY(lcNet, "tandem.net")

namespace {

// The socket's write buffers are refilled below this many bytes: one blob part. The TLS layer
// encrypts whatever is queued in one go, into buffers the size of the queue; with 8 MiB queued
// those buffers were fresh memory every time and a step moved a third of the bytes per second
// it moves now (bench/transport.sh). Its plain text is encrypted as soon as it is written,
// though, and waits for the network in the TCP socket below: both count (buffered()), or a peer
// slower to read than this machine to encrypt has every byte queued here copied in there, a
// range's weights and sums over a step on a sharded worker.
constexpr qint64 kHighWater = qint64(1) << 20;
// Beyond these, the peer is not reading what it is sent: the connection is closed rather than
// left to grow. Frames other than blob parts are small (control messages, assignments).
constexpr qint64 kMaxQueuedFrameBytes = qint64(64) << 20;
constexpr size_t kMaxQueuedItems = 4096;
// After a last message (a Bye, a Reject), how long the connection waits for the peer to read it
// and hang up before hanging up itself.
constexpr int kLingerMs = 2000;
// The most filler a Pong carries back, whatever a Ping asks for.
constexpr uint32_t kMaxProbeBytes = 1u << 20;

} // namespace

QSslConfiguration tlsConfiguration(const Identity& identity) {
    QSslConfiguration c = QSslConfiguration::defaultConfiguration();
    c.setProtocol(QSsl::TlsV1_3OrLater);
    c.setLocalCertificate(identity.certificate());
    c.setPrivateKey(identity.key());
    // Self-signed certificates have no authority to check; both sides request the peer's
    // certificate and pin its hash instead.
    c.setPeerVerifyMode(QSslSocket::QueryPeer);
    c.setCaCertificates({});
    return c;
}

Connection::Connection(QSslSocket* socket, QObject* parent)
    : QObject(parent)
    , m_socket(socket) {
    m_socket->setParent(this);
    m_handshakeTimer.setSingleShot(true);
    m_handshakeTimer.setInterval(15000);
    connect(&m_handshakeTimer, &QTimer::timeout, this,
            [this] { close(QStringLiteral("the TLS handshake did not finish in time")); });
    m_handshakeTimer.start();
    m_pingTimer.setInterval(2000);
    connect(&m_pingTimer, &QTimer::timeout, this, [this] {
        if (m_idleTimeoutMs > 0 && m_lastHeard.isValid() &&
            m_lastHeard.elapsed() > m_idleTimeoutMs) {
            close(
                QStringLiteral("the peer stopped answering for %1 s").arg(m_idleTimeoutMs / 1000));
            return;
        }
        send(wire::Ping{QRandomGenerator::global()->generate64()});
    });
    // Defaults: blobs are refused unless the owner says what it expects.
    m_blobs.setMaxPending(4);

    connect(m_socket, &QSslSocket::encrypted, this, &Connection::onEncrypted);
    connect(m_socket, &QSslSocket::readyRead, this, &Connection::onReadyRead);
    connect(m_socket, &QSslSocket::bytesWritten, this, &Connection::pump);
    connect(m_socket, &QSslSocket::encryptedBytesWritten, this, &Connection::pump);
    // A close or an error is acted on once the socket's own code has returned, never from
    // inside its signal. Qt's OpenSSL backend emits errorOccurred in the middle of a failed
    // handshake and goes on using its SSL object afterwards (to send the fatal alert); a slot
    // that disconnects the socket there makes the backend free that object under itself, and
    // the process dies in BIO_ctrl. Any stranger on the LAN could trigger that with one
    // 7-byte packet before authenticating.
    //
    // What is already buffered is read at once, though: a peer's last words (a Reject, a Bye)
    // often arrive together with its close, and the buffer does not outlive the signal.
    // Reading touches only that buffer, never the TLS session.
    connect(m_socket, &QSslSocket::disconnected, this, [this] {
        drain();
        QMetaObject::invokeMethod(
            this, [this] { close(QStringLiteral("the peer closed the connection")); },
            Qt::QueuedConnection);
    });
    connect(m_socket, &QSslSocket::errorOccurred, this, [this](QAbstractSocket::SocketError e) {
        drain();
        const QString reason = e == QAbstractSocket::RemoteHostClosedError || !m_socket
                                   ? QStringLiteral("the peer closed the connection")
                                   : m_socket->errorString();
        QMetaObject::invokeMethod(
            this, [this, reason] { close(reason); }, Qt::QueuedConnection);
    });
    connect(m_socket, &QSslSocket::sslErrors, this, [this](const QList<QSslError>& errors) {
        // With QueryPeer no chain is verified, so what remains are real failures.
        QStringList s;
        for (const QSslError& e : errors)
            s << e.errorString();
        qCDebug(lcNet) << "TLS errors:" << s;
    });
    if (m_socket->isEncrypted())
        QMetaObject::invokeMethod(this, &Connection::onEncrypted, Qt::QueuedConnection);
}

Connection::~Connection() = default;

Connection* Connection::connectTo(const QString& host, quint16 port, const Identity& identity,
                                  QObject* parent) {
    auto* s = new QSslSocket;
    s->setSslConfiguration(tlsConfiguration(identity));
    // The server's name is not what we check (its certificate hash is), so verification by
    // host name is off along with chain verification.
    auto* c = new Connection(s, parent);
    s->connectToHostEncrypted(host, port, QString());
    return c;
}

QString Connection::peerAddress() const {
    if (!m_socket)
        return QStringLiteral("(closed)");
    return QStringLiteral("%1:%2")
        .arg(m_socket->peerAddress().toString())
        .arg(m_socket->peerPort());
}

QString Connection::peerHost() const {
    if (!m_socket)
        return {};
    QHostAddress a = m_socket->peerAddress();
    // A dual-stack listener sees an IPv4 peer as ::ffff:a.b.c.d; the peer listens on the IPv4.
    bool v4 = false;
    const quint32 ip4 = a.toIPv4Address(&v4);
    return v4 ? QHostAddress(ip4).toString() : a.toString();
}

void Connection::setIdleTimeout(int ms) {
    m_idleTimeoutMs = ms;
    if (ms > 0) {
        m_pingTimer.setInterval(std::max(200, std::min(2000, ms / 4)));
        if (m_state == State::Secured)
            m_pingTimer.start();
    } else {
        m_pingTimer.stop();
    }
}

void Connection::onEncrypted() {
    if (m_state != State::Handshaking)
        return;
    const QSslCertificate peer = m_socket->peerCertificate();
    if (peer.isNull()) {
        close(QStringLiteral("the peer presented no certificate"));
        return;
    }
    if (m_socket->sessionProtocol() != QSsl::TlsV1_3) {
        close(QStringLiteral("the peer did not negotiate TLS 1.3"));
        return;
    }
    m_handshakeTimer.stop();
    // Control messages (an assignment, a result) follow megabytes of tensors and must not
    // wait for their acknowledgement. The kernel sizes the socket buffers itself: setting
    // them would turn its tuning off and, on Linux, cap them below what it would choose.
    m_socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    m_peerId = deviceIdOf(peer);
    m_state = State::Secured;
    m_lastHeard.start();
    if (m_idleTimeoutMs > 0)
        m_pingTimer.start();
    Q_EMIT secured(m_peerId);
    // Data that arrived with the handshake is read now.
    if (m_socket && m_socket->bytesAvailable() > 0)
        onReadyRead();
}

void Connection::deleteWhenFlushed() {
    if (!m_socket || m_socket->state() == QAbstractSocket::UnconnectedState) {
        deleteLater();
        return;
    }
    connect(m_socket, &QSslSocket::disconnected, this, &QObject::deleteLater);
    QTimer::singleShot(5000, this, [this] {
        if (m_socket)
            m_socket->abort();
        deleteLater();
    });
}

void Connection::drain() {
    if (m_state == State::Secured && m_socket && m_socket->bytesAvailable() > 0)
        onReadyRead();
}

void Connection::onReadyRead() {
    if (m_state == State::Closed && m_socket) {
        m_socket->readAll(); // lingering after a last message: what the peer still sends is dropped
        return;
    }
    if (m_state != State::Secured)
        return; // nothing is read before the peer's certificate is known
    QPointer<Connection> self(this);
    // Blob data goes from the socket's buffer straight into its blob; only control frames
    // are copied out whole.
    const wire::FrameReader::Source source = [this](char* to, qint64 max) -> qint64 {
        const qint64 n = m_socket ? m_socket->read(to, max) : 0;
        if (n <= 0)
            return 0;
        m_bytesReceived += n;
        return n;
    };
    m_lastHeard.restart();
    while (self && m_socket && m_state == State::Secured) {
        std::optional<QByteArray> payload = m_reader.next(source);
        if (m_reader.failed()) {
            m_unreadable = true;
            close(m_reader.error(), wire::Reject{wire::RejectCode::Protocol, m_reader.error()});
            return;
        }
        if (!payload)
            return;
        auto msg = wire::decode(*payload);
        if (!msg) {
            m_unreadable = true;
            close(msg.error().message,
                  wire::Reject{wire::RejectCode::Protocol, msg.error().message});
            return;
        }
        if (const auto* ping = std::get_if<wire::Ping>(&*msg)) {
            send(wire::Pong{ping->nonce, std::min(ping->echoBytes, kMaxProbeBytes)});
            continue;
        }
        if (const auto* pong = std::get_if<wire::Pong>(&*msg)) {
            onPong(*pong);
            continue;
        }
        Q_EMIT received(*msg);
    }
}

LinkProbe linkFromProbe(double rttMs, const std::vector<std::pair<double, double>>& rounds) {
    // What the filler must add to the round trip to be timed: half a millisecond, or a quarter
    // of the round trip on a link slow enough to jitter by more.
    const double timed = std::max(0.5, 0.25 * rttMs);
    LinkProbe out{rttMs, 0, false};
    double floor = 0;
    for (const auto& [ms, carried] : rounds) {
        if (ms - rttMs >= timed)
            out.bytesPerSecond = std::max(out.bytesPerSecond, carried / ((ms - rttMs) / 1000.0));
        else if (ms > 0)
            floor = std::max(floor, carried / (ms / 1000.0));
    }
    if (out.bytesPerSecond <= 0) {
        out.bytesPerSecond = floor;
        out.atLeast = true;
    }
    return out;
}

void Connection::probe(qint64 bytes, int rounds) {
    if (probing() || m_state != State::Secured)
        return;
    m_probe = Probe{};
    m_probe.stage = 0;
    m_probe.rounds = std::max(1, rounds);
    m_probe.bytes = uint32_t(std::clamp<qint64>(bytes, 1, kMaxProbeBytes));
    sendProbePing();
}

void Connection::sendProbePing() {
    m_probe.nonce = QRandomGenerator::global()->generate64();
    const uint32_t filler = m_probe.stage == 0 ? 0 : m_probe.bytes;
    send(wire::Ping{m_probe.nonce, filler, filler});
    m_probe.clock.start();
}

// The round trip of an empty ping is what every probe pays besides its bytes; what the filler
// adds to it is the time the link took to carry them.
void Connection::onPong(const wire::Pong& pong) {
    if (m_probe.stage < 0 || pong.nonce != m_probe.nonce)
        return; // a keepalive's answer
    const double ms = double(m_probe.clock.nsecsElapsed()) / 1e6;
    if (m_probe.stage == 0) {
        // The least round trip seen on this link: an empty ping that waited behind other
        // traffic would make the filler look faster than it went.
        m_minRttMs = m_minRttMs > 0 ? std::min(m_minRttMs, ms) : ms;
        m_probe.rttMs = m_minRttMs;
    } else {
        m_probe.timings.emplace_back(ms, double(m_probe.bytes) + double(pong.paddingBytes));
    }
    if (m_probe.stage < m_probe.rounds) {
        ++m_probe.stage;
        sendProbePing();
        return;
    }
    const LinkProbe result = linkFromProbe(m_probe.rttMs, m_probe.timings);
    m_probe.stage = -1;
    Q_EMIT probed(result);
}

bool Connection::shutDown() const {
    return !m_socket || m_socket->state() == QAbstractSocket::UnconnectedState;
}

bool Connection::idle() const {
    return m_outgoing.empty() && buffered() == 0;
}

qint64 Connection::buffered() const {
    return m_socket ? m_socket->bytesToWrite() + m_socket->encryptedBytesToWrite() : 0;
}

void Connection::writeFrame(const QByteArray& payload) {
    if (m_state == State::Closed || !m_socket)
        return;
    enqueue(wire::frame(payload));
}

void Connection::enqueue(const QByteArray& frame) {
    if (m_outgoing.size() >= kMaxQueuedItems ||
        m_queuedFrameBytes + frame.size() > kMaxQueuedFrameBytes) {
        close(QStringLiteral("the peer does not read what it is sent (%1 messages waiting)")
                  .arg(m_outgoing.size()));
        return;
    }
    Outgoing o;
    o.frame = frame;
    m_queuedFrameBytes += frame.size();
    m_outgoing.push_back(std::move(o));
    pump();
}

void Connection::pump() {
    // A flush inside the loop (a failpoint's) makes the socket report bytes written, which
    // calls pump() again: the inner call must not write between the halves of a frame.
    if (m_pumping)
        return;
    bool blobDone = false;
    {
        m_pumping = true;
        const auto done = qScopeGuard([this] { m_pumping = false; });
        blobDone = writeQueued();
    }
    // Outside the loop: whoever queues more on hearing it is pumped at once.
    if (blobDone)
        Q_EMIT blobSent();
}

bool Connection::writeQueued() {
    bool blobDone = false;
    while (m_socket && !m_outgoing.empty() && buffered() < kHighWater) {
        auto it = m_outgoing.begin();
        if (it->blobId != 0 && it->offset >= it->ready && it->ready < it->size) {
            // A blob still being produced: the frames right behind it may pass it (a pong
            // while a worker computes the rest of its result), but nothing behind a later
            // blob, which a frame may refer to.
            ++it;
            if (it == m_outgoing.end() || it->blobId != 0)
                return blobDone;
        }
        if (it->blobId == 0) {
            const QByteArray frame = std::move(it->frame);
            m_bytesSent += frame.size();
            m_queuedFrameBytes -= frame.size();
            m_outgoing.erase(it);
            if (TANDEM_FAILPOINT_DUE("frame.send")) {
                if (!sendHalfThenAct(frame))
                    return blobDone;
                continue;
            }
            m_socket->write(frame);
            continue;
        }
        Outgoing& o = *it;
        // The part's header, then its bytes straight from the blob: the socket copies them once,
        // into the TLS layer, and nothing else does.
        const qint64 n = std::min<qint64>(wire::kBlobPartBytes, o.ready - o.offset);
        const QByteArray head =
            wire::blobPartFrame(o.kind, o.blobId, uint64_t(o.size), uint64_t(o.offset), {}, n);
        if (o.read) {
            const Expected<QByteArray> part = o.read(o.offset, n);
            if (!part || part->size() != n) {
                close(QStringLiteral("cannot read what it sends: %1")
                          .arg(part ? QStringLiteral("%1 bytes of %2 at %3")
                                          .arg(part->size())
                                          .arg(n)
                                          .arg(o.offset)
                                    : part.error().message));
                return blobDone;
            }
            m_socket->write(head);
            m_socket->write(*part);
        } else {
            m_socket->write(head);
            m_socket->write(o.blob.constData() + o.at + o.offset, n);
        }
        m_bytesSent += head.size() + n;
        o.offset += n;
        if (o.offset >= o.size) {
            m_outgoing.pop_front();
            blobDone = true;
        }
    }
    return blobDone;
}

// A failpoint mid-frame: half the frame goes out, then the point acts. After a stall the rest
// follows; a failed send closes the connection (false).
bool Connection::sendHalfThenAct(const QByteArray& frame) {
    const qsizetype half = frame.size() / 2;
    m_socket->write(frame.constData(), half);
    m_socket->flush();
    if (TANDEM_FAILPOINT_ACT("frame.send")) {
        close(QStringLiteral("failpoint frame.send"));
        return false;
    }
    m_socket->write(frame.constData() + half, frame.size() - half);
    return true;
}

void Connection::send(const wire::Message& m) {
    if (m_state != State::Secured)
        return;
    writeFrame(wire::encode(m));
}

uint64_t Connection::sendBlob(wire::BlobKind kind, const QByteArray& data) {
    return queueBlob(kind, data, data.size());
}

uint64_t Connection::sendBlobSlice(wire::BlobKind kind, const QByteArray& whole, qint64 at,
                                   qint64 size) {
    Q_ASSERT(at >= 0 && size >= 0 && at + size <= whole.size());
    return queueBlob(kind, whole, size, at, size);
}

uint64_t Connection::queueBlob(wire::BlobKind kind, const QByteArray& data, qint64 ready, qint64 at,
                               qint64 size) {
    Outgoing o;
    o.blob = data; // shared with the caller, not copied
    o.kind = uint32_t(kind);
    o.at = at;
    o.size = size < 0 ? data.size() : size;
    o.ready = ready;
    return enqueueBlob(std::move(o));
}

uint64_t Connection::sendBlobFrom(wire::BlobKind kind, qint64 size, BlobReader read) {
    return queueReader(kind, size, std::move(read), size);
}

uint64_t Connection::openBlobFrom(wire::BlobKind kind, qint64 size, BlobReader read) {
    return queueReader(kind, size, std::move(read), 0);
}

uint64_t Connection::queueReader(wire::BlobKind kind, qint64 size, BlobReader read, qint64 ready) {
    Outgoing o;
    o.kind = uint32_t(kind);
    o.size = size;
    o.ready = ready;
    o.read = std::move(read);
    return enqueueBlob(std::move(o));
}

uint64_t Connection::enqueueBlob(Outgoing o) {
    const uint64_t id = m_nextBlob++;
    if (m_state != State::Secured)
        return id;
    if (m_outgoing.size() >= kMaxQueuedItems) {
        close(QStringLiteral("the peer does not read what it is sent (%1 messages waiting)")
                  .arg(m_outgoing.size()));
        return id;
    }
    o.blobId = id;
    m_outgoing.push_back(std::move(o));
    pump();
    return id;
}

void Connection::flush() {
    if (!m_socket)
        return;
    m_socket->flush();
    m_socket->waitForBytesWritten(2000);
}

uint64_t Connection::openBlob(wire::BlobKind kind, const QByteArray& data) {
    return queueBlob(kind, data, 0);
}

void Connection::growBlob(uint64_t id, qint64 ready) {
    for (Outgoing& o : m_outgoing)
        if (o.blobId == id)
            o.ready = std::clamp(ready, o.ready, o.size);
    pump();
}

bool Connection::sending(uint64_t id) const {
    for (const Outgoing& o : m_outgoing)
        if (o.blobId == id)
            return true;
    return false;
}

qint64 Connection::bytesHandedOver() const {
    qint64 n = m_bytesSent + m_queuedFrameBytes;
    for (const Outgoing& o : m_outgoing)
        if (o.blobId != 0)
            n += o.size - o.offset;
    return n;
}

void Connection::close(const QString& reason, std::optional<wire::Message> last) {
    if (m_state == State::Closed)
        return;
    // What was still queued is dropped (a peer being closed on gets no more blob parts); the
    // last message goes straight to the socket, which flushes it before disconnecting. Frames
    // reach the socket whole, so it follows the last complete one.
    m_outgoing.clear();
    m_queuedFrameBytes = 0;
    const bool linger = last && m_state == State::Secured && m_socket;
    if (linger) {
        const QByteArray f = wire::frame(wire::encode(*last));
        m_bytesSent += f.size();
        m_socket->write(f);
    }
    m_state = State::Closed;
    m_handshakeTimer.stop();
    m_pingTimer.stop();
    qCDebug(lcNet) << "closing" << peerAddress() << reason;
    // close() is often reached from inside one of the socket's signals (readyRead, encrypted):
    // the socket is shut down from the event loop, after that signal has returned.
    //
    // After a last message the peer hangs up first, once it has read it, or after kLingerMs.
    // Closing a socket while bytes the peer sent lie unread in the kernel (a ping, a result
    // sent just before) makes the kernel reset the connection instead of ending it: the reset
    // discards what this side had not yet sent, and what the peer had not yet read, the last
    // message among them. Meanwhile onReadyRead drops what arrives.
    if (m_socket) {
        if (linger)
            QTimer::singleShot(kLingerMs, m_socket, &QSslSocket::disconnectFromHost);
        else
            QMetaObject::invokeMethod(m_socket, &QSslSocket::disconnectFromHost,
                                      Qt::QueuedConnection);
    }
    Q_EMIT closed(reason);
}

} // namespace tandem
