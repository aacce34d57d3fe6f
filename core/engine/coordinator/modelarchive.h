#pragma once

#include "engine/internal.h"

// Engine-internal: the model's archive (Model::archive()) that each computing worker is sent
// when it joins. A worker may join at any step, so the coordinator has it for the whole run; in
// memory, that was as much again as the model's weights beside them, on the machine a sharded
// run gives the least room. It waits in a file in the run's folder instead, and is read back
// while workers are sent it.

#include "common/expected.h"

#include <QByteArray>
#include <QString>

#include <memory>

class QTemporaryFile;

namespace tandem {

class ModelArchive {
public:
    // In a file in `dir`: removed with this object, unnamed where the system allows (then gone
    // with the process, whatever ends it); a named one a killed run left there is removed
    // first. Where none can be written there, in memory.
    static std::shared_ptr<ModelArchive> keep(QByteArray bytes, const QString& dir);
    ~ModelArchive();
    ModelArchive(const ModelArchive&) = delete;
    ModelArchive& operator=(const ModelArchive&) = delete;

    qint64 size() const { return m_size; }
    bool spilled() const { return m_file != nullptr; }
    // What it holds in memory between joins: all of it unless it is in a file.
    qint64 bytesKept() const { return spilled() ? 0 : m_size; }
    // The archive; read back from its file while a send that took it earlier still holds it,
    // and shared with that send rather than read again.
    Expected<QByteArray> bytes();
    // Lets go of the bytes read back once no send holds them any more.
    void trim();

private:
    explicit ModelArchive(qint64 size);

    qint64 m_size = 0;
    QByteArray m_bytes; // in memory: the archive; spilled: the last read, while a send holds it
    std::unique_ptr<QTemporaryFile> m_file;
};

} // namespace tandem
