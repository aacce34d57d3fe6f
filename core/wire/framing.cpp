#include "wire/framing.h"

#include "common/files.h"

#include <QDir>
#include <QTemporaryFile>
#include <QtEndian>

#include <atomic>
#include <cstring>

namespace tandem::wire {

QByteArray frame(const QByteArray& payload) {
    QByteArray out;
    out.reserve(4 + payload.size());
    char len[4];
    qToLittleEndian<quint32>(static_cast<quint32>(payload.size()), len);
    out.append(len, 4);
    out.append(payload);
    return out;
}

QByteArray blobPartFrame(uint32_t kind, uint64_t id, uint64_t total, uint64_t offset,
                         QByteArrayView data, qint64 dataSize) {
    const qint64 size = dataSize < 0 ? data.size() : dataSize;
    QByteArray out(4 + kBlobPartHeader + data.size(), Qt::Uninitialized);
    char* p = out.data();
    qToLittleEndian<quint32>(quint32(kBlobPartHeader + size), p);
    p[4] = 0;
    qToLittleEndian<quint32>(kind, p + 5);
    qToLittleEndian<quint64>(id, p + 9);
    qToLittleEndian<quint64>(total, p + 17);
    qToLittleEndian<quint64>(offset, p + 25);
    if (!data.isEmpty())
        memcpy(p + 4 + kBlobPartHeader, data.data(), size_t(data.size()));
    return out;
}

Status BlobAssembler::add(uint64_t id, uint32_t kind, uint64_t total, uint64_t offset,
                          QByteArrayView data) {
    auto to = reserve(id, kind, total, offset, data.size());
    if (!to)
        return to.error();
    if (!data.isEmpty())
        memcpy(*to, data.data(), size_t(data.size()));
    return commit(id);
}

BlobAssembler::~BlobAssembler() {
    for (Pending& p : m_pending)
        discard(p);
    for (Pending& p : m_done)
        discard(p);
}

void BlobAssembler::discard(Pending& p) {
    if (p.file) {
        p.file->close();
        p.file->remove();
        p.file.reset();
    }
}

Expected<std::shared_ptr<QFile>> BlobAssembler::spillFile(uint32_t kind, uint64_t total) const {
    const QString dir = m_spill.value(kind);
    if (!QDir().mkpath(dir))
        return makeError(ErrorCode::Io, QStringLiteral("cannot create the folder %1").arg(dir));
    const qint64 free = freeBytesAt(dir);
    if (free >= 0 && quint64(free) < total)
        return makeError(ErrorCode::Io,
                         QStringLiteral("%1 has %2 MB free, and the data to receive takes %3 MB; "
                                        "free some space there")
                             .arg(dir)
                             .arg(free >> 20)
                             .arg(total >> 20));
    QTemporaryFile f(QDir(dir).filePath(QStringLiteral("receiving-XXXXXX.part")));
    f.setAutoRemove(false);
    if (!f.open())
        return makeError(
            ErrorCode::Io,
            QStringLiteral("cannot create a file in %1: %2").arg(dir, f.errorString()));
    auto file = std::make_shared<QFile>(f.fileName());
    f.close();
    if (!file->open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        QFile::remove(f.fileName());
        return makeError(
            ErrorCode::Io,
            QStringLiteral("cannot write %1: %2").arg(file->fileName(), file->errorString()));
    }
    return file;
}

Expected<char*> BlobAssembler::reserve(uint64_t id, uint32_t kind, uint64_t total, uint64_t offset,
                                       qint64 size) {
    auto bad = [](const QString& m) { return makeError(ErrorCode::Corrupt, m); };
    if (id == 0)
        return bad(QStringLiteral("blob id 0 is reserved"));
    if (m_done.contains(id))
        return bad(QStringLiteral("blob %1 was already completed").arg(id));
    auto it = m_pending.find(id);
    if (it == m_pending.end()) {
        const qint64 cap = m_caps.value(kind, -1);
        if (cap < 0)
            return bad(QStringLiteral("unexpected blob kind %1").arg(kind));
        if (total > quint64(cap))
            return bad(QStringLiteral("a blob of kind %1 claims %2 bytes; at most %3 are "
                                      "accepted")
                           .arg(kind)
                           .arg(total)
                           .arg(cap));
        // Blobs of a reused kind come one per step and are taken as their message arrives: a
        // complete one still here when the next starts was given up by its sender (a result
        // computed again) and is never asked for.
        if (m_reuse.contains(kind))
            for (auto d = m_done.begin(); d != m_done.end();)
                d = d->kind == kind ? m_done.erase(d) : std::next(d);
        if (m_pending.size() + m_done.size() >= m_maxPending)
            return bad(QStringLiteral("too many blobs in flight"));
        Pending p;
        p.kind = kind;
        p.total = total;
        std::shared_ptr<QFile> file;
        if (m_spill.contains(kind)) {
            auto spilled = spillFile(kind, total);
            if (!spilled && !m_spillOrHold.contains(kind))
                return spilled.error();
            if (spilled)
                file = std::move(*spilled);
        }
        if (file) {
            p.file = std::move(file);
        } else {
            // Allocated only once the cap has vetted the size; filled part by part. The memory
            // of the last blob of this kind is used again when nobody holds that blob any more:
            // a run receives same-sized tensors every step, and fresh pages cost a fault each.
            auto spare = m_spare.find(kind);
            if (spare != m_spare.end() && spare->size() == qsizetype(total) &&
                spare->isDetached()) {
                // The holder let go on another thread (the training side); its reads of these
                // bytes happen before the writes that come now.
                std::atomic_thread_fence(std::memory_order_acquire);
                p.data = std::move(*spare);
            } else {
                p.data = QByteArray(qsizetype(total), Qt::Uninitialized);
            }
            if (spare != m_spare.end())
                m_spare.erase(spare);
        }
        it = m_pending.insert(id, std::move(p));
    }
    Pending& p = it.value();
    if (p.kind != kind || p.total != total)
        return bad(QStringLiteral("blob %1 changed its kind or size").arg(id));
    if (offset != quint64(p.committed))
        return bad(QStringLiteral("blob %1: part at offset %2, expected %3")
                       .arg(id)
                       .arg(offset)
                       .arg(p.committed));
    if (size < 0 || quint64(size) > total - offset)
        return bad(QStringLiteral("blob %1 runs past its declared size").arg(id));
    m_reserved = {id, size};
    if (p.file) { // the part lands in memory, and commit() writes it out
        if (p.data.size() < size)
            p.data = QByteArray(qsizetype(size), Qt::Uninitialized);
        return p.data.data();
    }
    return p.data.data() + offset;
}

Status BlobAssembler::commit(uint64_t id) {
    auto it = m_pending.find(id);
    if (it == m_pending.end() || m_reserved.first != id)
        return success();
    Pending& p = it.value();
    const qint64 size = m_reserved.second;
    m_reserved = {0, 0};
    if (p.file && size > 0 && p.file->write(p.data.constData(), size) != size) {
        const Error e = makeError(
            ErrorCode::Io,
            QStringLiteral("cannot write %1: %2").arg(p.file->fileName(), p.file->errorString()));
        discard(p);
        m_pending.erase(it);
        return e;
    }
    p.committed += size;
    if (quint64(p.committed) == p.total) {
        if (p.file) {
            p.data = QByteArray();
            if (!p.file->flush()) {
                const Error e =
                    makeError(ErrorCode::Io, QStringLiteral("cannot write %1: %2")
                                                 .arg(p.file->fileName(), p.file->errorString()));
                discard(p);
                m_pending.erase(it);
                return e;
            }
            p.file->close();
        }
        m_done.insert(id, std::move(p));
        m_pending.erase(it);
    }
    return success();
}

std::optional<QString> BlobAssembler::takeFile(uint64_t id) {
    auto it = m_done.find(id);
    if (it == m_done.end() || !it->file)
        return std::nullopt;
    const QString path = it->file->fileName();
    it->file.reset();
    m_done.erase(it);
    return path;
}

std::optional<QByteArray> BlobAssembler::take(uint64_t id) {
    auto it = m_done.find(id);
    if (it == m_done.end() || it->file)
        return std::nullopt;
    const uint32_t kind = it->kind;
    QByteArray b = std::move(it->data);
    m_done.erase(it);
    if (m_reuse.contains(kind)) {
        if (m_lastTaken.value(kind, -1) == b.size())
            m_spare.insert(kind, b); // shared until the caller lets go of it
        else
            m_spare.remove(kind);
        m_lastTaken.insert(kind, b.size());
    }
    return b;
}

qint64 BlobAssembler::spareBytes() const {
    qint64 n = 0;
    for (const QByteArray& b : m_spare)
        n += b.size();
    return n;
}

qint64 BlobAssembler::pendingBytes() const {
    qint64 n = 0;
    for (const Pending& p : m_pending)
        n += p.file ? p.data.size() : p.committed;
    for (const Pending& p : m_done)
        n += p.file ? 0 : p.committed;
    return n;
}

void FrameReader::fail(const QString& why) {
    m_error = why;
    m_stage = Stage::Length;
}

bool FrameReader::fill(const Source& read, qsizetype want) {
    while (m_headFill < want) {
        const qint64 n = read(m_head + m_headFill, want - m_headFill);
        if (n <= 0)
            return false;
        m_headFill += qsizetype(n);
    }
    return true;
}

std::optional<QByteArray> FrameReader::next(const Source& read) {
    while (!failed()) {
        switch (m_stage) {
        case Stage::Length: {
            if (!fill(read, 4))
                return std::nullopt;
            m_frameLen = qFromLittleEndian<quint32>(m_head);
            if (m_frameLen > m_max) {
                fail(QStringLiteral("a peer announced a frame of %1 bytes; the limit is %2")
                         .arg(m_frameLen)
                         .arg(m_max));
                return std::nullopt;
            }
            m_stage = m_frameLen == 0 ? Stage::Payload : Stage::Kind;
            m_payload.clear();
            m_payloadFill = 0;
            break;
        }
        case Stage::Kind:
            if (!fill(read, 5))
                return std::nullopt;
            if (m_head[4] == '\0') {
                m_stage = Stage::BlobHeader;
            } else {
                m_payload = QByteArray(qsizetype(m_frameLen), Qt::Uninitialized);
                m_payload[0] = m_head[4];
                m_payloadFill = 1;
                m_stage = Stage::Payload;
            }
            break;
        case Stage::BlobHeader: {
            if (m_frameLen < kBlobPartHeader) {
                fail(QStringLiteral("a truncated blob part"));
                return std::nullopt;
            }
            if (!fill(read, 4 + kBlobPartHeader))
                return std::nullopt;
            const char* h = m_head + 4;
            m_blobId = qFromLittleEndian<quint64>(h + 5);
            m_blobLeft = m_frameLen - kBlobPartHeader;
            auto to = m_blobs.reserve(m_blobId, qFromLittleEndian<quint32>(h + 1),
                                      qFromLittleEndian<quint64>(h + 13),
                                      qFromLittleEndian<quint64>(h + 21), m_blobLeft);
            if (!to) {
                fail(to.error().message);
                return std::nullopt;
            }
            m_blobTo = *to;
            m_stage = Stage::BlobData;
            break;
        }
        case Stage::BlobData:
            while (m_blobLeft > 0) {
                const qint64 n = read(m_blobTo, m_blobLeft);
                if (n <= 0)
                    return std::nullopt;
                m_blobTo += n;
                m_blobLeft -= n;
            }
            if (auto st = m_blobs.commit(m_blobId); !st) {
                fail(st.error().message);
                return std::nullopt;
            }
            m_headFill = 0;
            m_stage = Stage::Length;
            break;
        case Stage::Payload:
            while (m_payloadFill < m_payload.size()) {
                const qint64 n =
                    read(m_payload.data() + m_payloadFill, m_payload.size() - m_payloadFill);
                if (n <= 0)
                    return std::nullopt;
                m_payloadFill += qsizetype(n);
            }
            m_headFill = 0;
            m_stage = Stage::Length;
            return std::move(m_payload);
        }
    }
    return std::nullopt;
}

} // namespace tandem::wire
