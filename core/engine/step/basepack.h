#pragma once

#include "engine/internal.h"

// Engine-internal: a run's frozen base (a LoRA run's base weights, quantized or as stored) as
// the bytes a worker keeps and a checkpoint names. They are one safetensors file, cut into parts
// that travel, are checked and are written one at a time, so that neither side ever holds the
// base twice and a cut transfer resumes at the first part that is not here. The manifest lists
// each part's BLAKE2b-256; the base's hash is the manifest's, so it covers every byte, the
// quantization included.

#include "common/expected.h"
#include "model/model.h"
#include "model/tensors.h"
#include "wire/basemanifest.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <memory>
#include <optional>

namespace tandem {

// The coordinator's side: the base's bytes, produced part by part from the model's tensors.
class BasePack {
public:
    // The model's frozen tensors as a base; null when nothing is frozen (every weight trains,
    // and the archive holds them). The parts' digests are worked out here, on every core.
    static Expected<std::shared_ptr<const BasePack>> of(const Model& model);

    // The model's base when it has that hash; null for another base, or none.
    static std::shared_ptr<const BasePack> withHash(const Model& model, const QString& hash);

    const BaseManifest& manifest() const { return m_manifest; }
    // Part `part`'s bytes, copied from the tensors (empty for a part outside the base).
    QByteArray part(int part) const;
    // The base's tensors by name, as the file holds them: what a model is rebuilt with.
    const NamedTensors& tensors() const { return m_tensors; }

private:
    struct Segment {
        qint64 offset = 0; // in the file
        qint64 length = 0;
        const char* data = nullptr;
    };
    // Calls `use` with each piece of the file's bytes in [from, from + length).
    template <typename F> void pieces(qint64 from, qint64 length, F&& use) const;

    BaseManifest m_manifest;
    QByteArray m_header; // the safetensors header: its length and its JSON
    std::vector<Segment> m_segments;
    NamedTensors m_tensors; // what the segments point into
};

// A worker's bases, by hash: DIR/HASH.safetensors, and DIR/HASH.partial while one arrives.
// Everything read back is checked against the manifest; a damaged entry is a miss.
class BaseCache {
public:
    explicit BaseCache(QString dir);
    // `cacheDir`/models, or without one HOME/cache/models.
    static BaseCache of(const QString& cacheDir, const QString& home);
    const QString& dir() const { return m_dir; }

    // The base the manifest describes, mapped, when it is here whole; nullopt otherwise.
    std::optional<NamedTensors> find(const BaseManifest& m) const;
    // How many of its first parts an earlier, cut transfer left here, each checked; what
    // follows the last good one is cut off.
    int partsHeld(const BaseManifest& m) const;
    // Before the first part: the folder can be written, and holds the rest of the base with
    // room to spare; refused naming the folder and the figures otherwise.
    Status prepare(const BaseManifest& m, int held) const;
    // Part `part` (the next one), checked against its digest, then written in its place.
    Status write(const BaseManifest& m, int part, const QByteArray& bytes) const;
    // After the last part: the file takes its name and is mapped.
    Expected<NamedTensors> complete(const BaseManifest& m) const;

private:
    QString path(const BaseManifest& m, const char* suffix) const;
    QString m_dir;
};

// A base found in a folder of models the user pointed a worker at (tandem worker --models DIR):
// DIR itself or a folder in it, whose config.json is the run's and whose base, opened as the
// run's archive says, has the manifest's hash. Its tensors come from that folder (mapped, or
// quantized here as the coordinator quantized them); nullopt when no folder there holds it.
struct FoundBase {
    NamedTensors tensors;
    QString folder;
};
std::optional<FoundBase> findBaseIn(const QString& modelsDir, const BaseManifest& m,
                                    const QByteArray& archive);

} // namespace tandem
