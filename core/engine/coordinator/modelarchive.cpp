#include "engine/coordinator/modelarchive.h"

#include <QDir>
#include <QTemporaryFile>

namespace tandem {

ModelArchive::ModelArchive(qint64 size)
    : m_size(size) {}

ModelArchive::~ModelArchive() = default;

std::shared_ptr<ModelArchive> ModelArchive::keep(QByteArray bytes, const QString& dir) {
    std::shared_ptr<ModelArchive> a(new ModelArchive(bytes.size()));
    if (!dir.isEmpty() && QDir().mkpath(dir)) {
        // A run in this folder that ended without removing its own (killed): a folder is one
        // run's at a time.
        const QDir folder(dir);
        for (const QString& old :
             folder.entryList({QStringLiteral(".model-??????")}, QDir::Files | QDir::Hidden))
            QFile::remove(folder.filePath(old));
        auto file =
            std::make_unique<QTemporaryFile>(folder.filePath(QStringLiteral(".model-XXXXXX")));
        if (file->open() && file->write(bytes) == bytes.size() && file->flush()) {
            a->m_file = std::move(file);
            return a;
        }
    }
    a->m_bytes = std::move(bytes);
    return a;
}

Expected<QByteArray> ModelArchive::bytes() {
    if (!m_file || !m_bytes.isNull())
        return m_bytes;
    QByteArray read;
    if (m_file->seek(0))
        read = m_file->read(m_size);
    if (read.size() != m_size)
        return makeError(ErrorCode::Io,
                         QStringLiteral("cannot read the model's archive back from %1: %2")
                             .arg(m_file->fileName(), m_file->errorString()));
    m_bytes = read;
    return read;
}

void ModelArchive::trim() {
    if (m_file && !m_bytes.isNull() && m_bytes.isDetached())
        m_bytes = QByteArray();
}

} // namespace tandem
