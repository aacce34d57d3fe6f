#pragma once

#include "common/expected.h"
#include "formats/dataset.h"

#include <QString>

#include <optional>

namespace tandem {

// The datasets a worker received from its coordinators, kept by content hash so that the next
// run on the same data starts at once. Each is a container, HASH.tandem, and for a dataset of
// token windows its tokens beside it (HASH.train.tokens, HASH.test.tokens), which are mapped,
// never read whole: a token file of gigabytes costs disk, not memory. Token blobs are received
// straight into files in this folder (dir()) and moved to their names once the
// dataset they belong to checks out. Everything read back is checked against its hash; a
// damaged entry is a miss, never an error that stops a run.
class DatasetCache {
public:
    explicit DatasetCache(QString dir);
    // A worker's cache: `cacheDir`/datasets, or without one HOME/cache/datasets.
    static DatasetCache of(const QString& cacheDir, const QString& home);
    // Removes received files that will not be kept (empty names are skipped).
    static void discard(const QStringList& files);

    // Also where token blobs are written while they arrive (Connection::setBlobSpill).
    const QString& dir() const { return m_dir; }

    // The dataset cached under `hash`, whose content matches it and which holds at least
    // `trainSamples` training samples; nullopt otherwise. A run cut to its first samples
    // (--limit-train) ships and caches only those, under the whole dataset's hash, so a later
    // run that needs more must not take that copy for the whole.
    std::optional<DatasetSplits> find(const QString& hash, int64_t trainSamples) const;

    // A dataset received from a coordinator: its container and the files its token blobs were
    // written to (empty for a split that carries its own data). Checks that it is the dataset
    // `hash` names, then keeps it; the token files are moved into the cache, or removed when
    // the dataset is refused. The error names what did not match.
    struct Received {
        DatasetSplits data;
        QString cachedAt; // the container's path; empty when it could not be written
    };
    Expected<Received> accept(const QString& hash, const QByteArray& container,
                              const QString& trainTokens, const QString& testTokens) const;

private:
    QString containerPath(const QString& hash) const;
    QString tokensPath(const QString& hash, const QString& split) const;
    Expected<DatasetSplits> read(const QByteArray& container, const QString& hash,
                                 const QString& name) const;

    QString m_dir;
};

} // namespace tandem
