#pragma once

// The description of a run's frozen base (a LoRA run's base weights) that a run spec and a
// checkpoint carry: its size, how it is cut into parts, and each part's BLAKE2b-256. The base's
// hash is the manifest's, so it covers every byte. A manifest arrives from a peer or a file, so
// it is parsed as untrusted input (tests/fuzz/fuzz_basemanifest.cpp).

#include "common/expected.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace tandem {

struct BaseManifest {
    // What a part may be: a cut costs at most a part, and each part's digest is cheap to keep.
    static constexpr qint64 kMinPart = qint64(64) << 10;
    static constexpr qint64 kMaxPart = qint64(64) << 20;
    static constexpr qint64 kMaxBase = qint64(1) << 40; // 1 TiB
    static constexpr int kMaxParts = 1 << 16;

    qint64 totalBytes = 0;
    qint64 partBytes = 0;
    QList<QByteArray> digests; // each part's BLAKE2b-256, 32 bytes
    QString hash;              // BLAKE2b-256 of json(), in hex

    int parts() const { return int(digests.size()); }
    qint64 partSize(int part) const;
    // What the hash is taken over, and what a run spec and a checkpoint carry.
    QByteArray json() const;
    // Sets `hash` from json(), once the figures and digests are in place.
    void seal();
    // A manifest from a peer or a file: its hash must be `hash`, and every figure in it
    // consistent (sizes, part count, digests), or it is refused saying which.
    static Expected<BaseManifest> parse(const QByteArray& json, const QString& hash);
    // BLAKE2b-256, the digest of the parts and of the manifest.
    static QByteArray digest(QByteArrayView bytes);
};

} // namespace tandem
