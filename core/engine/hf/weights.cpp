#include "engine/hf/weights.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

namespace tandem {

namespace {

Error modelError(ErrorCode code, const QString& message) {
    return Error{code, message, ErrorSubject::Model};
}

Expected<QList<TensorRecord>> readShard(const QString& path) {
    QFile f(path);
    if (!f.exists())
        return modelError(ErrorCode::NotFound, QStringLiteral("%1 is missing").arg(path));
    if (!f.open(QIODevice::ReadOnly))
        return modelError(ErrorCode::Io,
                          QStringLiteral("cannot read %1: %2").arg(path, f.errorString()));
    return parseSafetensors(f.readAll(), path);
}

} // namespace

Expected<QList<TensorRecord>> readHfWeights(const QString& dir) {
    const QDir d(dir);
    const QString single = d.filePath(QStringLiteral("model.safetensors"));
    const QString indexPath = d.filePath(QStringLiteral("model.safetensors.index.json"));
    if (QFile::exists(single))
        return readShard(single);
    QFile index(indexPath);
    if (!index.exists()) {
        const bool pickle = QFile::exists(d.filePath(QStringLiteral("pytorch_model.bin")));
        return modelError(ErrorCode::NotFound,
                          pickle ? QStringLiteral("%1 has its weights only as pytorch_model.bin "
                                                  "(pickle), which Tandem does not read: save "
                                                  "them as safetensors (save_pretrained with "
                                                  "safe_serialization=True)")
                                       .arg(dir)
                                 : QStringLiteral("%1 has neither model.safetensors nor "
                                                  "model.safetensors.index.json")
                                       .arg(dir));
    }
    if (!index.open(QIODevice::ReadOnly) || index.size() > (64 << 20))
        return modelError(ErrorCode::Io, QStringLiteral("cannot read %1").arg(indexPath));
    const QJsonObject map = QJsonDocument::fromJson(index.readAll())
                                .object()
                                .value(QLatin1String("weight_map"))
                                .toObject();
    if (map.isEmpty())
        return modelError(ErrorCode::Corrupt,
                          QStringLiteral("%1 has no weight_map").arg(indexPath));
    QMap<QString, QStringList> byShard; // shard file → the tensors the index puts there
    for (auto it = map.constBegin(); it != map.constEnd(); ++it) {
        const QString shard = it.value().toString();
        if (shard.isEmpty() || shard.contains(QLatin1Char('/')) ||
            shard.contains(QLatin1Char('\\')))
            return modelError(ErrorCode::Corrupt, QStringLiteral("%1 maps %2 to \"%3\", which is "
                                                                 "not a file in the folder")
                                                      .arg(indexPath, it.key(), shard));
        byShard[shard].append(it.key());
    }
    QList<TensorRecord> all;
    QSet<QString> seen;
    for (auto it = byShard.constBegin(); it != byShard.constEnd(); ++it) {
        auto shard = readShard(d.filePath(it.key()));
        if (!shard)
            return shard.error();
        const QSet<QString> listed(it.value().begin(), it.value().end());
        for (TensorRecord& t : *shard) {
            if (!listed.contains(t.name))
                return modelError(ErrorCode::Corrupt,
                                  QStringLiteral("%1 holds %2, which the index puts elsewhere")
                                      .arg(it.key(), t.name));
            if (seen.contains(t.name))
                return modelError(ErrorCode::Corrupt,
                                  QStringLiteral("%1 is in two shards").arg(t.name));
            seen.insert(t.name);
            all.append(std::move(t));
        }
    }
    for (auto it = map.constBegin(); it != map.constEnd(); ++it)
        if (!seen.contains(it.key()))
            return modelError(ErrorCode::Corrupt, QStringLiteral("%1 is not in %2, where the "
                                                                 "index puts it")
                                                      .arg(it.key(), it.value().toString()));
    return all;
}

} // namespace tandem
