#include "wire/framing.h"

#include <QtEndian>

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
                         QByteArrayView data) {
    QByteArray out(4 + kBlobPartHeader + data.size(), Qt::Uninitialized);
    char* p = out.data();
    qToLittleEndian<quint32>(quint32(kBlobPartHeader + data.size()), p);
    p[4] = 0;
    qToLittleEndian<quint32>(kind, p + 5);
    qToLittleEndian<quint64>(id, p + 9);
    qToLittleEndian<quint64>(total, p + 17);
    qToLittleEndian<quint64>(offset, p + 25);
    if (!data.isEmpty())
        memcpy(p + 4 + kBlobPartHeader, data.data(), size_t(data.size()));
    return out;
}

bool isBlobPart(const QByteArray& payload) {
    return !payload.isEmpty() && payload[0] == '\0';
}

Expected<BlobPartView> parseBlobPart(const QByteArray& payload) {
    if (payload.size() < kBlobPartHeader || payload[0] != '\0')
        return makeError(ErrorCode::Corrupt, QStringLiteral("a truncated blob part"));
    const char* p = payload.constData();
    BlobPartView v;
    v.kind = qFromLittleEndian<quint32>(p + 1);
    v.id = qFromLittleEndian<quint64>(p + 5);
    v.total = qFromLittleEndian<quint64>(p + 13);
    v.offset = qFromLittleEndian<quint64>(p + 21);
    v.data = QByteArrayView(p + kBlobPartHeader, payload.size() - kBlobPartHeader);
    return v;
}

std::optional<QByteArray> FrameDecoder::next() {
    if (failed() || m_buf.size() - m_pos < 4)
        return std::nullopt;
    const quint32 len = qFromLittleEndian<quint32>(m_buf.constData() + m_pos);
    if (qint64(len) > m_max) {
        m_error = QStringLiteral("a peer announced a frame of %1 bytes; the limit is %2")
                      .arg(len)
                      .arg(m_max);
        m_buf.clear();
        m_pos = 0;
        return std::nullopt;
    }
    if (m_buf.size() - m_pos - 4 < qsizetype(len))
        return std::nullopt;
    QByteArray payload = m_buf.mid(m_pos + 4, len);
    m_pos += 4 + len;
    // Compact once the consumed prefix dominates, so the buffer never holds much more than
    // one frame.
    if (m_pos > (1 << 20) || m_pos * 2 > m_buf.size()) {
        m_buf.remove(0, m_pos);
        m_pos = 0;
    }
    return payload;
}

Status BlobAssembler::add(uint64_t id, uint32_t kind, uint64_t total, uint64_t offset,
                          QByteArrayView data) {
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
        if (m_pending.size() + m_done.size() >= m_maxPending)
            return bad(QStringLiteral("too many blobs in flight"));
        Pending p;
        p.kind = kind;
        p.total = total;
        // Reserve only what the cap has already vetted.
        p.data.reserve(qsizetype(total));
        it = m_pending.insert(id, std::move(p));
    }
    Pending& p = it.value();
    if (p.kind != kind || p.total != total)
        return bad(QStringLiteral("blob %1 changed its kind or size").arg(id));
    if (offset != quint64(p.data.size()))
        return bad(QStringLiteral("blob %1: part at offset %2, expected %3")
                       .arg(id)
                       .arg(offset)
                       .arg(p.data.size()));
    if (quint64(data.size()) > total - offset)
        return bad(QStringLiteral("blob %1 runs past its declared size").arg(id));
    p.data.append(data);
    if (quint64(p.data.size()) == total) {
        m_done.insert(id, std::move(p.data));
        m_pending.erase(it);
    }
    return success();
}

std::optional<QByteArray> BlobAssembler::take(uint64_t id) {
    auto it = m_done.find(id);
    if (it == m_done.end())
        return std::nullopt;
    QByteArray b = std::move(it.value());
    m_done.erase(it);
    return b;
}

qint64 BlobAssembler::pendingBytes() const {
    qint64 n = 0;
    for (const Pending& p : m_pending)
        n += p.data.size();
    for (const QByteArray& b : m_done)
        n += b.size();
    return n;
}

} // namespace tandem::wire
