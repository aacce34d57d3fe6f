#include "engine/shard/shardlog.h"

#include <QDataStream>
#include <QtEndian>

#include <cstring>
#include <zlib.h>

namespace tandem {

namespace {

constexpr char kMagic[8] = {'T', 'A', 'N', 'D', 'E', 'M', 'S', 'L'};
constexpr quint32 kVersion = 1;

QByteArray headerOf(const ShardOwner& owner) {
    QByteArray h(kMagic, sizeof kMagic);
    QDataStream out(&h, QIODevice::Append);
    out.setByteOrder(QDataStream::LittleEndian);
    out << kVersion << qint64(owner.begin()) << qint64(owner.end())
        << quint32(owner.pieces().size());
    for (const ShardLayout::Piece& p : owner.pieces())
        out << qint64(p.values);
    return h;
}

quint32 crcOf(const QByteArray& bytes) {
    uLong crc = crc32(0, nullptr, 0);
    for (qsizetype at = 0; at < bytes.size();) {
        const uInt n = uInt(std::min<qsizetype>(bytes.size() - at, qsizetype(1) << 30));
        crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.constData() + at), n);
        at += n;
    }
    return quint32(crc);
}

Error fileError(const QFile& f, const QString& what) {
    return makeError(ErrorCode::Io,
                     QStringLiteral("%1 %2: %3").arg(what, f.fileName(), f.errorString()));
}

} // namespace

ShardLog::ShardLog(QString path)
    : m_path(std::move(path))
    , m_file(m_path) {}

Expected<std::unique_ptr<ShardLog>> ShardLog::create(const QString& path, const ShardOwner& owner) {
    std::unique_ptr<ShardLog> log(new ShardLog(path));
    if (!log->m_file.open(QIODevice::ReadWrite | QIODevice::Truncate | QIODevice::Unbuffered))
        return fileError(log->m_file, QStringLiteral("cannot write the shard log"));
    const QByteArray h = headerOf(owner);
    if (log->m_file.write(h) != h.size() || !log->m_file.flush())
        return fileError(log->m_file, QStringLiteral("cannot write the shard log"));
    log->m_headerBytes = h.size();
    return log;
}

Status ShardLog::append(int64_t step, double lr, const std::vector<at::Tensor>& sum) {
    QByteArray head;
    {
        QDataStream out(&head, QIODevice::WriteOnly);
        out.setByteOrder(QDataStream::LittleEndian);
        out.setFloatingPointPrecision(QDataStream::DoublePrecision);
        out << qint64(step) << lr;
        for (const at::Tensor& t : sum)
            out << quint8(t.defined() ? 1 : 0);
    }
    // Each piece goes to the file from its own memory, the CRC taken on the way. A record that
    // cannot be written whole (a full disk) is cut off again, so that the next one follows the
    // last whole record: replay() stops at the first record that is not whole.
    const qint64 start = m_file.pos();
    uLong crc = crc32(0, nullptr, 0);
    const auto put = [&](const char* data, qint64 n) {
        for (qint64 at = 0; at < n;) {
            const uInt k = uInt(std::min<qint64>(n - at, qint64(1) << 30));
            crc = crc32(crc, reinterpret_cast<const Bytef*>(data + at), k);
            at += k;
        }
        return m_file.write(data, n) == n;
    };
    bool ok = put(head.constData(), head.size());
    for (const at::Tensor& t : sum) {
        if (!ok)
            break;
        if (!t.defined())
            continue;
        const at::Tensor c = t.to(at::kCPU, at::kFloat).contiguous();
        ok = put(reinterpret_cast<const char*>(c.data_ptr<float>()),
                 qint64(c.numel()) * qint64(sizeof(float)));
    }
    char tail[4];
    qToLittleEndian(quint32(crc), tail);
    ok = ok && m_file.write(tail, sizeof tail) == qint64(sizeof tail) && m_file.flush();
    if (!ok) {
        const Error e = fileError(m_file, QStringLiteral("cannot write the shard log"));
        m_file.unsetError();
        if (!m_file.resize(start) || !m_file.seek(start))
            return fileError(m_file, QStringLiteral("cannot cut a record short in the shard log"));
        return e;
    }
    ++m_records;
    return success();
}

Status ShardLog::clear() {
    if (!m_file.resize(m_headerBytes) || !m_file.seek(m_headerBytes))
        return fileError(m_file, QStringLiteral("cannot empty the shard log"));
    m_records = 0;
    return success();
}

Expected<int64_t> ShardLog::replay(const QString& path, ShardOwner& owner, int64_t afterStep) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return fileError(f, QStringLiteral("cannot read the shard log"));
    const QByteArray h = headerOf(owner);
    if (f.read(h.size()) != h)
        return makeError(ErrorCode::Incompatible,
                         QStringLiteral("the shard log %1 is not of values %2 to %3 in %4 pieces")
                             .arg(path)
                             .arg(owner.begin())
                             .arg(owner.end())
                             .arg(owner.pieces().size()));
    const size_t pieces = owner.pieces().size();
    int64_t last = afterStep;
    for (;;) {
        // The record's fixed part, then the values its flags say it holds.
        const qint64 fixed = 16 + qint64(pieces);
        QByteArray record = f.read(fixed);
        if (record.size() != fixed)
            break;
        const auto step = int64_t(qFromLittleEndian<qint64>(record.constData()));
        const quint64 lrBits = qFromLittleEndian<quint64>(record.constData() + 8);
        double lr = 0;
        std::memcpy(&lr, &lrBits, 8);
        qint64 values = 0;
        for (size_t p = 0; p < pieces; ++p)
            if (record.at(16 + qsizetype(p)) != 0)
                values += owner.pieces()[p].values;
        const QByteArray data = f.read(values * 4);
        QByteArray crcBytes = f.read(4);
        if (data.size() != values * 4 || crcBytes.size() != 4)
            break;
        record.append(data);
        if (qFromLittleEndian<quint32>(crcBytes.constData()) != crcOf(record))
            break;
        if (step <= afterStep)
            continue;
        if (step != last + 1)
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("the shard log %1 goes from step %2 to %3")
                                 .arg(path)
                                 .arg(last)
                                 .arg(step));
        std::vector<at::Tensor> sum(pieces);
        qint64 at = 0;
        for (size_t p = 0; p < pieces; ++p) {
            if (record.at(16 + qsizetype(p)) == 0)
                continue;
            const int64_t n = owner.pieces()[p].values;
            sum[p] = at::empty({n}, at::kFloat);
            std::memcpy(sum[p].data_ptr<float>(), data.constData() + at * 4, size_t(n) * 4);
            at += n;
        }
        owner.applySum(sum, lr);
        last = step;
    }
    return last;
}

} // namespace tandem
