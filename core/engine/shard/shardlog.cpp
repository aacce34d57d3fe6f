#include "engine/shard/shardlog.h"

#include "common/failpoint.h"

#include <QDataStream>
#include <QtEndian>

#include <cmath>
#include <cstring>
#include <zlib.h>

namespace tandem {

namespace {

constexpr char kMagic[8] = {'T', 'A', 'N', 'D', 'E', 'M', 'S', 'L'};
constexpr quint32 kVersion = 2;
constexpr qint64 kRecordFixed = 8 + 8 + 8 + 8 + 4; // step, from, to, lr, pieces

quint32 crcOf(const char* data, qint64 n, quint32 crc = 0) {
    uLong c = crc == 0 ? crc32(0, nullptr, 0) : crc;
    for (qint64 at = 0; at < n;) {
        const uInt k = uInt(std::min<qint64>(n - at, qint64(1) << 30));
        c = crc32(c, reinterpret_cast<const Bytef*>(data + at), k);
        at += k;
    }
    return quint32(c);
}

// Writes to `to`, adding what passes to a running CRC.
class CrcWriter final : public QIODevice {
public:
    CrcWriter(QIODevice& to, quint32 crc)
        : m_to(to)
        , m_crc(crc) {
        open(QIODevice::WriteOnly);
    }
    quint32 crc() const { return m_crc; }

protected:
    qint64 readData(char*, qint64) override { return -1; }
    qint64 writeData(const char* data, qint64 n) override {
        const qint64 wrote = m_to.write(data, n);
        if (wrote > 0)
            m_crc = crcOf(data, wrote, m_crc);
        return wrote;
    }

private:
    QIODevice& m_to;
    quint32 m_crc;
};

Error fileError(const QFile& f, const QString& what) {
    return makeError(ErrorCode::Io,
                     QStringLiteral("%1 %2: %3").arg(what, f.fileName(), f.errorString()));
}

// The pieces of `pieces` that lie in [from, to): their indices.
std::vector<size_t> piecesIn(const std::vector<ShardLayout::Piece>& pieces, int64_t from,
                             int64_t to) {
    std::vector<size_t> out;
    for (size_t p = 0; p < pieces.size(); ++p)
        if (pieces[p].at >= from && pieces[p].at < to)
            out.push_back(p);
    return out;
}

QString rangeName(int64_t begin, int64_t end) {
    return QStringLiteral("values %1 to %2").arg(begin).arg(end);
}

} // namespace

ShardLog::ShardLog(QString path)
    : m_path(std::move(path))
    , m_file(m_path) {}

ShardLog::Span ShardLog::spanOf(const ShardOwner& owner, int64_t step, int64_t from, int64_t to,
                                double lr) {
    Span s{step, from, to, lr, {}, {}};
    // Its exact size first: appended piece by piece, the bytes would grow by doubling, and a
    // span waits on a link for as long as the queue ahead of it takes.
    const std::vector<size_t> pieces = piecesIn(owner.pieces(), from, to);
    qsizetype bytes = 0;
    for (size_t p : pieces)
        if (owner.sum()[p].defined())
            bytes += qsizetype(owner.sum()[p].numel()) * qsizetype(sizeof(float));
    s.values.reserve(bytes);
    s.present.reserve(qsizetype(pieces.size()));
    for (size_t p : pieces) {
        const at::Tensor& t = owner.sum()[p];
        s.present.append(char(t.defined() ? 1 : 0));
        if (!t.defined())
            continue;
        const at::Tensor c = t.to(at::kCPU, at::kFloat).contiguous();
        s.values.append(reinterpret_cast<const char*>(c.data_ptr<float>()),
                        qsizetype(c.numel()) * qsizetype(sizeof(float)));
    }
    return s;
}

namespace {

// Bytes `base` as a log's base: written where they lie.
std::function<Status(QIODevice&)> writeBytes(const QByteArray& base) {
    return [&base](QIODevice& out) -> Status {
        if (out.write(base) != base.size())
            return makeError(ErrorCode::Io, out.errorString());
        return success();
    };
}

} // namespace

Expected<std::unique_ptr<ShardLog>> ShardLog::create(const QString& path, const ShardOwner& owner,
                                                     int64_t firstStep, int64_t baseSteps,
                                                     const QByteArray& base) {
    return create(path, owner.begin(), owner.end(), owner.segmentEnds(), owner.pieces(), firstStep,
                  baseSteps, base.size(), writeBytes(base));
}

Expected<std::unique_ptr<ShardLog>> ShardLog::create(const QString& path, const ShardLayout& layout,
                                                     int64_t begin, int64_t end, int64_t firstStep,
                                                     int64_t baseSteps, const QByteArray& base) {
    return create(path, begin, end, ShardOwner::segmentEndsOf(end - begin),
                  ShardOwner::piecesOf(layout, begin, end), firstStep, baseSteps, base.size(),
                  writeBytes(base));
}

Expected<std::unique_ptr<ShardLog>> ShardLog::create(const QString& path, const ShardLayout& layout,
                                                     int64_t begin, int64_t end, int64_t firstStep,
                                                     int64_t baseSteps, const TensorFile& base) {
    auto size = checkpointSize(base);
    if (!size)
        return size.error();
    return create(path, begin, end, ShardOwner::segmentEndsOf(end - begin),
                  ShardOwner::piecesOf(layout, begin, end), firstStep, baseSteps, *size,
                  [&base](QIODevice& out) -> Status {
                      if (auto wrote = writeCheckpointTo(out, base); !wrote)
                          return wrote.error();
                      return success();
                  });
}

Expected<std::unique_ptr<ShardLog>>
ShardLog::create(const QString& path, int64_t begin, int64_t end, std::vector<int64_t> segmentEnds,
                 std::vector<ShardLayout::Piece> pieces, int64_t firstStep, int64_t baseSteps,
                 qint64 baseSize, const std::function<Status(QIODevice&)>& base) {
    std::unique_ptr<ShardLog> log(new ShardLog(path));
    log->m_begin = begin;
    log->m_end = end;
    log->m_segmentEnds = std::move(segmentEnds);
    log->m_pieces = std::move(pieces);
    log->m_lastWhole = firstStep - 1;
    QByteArray h(kMagic, sizeof kMagic);
    {
        QDataStream out(&h, QIODevice::Append);
        out.setByteOrder(QDataStream::LittleEndian);
        out << kVersion << qint64(begin) << qint64(end) << quint32(log->m_segmentEnds.size());
        for (int64_t e : log->m_segmentEnds)
            out << qint64(e);
        out << quint32(log->m_pieces.size());
        for (const ShardLayout::Piece& p : log->m_pieces)
            out << qint64(p.values);
        out << qint64(firstStep) << qint64(baseSteps) << quint64(baseSize);
    }
    // The base (a range's whole state) is written as it comes, not copied behind the header.
    const auto failed = [&] {
        return fileError(log->m_file, QStringLiteral("cannot write the shard log"));
    };
    if (!log->m_file.open(QIODevice::ReadWrite | QIODevice::Truncate | QIODevice::Unbuffered) ||
        log->m_file.write(h) != h.size())
        return failed();
    CrcWriter through(log->m_file, crcOf(h.constData(), h.size()));
    if (auto st = base(through); !st)
        return log->m_file.error() != QFileDevice::NoError ? failed() : st.error();
    char crc[4];
    qToLittleEndian(through.crc(), crc);
    if (through.pos() != baseSize)
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("the shard log's base came to %1 bytes, not %2")
                             .arg(through.pos())
                             .arg(baseSize));
    if (log->m_file.write(crc, 4) != 4 || !log->m_file.flush())
        return failed();
    return log;
}

std::pair<int64_t, int64_t> ShardLog::partOf(int64_t step) const {
    if (m_windows.empty() || step < 0)
        return {0, m_end - m_begin};
    return m_windows[size_t(step % int64_t(m_windows.size()))].within(m_begin, m_end);
}

int64_t ShardLog::nextStep() const {
    int64_t step = m_lastWhole + 1;
    for (size_t k = 0; k < m_windows.size(); ++k, ++step)
        if (const auto [from, to] = partOf(step); from < to)
            break;
    return step;
}

Status ShardLog::check(const Span& s) const {
    const auto refuse = [&](const QString& why) {
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("the log of %1: %2").arg(rangeName(m_begin, m_end), why));
    };
    const int64_t step = m_at == 0 ? nextStep() : m_open;
    const auto [partFrom, partTo] = partOf(step);
    const int64_t from = m_at == 0 ? partFrom : m_at;
    if (s.step != step || s.from != from)
        return refuse(QStringLiteral("step %1 from value %2 does not follow step %3 from %4")
                          .arg(s.step + 1)
                          .arg(s.from)
                          .arg(step + 1)
                          .arg(from));
    // A span ends where a segment does, or where the step's part of the range does.
    if (s.to <= s.from || s.to > partTo ||
        (s.to != partTo &&
         std::find(m_segmentEnds.begin(), m_segmentEnds.end(), s.to) == m_segmentEnds.end()) ||
        !std::isfinite(s.lr))
        return refuse(QStringLiteral("step %1 ends a span at %2, not at a segment's end")
                          .arg(s.step + 1)
                          .arg(s.to));
    const std::vector<size_t> in = piecesIn(m_pieces, s.from, s.to);
    qint64 values = 0;
    if (size_t(s.present.size()) == in.size())
        for (size_t k = 0; k < in.size(); ++k)
            values += s.present.at(qsizetype(k)) != 0 ? m_pieces[in[k]].values : 0;
    if (size_t(s.present.size()) != in.size() || s.values.size() != values * 4)
        return refuse(QStringLiteral("step %1's sums for values %2 to %3 do not fit them")
                          .arg(s.step + 1)
                          .arg(s.from)
                          .arg(s.to));
    return success();
}

Status ShardLog::append(const Span& s) {
    if (auto st = check(s); !st)
        return st;
    QByteArray head;
    {
        QDataStream out(&head, QIODevice::WriteOnly);
        out.setByteOrder(QDataStream::LittleEndian);
        out.setFloatingPointPrecision(QDataStream::DoublePrecision);
        out << qint64(s.step) << qint64(s.from) << qint64(s.to) << s.lr
            << quint32(s.present.size());
    }
    head.append(s.present);
    quint32 crc = crcOf(head.constData(), head.size());
    crc = crcOf(s.values.constData(), s.values.size(), crc);
    char tail[4];
    qToLittleEndian(crc, tail);
    // A record that cannot be written whole (a full disk) is cut off again, so that the next one
    // follows the last whole record: rebuild() stops at the first record that is not whole.
    const qint64 start = m_file.pos();
    const bool ok = !TANDEM_FAILPOINT("shard.log.append") && m_file.write(head) == head.size() &&
                    m_file.write(s.values) == s.values.size() &&
                    m_file.write(tail, sizeof tail) == qint64(sizeof tail) && m_file.flush();
    if (!ok) {
        const Error e = fileError(m_file, QStringLiteral("cannot write the shard log"));
        m_file.unsetError();
        if (!m_file.resize(start) || !m_file.seek(start))
            return fileError(m_file, QStringLiteral("cannot cut a record short in the shard log"));
        return e;
    }
    m_bytes += head.size() + s.values.size() + 4;
    m_at = s.to;
    m_open = s.step;
    if (s.to == partOf(s.step).second) {
        m_lastWhole = s.step;
        m_at = 0;
    }
    return success();
}

namespace {

// A log's header, read from `f` (left after it): the range's owner as the log's base holds it,
// and the log's first step.
struct Opened {
    std::unique_ptr<ShardOwner> owner;
    int64_t firstStep = 0;
};

Expected<Opened> openLog(QFile& f, const QString& path, const ShardLayout& layout,
                         const OptimizerConfig& optimizer) {
    if (!f.open(QIODevice::ReadOnly))
        return fileError(f, QStringLiteral("cannot read the shard log"));
    const auto corrupt = [&](const QString& why) {
        return makeError(ErrorCode::Corrupt, QStringLiteral("the shard log %1 %2").arg(path, why));
    };
    QDataStream in(&f);
    in.setByteOrder(QDataStream::LittleEndian);
    char magic[8] = {};
    quint32 version = 0, segments = 0, pieces = 0;
    qint64 begin = 0, end = 0;
    if (in.readRawData(magic, 8) != 8 || std::memcmp(magic, kMagic, 8) != 0)
        return corrupt(QStringLiteral("is not a shard log"));
    in >> version >> begin >> end >> segments;
    if (version != kVersion || begin < 0 || end <= begin || end > layout.values ||
        segments > quint32(end - begin))
        return corrupt(QStringLiteral("is of another version or range"));
    std::vector<int64_t> ends(segments);
    for (int64_t& e : ends) {
        qint64 v = 0;
        in >> v;
        e = v;
    }
    in >> pieces;
    if (pieces > quint32(end - begin) + segments)
        return corrupt(QStringLiteral("lists too many pieces"));
    std::vector<int64_t> pieceValues(pieces);
    for (int64_t& v : pieceValues) {
        qint64 n = 0;
        in >> n;
        v = n;
    }
    qint64 firstStep = 0, baseSteps = 0;
    quint64 baseBytes = 0;
    in >> firstStep >> baseSteps >> baseBytes;
    if (in.status() != QDataStream::Ok || baseBytes > quint64(f.size()))
        return corrupt(QStringLiteral("has a damaged header"));
    const QByteArray base = f.read(qint64(baseBytes));
    const qint64 headerEnd = f.pos();
    if (!f.seek(0))
        return fileError(f, QStringLiteral("cannot read the shard log"));
    const QByteArray header = f.read(headerEnd);
    const QByteArray crc = f.read(4);
    if (base.size() != qint64(baseBytes) || crc.size() != 4 ||
        qFromLittleEndian<quint32>(crc.constData()) != crcOf(header.constData(), header.size()))
        return corrupt(QStringLiteral("has a damaged header"));
    // Segments are cut every segmentValues values from the range's start, the last shorter.
    Opened out;
    out.firstStep = firstStep;
    out.owner = std::make_unique<ShardOwner>(
        ShardOwner::adopting(layout, begin, end, at::zeros({end - begin}, at::kFloat), optimizer,
                             ends.empty() ? 0 : ends.front()));
    bool same = out.owner->segmentEnds() == ends && out.owner->pieces().size() == pieces;
    for (size_t p = 0; same && p < pieces; ++p)
        same = out.owner->pieces()[p].values == pieceValues[p];
    if (!same)
        return corrupt(
            QStringLiteral("cuts %1 otherwise than this run").arg(rangeName(begin, end)));
    if (auto st = out.owner->restoreRange(baseSteps, base); !st)
        return st.error();
    return out;
}

} // namespace

Expected<std::unique_ptr<ShardOwner>>
ShardLog::rebuild(const QString& path, const ShardLayout& layout, const OptimizerConfig& optimizer,
                  int64_t throughStep, const std::vector<ShardWindow>& windows) {
    QFile f(path);
    auto opened = openLog(f, path, layout, optimizer);
    if (!opened)
        return opened.error();
    std::unique_ptr<ShardOwner> owner = std::move(opened->owner);
    const int64_t begin = owner->begin(), end = owner->end();
    // The records, checked as append() checks them.
    ShardLog order{QString()};
    order.m_begin = begin;
    order.m_end = end;
    order.m_segmentEnds = owner->segmentEnds();
    order.m_pieces = owner->pieces();
    order.m_lastWhole = opened->firstStep - 1;
    order.m_windows = windows;
    // A step that adds nothing to the range (streaming's, outside its fragment) still counts.
    const auto countEmptySteps = [&](int64_t before) {
        for (int64_t k = order.m_lastWhole + 1; k < before; ++k)
            owner->stepSpan(0, 0, {}, 0, true);
    };
    while (order.nextStep() <= throughStep) {
        const QByteArray fixed = f.read(kRecordFixed);
        if (fixed.size() != kRecordFixed)
            break;
        Span s;
        s.step = qFromLittleEndian<qint64>(fixed.constData());
        s.from = qFromLittleEndian<qint64>(fixed.constData() + 8);
        s.to = qFromLittleEndian<qint64>(fixed.constData() + 16);
        const quint64 lrBits = qFromLittleEndian<quint64>(fixed.constData() + 24);
        std::memcpy(&s.lr, &lrBits, 8);
        const quint32 flags = qFromLittleEndian<quint32>(fixed.constData() + 32);
        if (flags > order.m_pieces.size())
            break;
        s.present = f.read(flags);
        const std::vector<size_t> inSpan = piecesIn(order.m_pieces, s.from, s.to);
        qint64 values = 0;
        for (size_t k = 0; k < inSpan.size() && k < size_t(s.present.size()); ++k)
            values += s.present.at(qsizetype(k)) != 0 ? order.m_pieces[inSpan[k]].values : 0;
        s.values = f.read(values * 4);
        const QByteArray tail = f.read(4);
        quint32 sum = crcOf(fixed.constData(), fixed.size());
        sum = crcOf(s.present.constData(), s.present.size(), sum);
        sum = crcOf(s.values.constData(), s.values.size(), sum);
        if (tail.size() != 4 || qFromLittleEndian<quint32>(tail.constData()) != sum)
            break;
        if (auto st = order.check(s); !st)
            return st.error();
        std::vector<at::Tensor> grads(order.m_pieces.size());
        qint64 at = 0;
        for (size_t k = 0; k < inSpan.size(); ++k) {
            if (s.present.at(qsizetype(k)) == 0)
                continue;
            const int64_t n = order.m_pieces[inSpan[k]].values;
            grads[inSpan[k]] = at::empty({n}, at::kFloat);
            std::memcpy(grads[inSpan[k]].data_ptr<float>(), s.values.constData() + at * 4,
                        size_t(n) * 4);
            at += n;
        }
        if (order.m_at == 0)
            countEmptySteps(s.step);
        const bool ends = s.to == order.partOf(s.step).second;
        owner->stepSpan(s.from, s.to, grads, s.lr, ends);
        order.m_at = s.to;
        order.m_open = s.step;
        if (ends) {
            order.m_lastWhole = s.step;
            order.m_at = 0;
        }
    }
    if (order.m_at == 0 && order.m_lastWhole < throughStep && order.nextStep() > throughStep) {
        countEmptySteps(throughStep + 1);
        order.m_lastWhole = throughStep;
    }
    if (order.m_lastWhole != throughStep)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("the log of %1 holds the steps through %2, not through %3")
                             .arg(rangeName(begin, end))
                             .arg(order.m_lastWhole + 1)
                             .arg(throughStep + 1));
    return owner;
}

} // namespace tandem
