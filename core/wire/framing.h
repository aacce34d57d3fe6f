#pragma once

#include "common/expected.h"

#include <QByteArray>
#include <QFile>
#include <QHash>
#include <QSet>
#include <QString>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

namespace tandem::wire {

// No frame may be larger. Large payloads travel as blobs of kBlobPartBytes parts, so memory
// for one frame stays bounded whatever a peer claims.
constexpr qint64 kMaxFrameBytes = 4 << 20;
constexpr qint64 kBlobPartBytes = 1 << 20;

// A frame on the wire: 4-byte little-endian payload length, then the payload.
QByteArray frame(const QByteArray& payload);

// Blob parts skip protobuf. Their payload is raw bytes, and copying megabytes through a
// protobuf string on both sides cost more than everything else in a step. A payload whose
// first byte is 0 (never the first byte of an Envelope: protobuf field numbers start at 1)
// is a blob part:
//   0x00 | kind u32 | id u64 | total u64 | offset u64 | data          (all little-endian)
constexpr qsizetype kBlobPartHeader = 1 + 4 + 8 + 8 + 8;
// The whole frame, length prefix included, in one allocation. With `dataSize` given (and no
// data), only the length prefix and header, for a writer that sends dataSize bytes after it.
QByteArray blobPartFrame(uint32_t kind, uint64_t id, uint64_t total, uint64_t offset,
                         QByteArrayView data, qint64 dataSize = -1);

// Reassembles blobs from their parts. Each blob's declared size is checked against a cap for
// its kind (the caller knows what it expects: exact tensor sizes, a bound for a model file)
// before any byte is stored, parts must arrive in order, and a completed blob is kept until
// taken.
class BlobAssembler {
public:
    BlobAssembler() = default;
    BlobAssembler(const BlobAssembler&) = delete;
    BlobAssembler& operator=(const BlobAssembler&) = delete;
    // Removes the files of spilled blobs that were never taken.
    ~BlobAssembler();

    // cap(kind) returns the largest size accepted for that kind, or -1 to refuse the kind.
    void setCap(uint32_t kind, qint64 maxBytes) { m_caps.insert(kind, maxBytes); }
    void setMaxPending(int n) { m_maxPending = n; }
    // Blobs of this kind come again and again with the same size (tensors, every step): the
    // memory of the last one taken is used for the next once its holder lets go of it. Only a
    // size taken twice in a row is kept: a blob that comes once (a sharded run's range at its
    // setup, of gigabytes) is not held for a next one that never comes.
    void setReuse(uint32_t kind) { m_reuse.insert(kind); }
    // Blobs of this kind are written to a new file in `dir` part by part instead of being held
    // in memory (a token file of gigabytes): memory stays at one part, and a blob larger than
    // the disk's free space is refused before its first byte is written. takeFile() hands
    // over the completed file.
    // `orHold`: a blob the folder cannot take (no room, no file) is held in memory instead.
    void setSpill(uint32_t kind, const QString& dir, bool orHold = false) {
        m_spill.insert(kind, dir);
        if (orHold)
            m_spillOrHold.insert(kind);
    }

    // Adds a part. Returns an error for a protocol violation; the connection should close.
    Status add(uint64_t id, uint32_t kind, uint64_t total, uint64_t offset, QByteArrayView data);
    // The same checks as add() for a part of `size` bytes, without its bytes: returns where they
    // go, for a reader that copies them there straight from the socket. commit() once they are
    // written; a part never committed leaves its blob incomplete, never taken.
    Expected<char*> reserve(uint64_t id, uint32_t kind, uint64_t total, uint64_t offset,
                            qint64 size);
    // A spilled blob's part is written to its file here; an error (a full disk) means the
    // blob can never complete, and the connection should close.
    Status commit(uint64_t id);
    // A completed blob, removed from the assembler; nullopt if not (yet) complete, or spilled.
    std::optional<QByteArray> take(uint64_t id);
    // A completed spilled blob: the path of its file, which the caller now owns (renames or
    // removes); nullopt if not (yet) complete, or not spilled.
    std::optional<QString> takeFile(uint64_t id);
    // Bytes held in memory by blobs not yet taken (spilled blobs hold one part at most).
    qint64 pendingBytes() const;
    // Bytes kept for the next blob of a reused kind (setReuse()).
    qint64 spareBytes() const;

private:
    struct Pending {
        uint32_t kind = 0;
        uint64_t total = 0;
        QByteArray data;             // the blob, or for a spilled one the part in hand
        std::shared_ptr<QFile> file; // a spilled blob's file, open for writing
        qint64 committed = 0;        // bytes of data written and committed
    };
    Expected<std::shared_ptr<QFile>> spillFile(uint32_t kind, uint64_t total) const;
    static void discard(Pending& p);
    QHash<uint32_t, qint64> m_caps;
    QHash<uint64_t, Pending> m_pending;
    QHash<uint64_t, Pending> m_done;     // complete, until taken
    QHash<uint32_t, QByteArray> m_spare; // per kind: the last blob taken, for its memory
    QHash<uint32_t, qint64> m_lastTaken; // per reused kind: the size of the last blob taken
    QSet<uint32_t> m_reuse;
    QHash<uint32_t, QString> m_spill;             // per kind: the folder its blobs are written to
    QSet<uint32_t> m_spillOrHold;                 // kinds held in memory where that folder cannot
    std::pair<uint64_t, qint64> m_reserved{0, 0}; // the part reserve() made room for
    int m_maxPending = 8;
};

// Reads frames from a byte source with no copy of blob data on the way: the part header is
// checked by the assembler before any of its data is read, and the data then goes from the
// source straight into the blob. Other frames come back whole, for wire::decode. A protocol
// violation (oversized frame, bad blob part) sets failed(); the connection must close.
class FrameReader {
public:
    // Reads at most `max` bytes into `to`; returns how many (0 when nothing is available now).
    using Source = std::function<qint64(char* to, qint64 max)>;

    explicit FrameReader(BlobAssembler& blobs, qint64 maxFrame = kMaxFrameBytes)
        : m_blobs(blobs)
        , m_max(maxFrame) {}

    // The next whole frame that is not a blob part, reading as much from `read` as it needs;
    // nullopt when the source has no more for now (blob parts are consumed on the way).
    std::optional<QByteArray> next(const Source& read);
    bool failed() const { return !m_error.isEmpty(); }
    QString error() const { return m_error; }

private:
    enum class Stage { Length, Kind, BlobHeader, BlobData, Payload };
    bool fill(const Source& read, qsizetype want); // m_head up to `want` bytes
    void fail(const QString& why);

    BlobAssembler& m_blobs;
    qint64 m_max;
    Stage m_stage = Stage::Length;
    char m_head[4 + kBlobPartHeader] = {};
    qsizetype m_headFill = 0;
    qint64 m_frameLen = 0;
    QByteArray m_payload;
    qsizetype m_payloadFill = 0;
    uint64_t m_blobId = 0;
    char* m_blobTo = nullptr;
    qint64 m_blobLeft = 0;
    QString m_error;
};

} // namespace tandem::wire
