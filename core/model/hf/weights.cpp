#include "model/hf/weights.h"

#include "common/files.h"
#include "formats/shardindex.h"
#include "formats/tensorfile.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>

#include <map>
#include <memory>
#include <mutex>

#ifdef Q_OS_UNIX
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace tandem {

namespace {

// The mappings that live, by their first byte, so that pages are dropped only from one of them.
struct Mappings {
    std::mutex mutex;
    std::map<uintptr_t, uintptr_t> ranges; // first byte → one past the last
};

Mappings& mappings() {
    static Mappings* m = new Mappings; // outlives every tensor, static ones included
    return *m;
}

// The file, open and mapped, for as long as a tensor over it lives.
struct MappedFile {
    explicit MappedFile(const QString& path)
        : file(path) {}
    ~MappedFile() {
        if (!base)
            return;
        std::lock_guard<std::mutex> lock(mappings().mutex);
        mappings().ranges.erase(reinterpret_cast<uintptr_t>(base));
    }
    QFile file;
    uchar* base = nullptr;
};

Error modelError(ErrorCode code, const QString& message) {
    return Error{code, message, ErrorSubject::Model};
}

// The tensors of one safetensors file over its private mapping.
Expected<NamedTensors> mapShard(const QString& path) {
    auto mapped = std::make_shared<MappedFile>(path);
    QFile* file = &mapped->file;
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
    mapped->base = base;
    {
        std::lock_guard<std::mutex> lock(mappings().mutex);
        mappings().ranges[reinterpret_cast<uintptr_t>(base)] =
            reinterpret_cast<uintptr_t>(base) + uintptr_t(size);
    }
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
                at, e.shape, [mapped](void*) {}, at::TensorOptions(type));
        }
        out.emplace_back(e.name.toStdString(), std::move(t));
    }
    return out;
}

} // namespace

Expected<NamedTensors> mapSafetensorsFile(const QString& path) {
    return mapShard(path);
}

void dropMappedPages(const at::Tensor& t) {
    if (!t.defined() || !t.device().is_cpu() || t.numel() == 0)
        return;
    const auto first = reinterpret_cast<uintptr_t>(t.data_ptr());
    const uintptr_t end = first + uintptr_t(t.numel()) * uintptr_t(t.element_size());
    std::lock_guard<std::mutex> lock(mappings().mutex);
    auto it = mappings().ranges.upper_bound(first);
    if (it == mappings().ranges.begin())
        return;
    --it;
    if (end > it->second)
        return; // not within one mapping
#ifdef Q_OS_UNIX
    const auto page = uintptr_t(sysconf(_SC_PAGESIZE));
    const uintptr_t from = (first + page - 1) / page * page, to = end / page * page;
    if (to > from) // whole pages only: a neighbour's bytes stay
        madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
#endif
}

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
    auto bytes = readRegularFile(indexPath, qint64(64) << 20);
    if (!bytes)
        return bytes.error();
    auto byShard = readShardIndex(*bytes, indexPath);
    if (!byShard)
        return byShard.error();
    NamedTensors all;
    QMap<QString, QStringList> held;
    for (auto it = byShard->constBegin(); it != byShard->constEnd(); ++it) {
        auto shard = mapShard(d.filePath(it.key()));
        if (!shard)
            return shard.error();
        QStringList& names = held[it.key()];
        for (auto& [n, t] : *shard) {
            names.append(QString::fromStdString(n));
            all.emplace_back(n, std::move(t));
        }
    }
    if (auto st = checkShards(*byShard, held, indexPath); !st)
        return st.error();
    return all;
}

} // namespace tandem
