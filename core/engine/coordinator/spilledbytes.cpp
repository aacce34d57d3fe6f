#include "engine/coordinator/spilledbytes.h"

#include "model/model.h"

#include <QBuffer>
#include <QDir>
#include <QTemporaryFile>

namespace tandem {

SpilledBytes::~SpilledBytes() = default;

void SpilledBytes::removeLeftovers(const QString& dir, const QString& prefix) {
    if (dir.isEmpty())
        return;
    const QDir folder(dir);
    for (const QString& old :
         folder.entryList({prefix + QStringLiteral("??????")}, QDir::Files | QDir::Hidden))
        QFile::remove(folder.filePath(old));
}

Expected<std::shared_ptr<SpilledBytes>> SpilledBytes::write(const QString& dir,
                                                            const QString& prefix,
                                                            const QString& what,
                                                            const Writer& writer) {
    std::shared_ptr<SpilledBytes> s(new SpilledBytes());
    s->m_what = what;
    if (!dir.isEmpty() && QDir().mkpath(dir)) {
        auto file =
            std::make_unique<QTemporaryFile>(QDir(dir).filePath(prefix + QStringLiteral("XXXXXX")));
        if (file->open()) {
            auto size = writer(*file);
            if (size && file->flush() && file->size() == *size) {
                s->m_size = *size;
                s->m_file = std::move(file);
                return s;
            }
            if (!size && size.error().code != ErrorCode::Io)
                return size.error(); // the writer's own fault: memory would not mend it
        }
    }
    // No file to write to: in memory, as much as it is.
    QBuffer buffer(&s->m_bytes);
    buffer.open(QIODevice::WriteOnly);
    auto size = writer(buffer);
    if (!size)
        return size.error();
    buffer.close();
    s->m_size = s->m_bytes.size();
    return s;
}

Expected<QByteArray> SpilledBytes::read(qint64 at, qint64 n) {
    if (at < 0 || n < 0 || at + n > m_size)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("bytes %1 to %2 of %3, which holds %4")
                             .arg(at)
                             .arg(at + n)
                             .arg(m_what)
                             .arg(m_size));
    if (!m_file)
        return m_bytes.mid(at, n);
    std::lock_guard<std::mutex> lock(m_read);
    QByteArray part;
    if (m_file->seek(at))
        part = m_file->read(n);
    if (part.size() != n)
        return makeError(ErrorCode::Io,
                         QStringLiteral("cannot read %1 back from %2: %3")
                             .arg(m_what, m_file->fileName(), m_file->errorString()));
    return part;
}

Expected<QByteArray> SpilledBytes::all() {
    return m_file ? read(0, m_size) : Expected<QByteArray>(m_bytes);
}

Expected<std::shared_ptr<SpilledBytes>> writeModelArchive(const Model& model, bool withWeights,
                                                          const QString& dir) {
    const QString prefix = QStringLiteral(".model-");
    SpilledBytes::removeLeftovers(dir, prefix);
    return SpilledBytes::write(
        dir, prefix, QStringLiteral("the model's archive"),
        [&](QIODevice& out) { return model.writeArchive(out, withWeights); });
}

} // namespace tandem
