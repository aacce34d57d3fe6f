#pragma once

#include "engine/internal.h"

// Engine-internal: bytes the coordinator sends and would otherwise hold whole in memory, kept in
// a file in the run's folder instead, and read back from there a part at a time as a link takes
// them. Two kinds: the model's archive (Model::archive()) that each computing worker is sent when
// it joins, at any step of the run; and, as a sharded run is set up, each range's weights and
// optimizer state for its owner. In memory, either was as much again as the model's weights or
// its whole optimizer state beside them, on the machine a sharded run gives the least room.

#include "common/expected.h"

#include <QByteArray>
#include <QString>

#include <functional>
#include <memory>
#include <mutex>

class QIODevice;
class QTemporaryFile;

namespace tandem {

class Model;

class SpilledBytes {
public:
    // Writes the bytes to `out` front to back and says how many it wrote; an Io error where
    // `out` would take no more (a full disk), any other for a fault of what it writes.
    using Writer = std::function<Expected<qint64>(QIODevice& out)>;

    // What `writer` writes, in a file of its own in `dir` whose name starts with `prefix`
    // (".model-"), written as it is made: removed with this object, unnamed where the system allows
    // (then gone with the process, whatever ends it). Where no file can be written there (no
    // folder, a full disk), in memory. `what` names the bytes in errors. Fails only where `writer`
    // does for a reason other than its output.
    static Expected<std::shared_ptr<SpilledBytes>> write(const QString& dir, const QString& prefix,
                                                         const QString& what, const Writer& writer);
    // Removes the named files with `prefix` that a killed run left in `dir`: a folder is one run's
    // at a time.
    static void removeLeftovers(const QString& dir, const QString& prefix);
    ~SpilledBytes();
    SpilledBytes(const SpilledBytes&) = delete;
    SpilledBytes& operator=(const SpilledBytes&) = delete;

    qint64 size() const { return m_size; }
    bool spilled() const { return m_file != nullptr; }
    // What it holds in memory: all of it unless it is in a file.
    qint64 bytesKept() const { return spilled() ? 0 : m_size; }
    // The bytes where they are in memory (empty where they are in a file).
    const QByteArray& inMemory() const { return m_bytes; }
    // `n` bytes from `at`: a part of a send. From its file, which any thread may read.
    Expected<QByteArray> read(qint64 at, qint64 n);
    // All of it, read back where it is in a file.
    Expected<QByteArray> all();

private:
    SpilledBytes() = default;

    QString m_what;
    qint64 m_size = 0;
    QByteArray m_bytes; // in memory: the bytes
    std::unique_ptr<QTemporaryFile> m_file;
    std::mutex m_read; // the file's position, between sends on different threads
};

// `model`'s archive (with its weights or not), in a file in `dir` after a killed run's is
// removed. Fails only where the model cannot be serialised.
Expected<std::shared_ptr<SpilledBytes>> writeModelArchive(const Model& model, bool withWeights,
                                                          const QString& dir);

} // namespace tandem
