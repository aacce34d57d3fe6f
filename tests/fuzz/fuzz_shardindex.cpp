// Fuzz target: a sharded model's model.safetensors.index.json read with its shards as a set
// (formats/shardindex.h): the index, then each shard after a line "--shard FILE--", its
// directory read as safetensors and checked against the index, as a model folder's weights are
// before any is mapped into a tensor.

#include "formats/shardindex.h"
#include "formats/tensorfile.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QByteArray in(reinterpret_cast<const char*>(data), qsizetype(size));
    static const QByteArray kCut("\n--shard ");
    QList<QByteArray> parts;
    for (qsizetype from = 0;;) {
        const qsizetype cut = in.indexOf(kCut, from);
        parts.append(in.mid(from, cut < 0 ? -1 : cut - from));
        if (cut < 0)
            break;
        from = cut + kCut.size();
    }
    auto index = tandem::readShardIndex(parts.first(), QStringLiteral("index.json"));
    if (!index)
        return 0;
    QMap<QString, QStringList> held;
    for (qsizetype i = 1; i < parts.size(); ++i) {
        const qsizetype end = parts[i].indexOf("--\n");
        if (end < 0)
            continue;
        const QString file = QString::fromUtf8(parts[i].left(end));
        if (!index->contains(file))
            continue;
        auto entries = tandem::parseSafetensorsHeader(parts[i].mid(end + 3), file);
        if (!entries)
            return 0;
        QStringList& names = held[file];
        for (const tandem::SafetensorsEntry& e : *entries)
            names.append(e.name);
    }
    (void)tandem::checkShards(*index, held, QStringLiteral("index.json"));
    return 0;
}
