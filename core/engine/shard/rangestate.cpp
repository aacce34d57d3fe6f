#include "engine/shard/rangestate.h"

#include <QFile>

#include <mutex>
#include <optional>

namespace tandem {

namespace {

// A file taken over: removed with the last of what reads it.
struct OwnedFile {
    QString path;
    ~OwnedFile() { QFile::remove(path); }
};

// Bytes [at, at + n) of `data` (a tensor's), copied, or none where they lie outside it.
QByteArray slice(const QByteArray& data, qint64 at, qint64 n) {
    if (at < 0 || n < 0 || at > data.size() - n)
        return {};
    return QByteArray(data.constData() + at, qsizetype(n));
}

} // namespace

struct RangeState::Held {
    std::optional<TensorFile> owner;
    QByteArray bytes;
    std::shared_ptr<OwnedFile> file;
    std::mutex opening;
    std::optional<Expected<TensorFile>> opened; // what read it captures `file`, never this
};

RangeState RangeState::ofOwner(TensorFile state) {
    RangeState s;
    s.m_held = std::make_shared<Held>();
    s.m_held->owner = std::move(state);
    return s;
}

RangeState RangeState::ofBytes(QByteArray bytes) {
    RangeState s;
    s.m_held = std::make_shared<Held>();
    s.m_held->bytes = std::move(bytes);
    return s;
}

RangeState RangeState::ofFile(const QString& path) {
    RangeState s;
    s.m_held = std::make_shared<Held>();
    s.m_held->file = std::make_shared<OwnedFile>();
    s.m_held->file->path = path;
    return s;
}

QString RangeState::path() const {
    return m_held && m_held->file ? m_held->file->path : QString();
}

QByteArray RangeState::bytes() const {
    return m_held ? m_held->bytes : QByteArray();
}

Expected<TensorFile> RangeState::open(const QString& what) const {
    if (!m_held)
        return makeError(ErrorCode::InvalidArgument, QStringLiteral("%1: none").arg(what));
    std::lock_guard<std::mutex> lock(m_held->opening);
    if (m_held->opened)
        return *m_held->opened;
    Expected<TensorFile> out = makeError(ErrorCode::InvalidArgument, what);
    if (m_held->owner) {
        TensorFile file = *m_held->owner;
        for (LazyTensor& l : file.lazy)
            if (!l.part)
                l.part = [bytes = l.bytes](qint64 at, qint64 n) { return slice(bytes(), at, n); };
        out = std::move(file);
    } else if (m_held->file) {
        auto file = openCheckpoint(m_held->file->path);
        if (file) {
            // The file stays while anything read from it does.
            for (LazyTensor& l : file->lazy) {
                l.bytes = [owned = m_held->file, bytes = l.bytes] { return bytes(); };
                l.part = [owned = m_held->file, part = l.part](qint64 at, qint64 n) {
                    return part(at, n);
                };
            }
        }
        out = std::move(file);
    } else {
        // Views of the bytes, which each tensor shares: nothing is copied.
        auto file = parseCheckpointInPlace(m_held->bytes, what);
        if (file) {
            TensorFile lazy;
            lazy.meta = file->meta;
            lazy.blobs = file->blobs;
            for (const TensorRecord& r : file->tensors) {
                const QByteArray data = r.data;        // a view...
                const QByteArray held = m_held->bytes; // ...of what this keeps alive
                lazy.lazy << LazyTensor{
                    r.name, r.dtype, r.shape, [data, held] { return data; },
                    [data, held](qint64 at, qint64 n) { return slice(data, at, n); }};
            }
            out = std::move(lazy);
        } else {
            out = file.error();
        }
    }
    m_held->opened = out;
    return out;
}

} // namespace tandem
