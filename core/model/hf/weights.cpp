#include "model/hf/weights.h"

#include "formats/tensorfile.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

#include <memory>

namespace tandem {

namespace {

Error modelError(ErrorCode code, const QString& message) {
    return Error{code, message, ErrorSubject::Model};
}

// The tensors of one safetensors file over its private mapping.
Expected<NamedTensors> mapShard(const QString& path) {
    auto file = std::make_shared<QFile>(path);
    if (!file->exists())
        return modelError(ErrorCode::NotFound, QStringLiteral("%1 is missing").arg(path));
    if (!file->open(QIODevice::ReadOnly))
        return modelError(ErrorCode::Io,
                          QStringLiteral("cannot read %1: %2").arg(path, file->errorString()));
    const qint64 size = file->size();
    uchar* base = size > 0 ? file->map(0, size, QFileDevice::MapPrivateOption) : nullptr;
    if (!base)
        return modelError(ErrorCode::Io,
                          QStringLiteral("cannot map %1: %2").arg(path, file->errorString()));
    auto entries =
        parseSafetensorsHeader(QByteArrayView(reinterpret_cast<const char*>(base), size), path);
    if (!entries)
        return entries.error();
    NamedTensors out;
    for (const SafetensorsEntry& e : *entries) {
        const at::ScalarType type = scalarTypeOf(e.dtype);
        uchar* at = base + e.offset;
        at::Tensor t;
        if (e.length == 0) {
            t = at::empty(e.shape, type);
        } else if (reinterpret_cast<uintptr_t>(at) % uintptr_t(dtypeSize(e.dtype)) != 0) {
            t = at::empty(e.shape, type);
            std::memcpy(t.data_ptr(), at, size_t(e.length));
        } else {
            // The tensor holds the file open, and with it the mapping.
            t = at::from_blob(
                at, e.shape, [file](void*) {}, at::TensorOptions(type));
        }
        out.emplace_back(e.name.toStdString(), std::move(t));
    }
    return out;
}

} // namespace

Expected<NamedTensors> mapHfWeights(const QString& dir) {
    const QDir d(dir);
    const QString single = d.filePath(QStringLiteral("model.safetensors"));
    const QString indexPath = d.filePath(QStringLiteral("model.safetensors.index.json"));
    if (QFile::exists(single))
        return mapShard(single);
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
    QMap<QString, QSet<QString>> byShard; // shard file → the tensors the index puts there
    for (auto it = map.constBegin(); it != map.constEnd(); ++it) {
        const QString shard = it.value().toString();
        if (shard.isEmpty() || shard.contains(QLatin1Char('/')) ||
            shard.contains(QLatin1Char('\\')))
            return modelError(ErrorCode::Corrupt, QStringLiteral("%1 maps %2 to \"%3\", which is "
                                                                 "not a file in the folder")
                                                      .arg(indexPath, it.key(), shard));
        byShard[shard].insert(it.key());
    }
    NamedTensors all;
    QSet<QString> seen;
    for (auto it = byShard.constBegin(); it != byShard.constEnd(); ++it) {
        auto shard = mapShard(d.filePath(it.key()));
        if (!shard)
            return shard.error();
        for (auto& [n, t] : *shard) {
            const QString name = QString::fromStdString(n);
            if (!it.value().contains(name))
                return modelError(ErrorCode::Corrupt,
                                  QStringLiteral("%1 holds %2, which the index puts elsewhere")
                                      .arg(it.key(), name));
            if (seen.contains(name))
                return modelError(ErrorCode::Corrupt,
                                  QStringLiteral("%1 is in two shards").arg(name));
            seen.insert(name);
            all.emplace_back(n, std::move(t));
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
