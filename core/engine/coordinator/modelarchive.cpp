#include "engine/coordinator/modelarchive.h"

#include "model/model.h"

#include <QDir>
#include <QTemporaryFile>

namespace tandem {

ModelArchive::~ModelArchive() = default;

std::unique_ptr<QTemporaryFile> ModelArchive::newFile(const QString& dir) {
    if (dir.isEmpty() || !QDir().mkpath(dir))
        return nullptr;
    // A run in this folder that ended without removing its own (killed): a folder is one run's
    // at a time.
    const QDir folder(dir);
    for (const QString& old :
         folder.entryList({QStringLiteral(".model-??????")}, QDir::Files | QDir::Hidden))
        QFile::remove(folder.filePath(old));
    auto file = std::make_unique<QTemporaryFile>(folder.filePath(QStringLiteral(".model-XXXXXX")));
    if (!file->open())
        return nullptr;
    return file;
}

Expected<std::shared_ptr<ModelArchive>> ModelArchive::write(const Model& model, bool withWeights,
                                                            const QString& dir) {
    std::shared_ptr<ModelArchive> a(new ModelArchive());
    if (auto file = newFile(dir)) {
        auto size = model.writeArchive(*file, withWeights);
        if (size && file->flush() && file->size() == *size) {
            a->m_size = *size;
            a->m_file = std::move(file);
            return a;
        }
        if (!size && size.error().code != ErrorCode::Io)
            return size.error(); // the model's own fault: memory would not mend it
    }
    // No file to write to: in memory, as much as it is.
    auto bytes = model.archive(withWeights);
    if (!bytes)
        return bytes.error();
    a->m_size = bytes->size();
    a->m_bytes = std::move(*bytes);
    return a;
}

Expected<QByteArray> ModelArchive::read(qint64 at, qint64 n) {
    if (at < 0 || n < 0 || at + n > m_size)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("bytes %1 to %2 of the model's archive, which holds %3")
                             .arg(at)
                             .arg(at + n)
                             .arg(m_size));
    if (!m_file)
        return m_bytes.mid(at, n);
    std::lock_guard<std::mutex> lock(m_read);
    QByteArray part;
    if (m_file->seek(at))
        part = m_file->read(n);
    if (part.size() != n)
        return makeError(ErrorCode::Io,
                         QStringLiteral("cannot read the model's archive back from %1: %2")
                             .arg(m_file->fileName(), m_file->errorString()));
    return part;
}

} // namespace tandem
