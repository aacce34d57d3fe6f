#pragma once

#include "net/identity.h"
#include "wire/framing.h"
#include "wire/messages.h"

#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QObject>
#include <QPointer>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QTimer>

#include <deque>
#include <functional>
#include <utility>
#include <vector>

namespace tandem {

Q_DECLARE_LOGGING_CATEGORY(lcNet)

// What a bandwidth probe measured: the round trip of a small message, and the rate at which
// filler crossed the link, both directions together (as a sync step uses them: weights one
// way, gradients the other).
struct LinkProbe {
    double rttMs = 0;
    double bytesPerSecond = 0;
    // The filler came back no measurably later than an empty ping: the link is faster than the
    // probe can time, and bytesPerSecond is only the floor that the whole round trip gives.
    bool atLeast = false;
};

// What a probe's round trips say of a link: `rttMs` an empty ping's, `rounds` each filled
// ping's milliseconds with the bytes it carried both ways. A filled round trip counts only where
// it is clearly longer than the empty one's (jitter alone makes a 1 MB filler on a 9 ms link look
// a hundred times faster than the link); where none is, the result is a floor (atLeast).
LinkProbe linkFromProbe(double rttMs, const std::vector<std::pair<double, double>>& rounds);

// TLS 1.3 with this node's certificate; the peer's certificate is requested but not checked
// against any authority: callers pin it by device ID (the SHA-256 of the certificate).
QSslConfiguration tlsConfiguration(const Identity& identity);

// One authenticated TLS link carrying framed protocol messages. It closes itself, with a
// reason, when the handshake does not finish in time, when the peer sends anything
// malformed or oversized, or when nothing arrives for the idle timeout (it pings the peer so
// that a live but busy peer always has something to answer).
class Connection : public QObject {
    Q_OBJECT

public:
    enum class State { Handshaking, Secured, Closed };

    // Takes ownership of `socket`, connected or connecting.
    explicit Connection(QSslSocket* socket, QObject* parent = nullptr);
    ~Connection() override;

    // Starts a client connection; the result is reported through secured() or closed().
    static Connection* connectTo(const QString& host, quint16 port, const Identity& identity,
                                 QObject* parent = nullptr);

    State state() const { return m_state; }
    QString peerId() const { return m_peerId; }
    QString peerAddress() const;
    // The peer's address alone, without its port; empty once closed.
    QString peerHost() const;

    void setHandshakeTimeout(int ms) { m_handshakeTimer.setInterval(ms); }
    // 0 disables the idle check.
    void setIdleTimeout(int ms);
    void setBlobCap(wire::BlobKind kind, qint64 maxBytes) {
        m_blobs.setCap(uint32_t(kind), maxBytes);
        if (kind == wire::BlobKind::Tensors)
            m_blobs.setReuse(uint32_t(kind));
    }

    void send(const wire::Message& m);
    // Sends `data` as a blob in bounded parts and returns its id, for the message that
    // refers to it. The parts are written as the socket drains, from `data` itself (shared,
    // not copied), so a peer that does not read costs no more than a socket buffer.
    uint64_t sendBlob(wire::BlobKind kind, const QByteArray& data);
    // The `size` bytes of `whole` from `at`, as a blob of their own: `whole` is shared, not
    // copied, until they have gone (a range of a gradient bundle to the range's owner).
    uint64_t sendBlobSlice(wire::BlobKind kind, const QByteArray& whole, qint64 at, qint64 size);
    // Reads `n` bytes of a blob from `at` as its part goes out, or says why it cannot.
    using BlobReader = std::function<Expected<QByteArray>(qint64 at, qint64 n)>;
    // Sends a blob of `size` bytes that `read` gives a part at a time as the socket takes them
    // (a file of gigabytes, never held whole). A read that fails closes the connection, saying
    // why.
    uint64_t sendBlobFrom(wire::BlobKind kind, qint64 size, BlobReader read);
    // The same for a blob still being produced (a BlobPipe's reader): nothing of it is read
    // until growBlob() says how much of its front is final.
    uint64_t openBlobFrom(wire::BlobKind kind, qint64 size, BlobReader read);
    // A blob whose bytes are still being produced: nothing of it is sent until growBlob()
    // says how much of its front is final. `data` is shared, not copied; its producer writes
    // the rest through a pointer it took before (never through a call that detaches it). Frames
    // sent meanwhile (pings, an error) are not held back by it.
    uint64_t openBlob(wire::BlobKind kind, const QByteArray& data);
    // The first `ready` bytes of blob `id` are final and may be sent.
    void growBlob(uint64_t id, qint64 ready);
    // Hands what the socket holds to the system now, for a process about to exit.
    void flush();
    // True while blob `id` is still being sent.
    bool sending(uint64_t id) const;
    std::optional<QByteArray> takeBlob(uint64_t id) { return m_blobs.take(id); }
    // Blobs of `kind` are written to files in `dir` as they arrive (wire::BlobAssembler); with
    // `orHold`, held in memory where `dir` cannot take one.
    void setBlobSpill(wire::BlobKind kind, const QString& dir, bool orHold = false) {
        m_blobs.setSpill(uint32_t(kind), dir, orHold);
    }
    // A completed spilled blob's file, now the caller's.
    std::optional<QString> takeBlobFile(uint64_t id) { return m_blobs.takeFile(id); }

    // Measures the link: a small ping for the round trip, then `rounds` pings that carry
    // `bytes` of filler each way; probed() reports the best of them. A probe already under
    // way is not restarted.
    void probe(qint64 bytes, int rounds);
    bool probing() const { return m_probe.stage >= 0; }
    // Nothing is waiting to be written.
    bool idle() const;
    // Bytes written to the socket that have not reached the network yet: the plain text the
    // TLS layer has not encrypted and what it has encrypted. Refilled from the queue below one
    // blob part, so a slow peer leaves the queue's bytes where they are.
    qint64 buffered() const;
    // The socket has shut down after close() (its last bytes sent), or there is none.
    bool shutDown() const;

    // Sends `last` when given one (a Reject, a Bye), then closes. What was still queued is
    // dropped, never `last`: it goes to the socket at once, ahead of the disconnection. Safe to
    // call more than once.
    void close(const QString& reason, std::optional<wire::Message> last = std::nullopt);
    // Deletes this connection once its last bytes (a Reject, a Bye) have left, or after a
    // few seconds: deleting a socket at once would discard them.
    void deleteWhenFlushed();

    // The connection closed because the peer sent something this side cannot read (a frame
    // malformed, oversized or of a message it does not know): sent again, it would be again.
    bool closedOnUnreadable() const { return m_unreadable; }

    qint64 bytesSent() const { return m_bytesSent; }
    // Every byte handed to send() so far: those written (bytesSent()) and those still queued
    // here (a blob's remaining bytes without the headers of its parts).
    qint64 bytesHandedOver() const;
    qint64 bytesReceived() const { return m_bytesReceived; }

Q_SIGNALS:
    void secured(const QString& peerId);
    void received(const tandem::wire::Message& message);
    void closed(const QString& reason);
    void probed(tandem::LinkProbe probe);
    // The last part of a blob went to the socket: a sender that holds back until its blobs
    // have gone may queue more.
    void blobSent();

private:
    void onEncrypted();
    // `size` bytes of `data` from `at` (-1: all of it), the first `ready` of them final.
    uint64_t queueBlob(wire::BlobKind kind, const QByteArray& data, qint64 ready, qint64 at = 0,
                       qint64 size = -1);
    // A blob of `size` bytes that `read` gives a part at a time, the first `ready` of them final.
    uint64_t queueReader(wire::BlobKind kind, qint64 size, BlobReader read, qint64 ready);
    void onReadyRead();
    void drain();
    void writeFrame(const QByteArray& payload);
    void enqueue(const QByteArray& frame);
    void pump();
    // Writes what is queued while the socket takes it; true when a blob's last part went.
    bool writeQueued();
    bool sendHalfThenAct(const QByteArray& frame);
    void onPong(const wire::Pong& pong);
    void sendProbePing();

    // What waits to be written, in order: whole frames, or a blob written part by part.
    struct Outgoing {
        QByteArray frame;
        QByteArray blob;
        uint64_t blobId = 0;
        uint32_t kind = 0;
        qint64 offset = 0;
        qint64 ready = 0; // bytes of the blob that may be sent
        qint64 at = 0;    // the blob is `size` bytes of `blob` from `at`
        qint64 size = 0;
        BlobReader read; // set: the blob's parts come from it, not from `blob`
    };
    std::deque<Outgoing> m_outgoing;
    // Queues a blob under the next id (its return), unless the connection is not secured or
    // the queue is full, which closes it.
    uint64_t enqueueBlob(Outgoing o);
    qint64 m_queuedFrameBytes = 0;

    QPointer<QSslSocket> m_socket;
    State m_state = State::Handshaking;
    QString m_peerId;
    wire::BlobAssembler m_blobs;
    wire::FrameReader m_reader{m_blobs};
    QTimer m_handshakeTimer;
    QTimer m_pingTimer;
    QElapsedTimer m_lastHeard;
    int m_idleTimeoutMs = 0;
    struct Probe {
        int stage = -1; // -1: none; 0: the round trip; 1..rounds: filler
        int rounds = 0;
        uint32_t bytes = 0;
        uint64_t nonce = 0;
        QElapsedTimer clock;
        double rttMs = 0;
        std::vector<std::pair<double, double>> timings; // milliseconds, bytes carried
    } m_probe;
    double m_minRttMs = 0;
    uint64_t m_nextBlob = 1;
    qint64 m_bytesSent = 0;
    bool m_pumping = false;
    bool m_unreadable = false;
    qint64 m_bytesReceived = 0;
};

} // namespace tandem
