#include "formats/datasetcache.h"

#include "formats/tokenstream.h"

#include <QDir>

#include <QFile>
#include <QSaveFile>
#include <algorithm>

namespace tandem {

namespace {

// The hash names files in the cache, and it comes from the coordinator: anything but a SHA-256
// in hex (a path, "..") is refused before it reaches a file name.
bool isHash(const QString& hash) {
    return hash.size() == 64 && std::all_of(hash.begin(), hash.end(), [](QChar c) {
               return (c >= QLatin1Char('0') && c <= QLatin1Char('9')) ||
                      (c >= QLatin1Char('a') && c <= QLatin1Char('f'));
           });
}

} // namespace

DatasetCache::DatasetCache(QString dir)
    : m_dir(std::move(dir)) {}

DatasetCache DatasetCache::of(const QString& cacheDir, const QString& home) {
    return DatasetCache(
        QDir(cacheDir.isEmpty() ? QDir(home).filePath(QStringLiteral("cache")) : cacheDir)
            .filePath(QStringLiteral("datasets")));
}

void DatasetCache::discard(const QStringList& files) {
    for (const QString& path : files)
        if (!path.isEmpty())
            QFile::remove(path);
}

QString DatasetCache::containerPath(const QString& hash) const {
    return QDir(m_dir).filePath(QStringLiteral("%1.tandem").arg(hash));
}

QString DatasetCache::tokensPath(const QString& hash, const QString& split) const {
    return QDir(m_dir).filePath(QStringLiteral("%1.%2.tokens").arg(hash, split));
}

Expected<DatasetSplits> DatasetCache::read(const QByteArray& container, const QString& hash,
                                           const QString& name) const {
    const TokenSource tokens =
        [&](const QString& split,
            const QString& dtype) -> Expected<std::shared_ptr<const TokenStream>> {
        TokenType type;
        if (!tokenTypeFromName(dtype, &type))
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1: unknown token type \"%2\"").arg(name, dtype));
        const QString path = tokensPath(hash, split);
        if (!QFile::exists(path))
            return makeError(ErrorCode::NotFound,
                             QStringLiteral("%1: its %2 tokens are missing").arg(name, split));
        return TokenStream::map(path, type);
    };
    auto d = datasetFromContainer(container, name, tokens);
    if (!d)
        return d.error();
    if (QString::fromLatin1(d->contentHash) != hash)
        return makeError(
            ErrorCode::Corrupt,
            QStringLiteral("%1 is dataset %2, not the %3 the run uses")
                .arg(name, QString::fromLatin1(d->contentHash).left(16), hash.left(16)));
    return d;
}

std::optional<DatasetSplits> DatasetCache::find(const QString& hash, int64_t trainSamples) const {
    if (!isHash(hash))
        return std::nullopt;
    QFile f(containerPath(hash));
    if (!f.open(QIODevice::ReadOnly))
        return std::nullopt;
    auto d = read(f.readAll(), hash, f.fileName());
    if (!d || d->train.count() < trainSamples)
        return std::nullopt;
    return std::move(*d);
}

Expected<DatasetCache::Received> DatasetCache::accept(const QString& hash,
                                                      const QByteArray& container,
                                                      const QString& trainTokens,
                                                      const QString& testTokens) const {
    const QString name = QStringLiteral("the dataset from the coordinator");
    if (!isHash(hash)) {
        discard({trainTokens, testTokens});
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1 names itself \"%2\", which is not a dataset hash")
                             .arg(name, hash.left(80)));
    }
    const std::pair<QString, QString> received[] = {{QStringLiteral("train"), trainTokens},
                                                    {QStringLiteral("test"), testTokens}};
    // The token files take their cache names before they are mapped (a mapped file cannot be
    // renamed everywhere), and leave the cache again if the dataset is refused.
    QStringList kept;
    auto drop = [&] { discard(kept); };
    for (const auto& [split, path] : received) {
        if (path.isEmpty())
            continue;
        const QString to = tokensPath(hash, split);
        QFile::remove(to);
        if (!QFile::rename(path, to)) {
            QFile::remove(path);
            drop();
            return makeError(ErrorCode::Io, QStringLiteral("cannot move the received tokens to %1")
                                                .arg(QDir::toNativeSeparators(to)));
        }
        kept << to;
    }
    auto d = read(container, hash, name);
    if (!d) {
        drop();
        return d.error();
    }
    // Training goes on without the cache when it cannot be written; the next run receives the
    // data again.
    QDir().mkpath(m_dir);
    QSaveFile f(containerPath(hash));
    const bool cached =
        f.open(QIODevice::WriteOnly) && f.write(container) == container.size() && f.commit();
    if (!cached)
        drop();
    return Received{std::move(*d), cached ? f.fileName() : QString()};
}

} // namespace tandem
