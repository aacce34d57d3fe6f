#include "formats/shardindex.h"

#include "formats/json.h"

#include <QJsonObject>
#include <QSet>

namespace tandem {

namespace {

Error corruptIndex(const QString& message) {
    return Error{ErrorCode::Corrupt, message, ErrorSubject::Model};
}

} // namespace

Expected<QMap<QString, QStringList>> readShardIndex(const QByteArray& bytes, const QString& name) {
    QJsonParseError err;
    const QJsonDocument doc = parseJson(bytes, &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject())
        return corruptIndex(QStringLiteral("%1 is not a JSON object (%2 at byte %3)")
                                .arg(name, err.error == QJsonParseError::NoError
                                               ? QStringLiteral("not an object")
                                               : err.errorString())
                                .arg(err.offset));
    const QJsonObject map = doc.object().value(QLatin1String("weight_map")).toObject();
    if (map.isEmpty())
        return corruptIndex(QStringLiteral("%1 has no weight_map").arg(name));
    QMap<QString, QStringList> byShard;
    for (auto it = map.constBegin(); it != map.constEnd(); ++it) {
        const QString shard = it.value().toString();
        if (shard.isEmpty() || shard.contains(QLatin1Char('/')) ||
            shard.contains(QLatin1Char('\\')) || shard == QLatin1String("..") ||
            shard == QLatin1String("."))
            return corruptIndex(QStringLiteral("%1 maps %2 to \"%3\", which is not a file in the "
                                               "folder")
                                    .arg(name, it.key(), shard));
        byShard[shard].append(it.key());
    }
    return byShard;
}

Status checkShards(const QMap<QString, QStringList>& index, const QMap<QString, QStringList>& held,
                   const QString& name) {
    QHash<QString, QString> where; // tensor → the shard the index puts it in
    for (auto it = index.constBegin(); it != index.constEnd(); ++it)
        for (const QString& t : it.value())
            where.insert(t, it.key());
    QSet<QString> seen;
    for (auto it = held.constBegin(); it != held.constEnd(); ++it)
        for (const QString& t : it.value()) {
            if (where.value(t) != it.key())
                return corruptIndex(
                    QStringLiteral("%1 holds %2, which %3 puts elsewhere").arg(it.key(), t, name));
            if (seen.contains(t))
                return corruptIndex(QStringLiteral("%1 is in two shards").arg(t));
            seen.insert(t);
        }
    for (auto it = where.constBegin(); it != where.constEnd(); ++it)
        if (!seen.contains(it.key()))
            return corruptIndex(QStringLiteral("%1 is not in %2, where %3 puts it")
                                    .arg(it.key(), it.value(), name));
    return success();
}

} // namespace tandem
