#pragma once

#include "engine/internal.h"

// Engine-internal: the model's archive (Model::archive()) that each computing worker is sent
// when it joins. A worker may join at any step, so the coordinator has it for the whole run; in
// memory, that was as much again as the model's weights beside them, on the machine a sharded
// run gives the least room. It is written straight to a file in the run's folder instead, a
// tensor at a time, and each send reads it from there a part at a time as the link takes it.

#include "common/expected.h"

#include <QByteArray>
#include <QString>

#include <memory>
#include <mutex>

class QTemporaryFile;

namespace tandem {

class Model;

class ModelArchive {
public:
    // `model`'s archive (with its weights or not) in a file in `dir`, written as it is made:
    // removed with this object, unnamed where the system allows (then gone with the process,
    // whatever ends it); a named one a killed run left there is removed first. Where no file
    // can be written there (no folder, a full disk), in memory. Fails only where the model
    // cannot be serialised.
    static Expected<std::shared_ptr<ModelArchive>> write(const Model& model, bool withWeights,
                                                         const QString& dir);
    ~ModelArchive();
    ModelArchive(const ModelArchive&) = delete;
    ModelArchive& operator=(const ModelArchive&) = delete;

    qint64 size() const { return m_size; }
    bool spilled() const { return m_file != nullptr; }
    // What it holds in memory between joins: all of it unless it is in a file.
    qint64 bytesKept() const { return spilled() ? 0 : m_size; }
    // The archive where it is in memory (empty where it is in a file).
    const QByteArray& inMemory() const { return m_bytes; }
    // `n` bytes from `at`: a part of a send. From its file, which any thread may read.
    Expected<QByteArray> read(qint64 at, qint64 n);

private:
    ModelArchive() = default;
    // A file of its own in `dir`, open for writing, after a killed run's is removed; null where
    // none can be made.
    static std::unique_ptr<QTemporaryFile> newFile(const QString& dir);

    qint64 m_size = 0;
    QByteArray m_bytes; // in memory: the archive
    std::unique_ptr<QTemporaryFile> m_file;
    std::mutex m_read; // the file's position, between sends on different threads
};

} // namespace tandem
