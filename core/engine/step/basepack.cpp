#include "engine/step/basepack.h"

#include "common/failpoint.h"
#include "model/openmodel.h"

#include <ATen/Parallel.h>

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLocale>
#include <QStorageInfo>

#include <algorithm>

namespace tandem {

namespace {

constexpr qint64 kMinPart = BaseManifest::kMinPart;
constexpr qint64 kMaxPart = BaseManifest::kMaxPart;
// About this many parts: a cut costs at most a part, and each part's digest is cheap to keep.
constexpr qint64 kTargetParts = 64;

Error corrupt(const QString& what) {
    return makeError(ErrorCode::Corrupt, QStringLiteral("the run's base model: %1").arg(what));
}

QString size(qint64 bytes) {
    return QLocale::c().formattedDataSize(bytes);
}

} // namespace

template <typename F> void BasePack::pieces(qint64 from, qint64 length, F&& use) const {
    const qint64 end = from + length;
    if (from < m_header.size()) {
        const qint64 n = std::min<qint64>(m_header.size(), end) - from;
        use(m_header.constData() + from, n);
    }
    auto it = std::upper_bound(m_segments.begin(), m_segments.end(), from,
                               [](qint64 at, const Segment& s) { return at < s.offset; });
    if (it != m_segments.begin())
        --it;
    for (; it != m_segments.end() && it->offset < end; ++it) {
        const qint64 a = std::max(from, it->offset);
        const qint64 b = std::min(end, it->offset + it->length);
        if (a < b)
            use(it->data + (a - it->offset), b - a);
    }
}

Expected<std::shared_ptr<const BasePack>> BasePack::of(const Model& model) {
    const ModelTensors t = modelTensors(model);
    if (t.frozen.empty())
        return std::shared_ptr<const BasePack>();
    auto pack = std::make_shared<BasePack>();
    // Wider elements first, so that every tensor of the file starts on its element size and a
    // worker maps it where it lies.
    std::vector<size_t> order(t.frozen.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return t.frozen[a].element_size() > t.frozen[b].element_size();
    });
    QList<SafetensorsEntry> entries;
    for (size_t i : order) {
        at::Tensor v = t.frozen[i];
        DType d;
        if (!v.device().is_cpu() || !dtypeOf(v.scalar_type(), &d))
            return makeError(ErrorCode::Runtime,
                             QStringLiteral("the base weight %1 cannot be sent to workers")
                                 .arg(QString::fromStdString(t.frozenNames[i])));
        v = v.contiguous();
        entries.append({QString::fromStdString(t.frozenNames[i]), d, v.sizes().vec(), 0,
                        v.numel() * qint64(v.element_size())});
        pack->m_tensors.emplace_back(t.frozenNames[i], std::move(v));
    }
    pack->m_header = safetensorsHeader(entries, {{QStringLiteral("format"), QStringLiteral("pt")}});
    qint64 offset = pack->m_header.size();
    for (qsizetype i = 0; i < entries.size(); ++i) {
        pack->m_segments.push_back(
            {offset, entries[i].length,
             static_cast<const char*>(pack->m_tensors[size_t(i)].second.data_ptr())});
        offset += entries[i].length;
    }
    BaseManifest& m = pack->m_manifest;
    m.totalBytes = offset;
    const qint64 target = (m.totalBytes + kTargetParts - 1) / kTargetParts;
    m.partBytes = std::clamp((target + kMinPart - 1) / kMinPart * kMinPart, kMinPart, kMaxPart);
    const int parts = int((m.totalBytes + m.partBytes - 1) / m.partBytes);
    std::vector<QByteArray> digests(static_cast<size_t>(parts));
    at::parallel_for(0, parts, 1, [&](int64_t first, int64_t last) {
        for (int64_t p = first; p < last; ++p) {
            QCryptographicHash h(QCryptographicHash::Blake2b_256);
            const qint64 n = std::min(m.partBytes, m.totalBytes - p * m.partBytes);
            pack->pieces(p * m.partBytes, n,
                         [&h](const char* d, qint64 len) { h.addData(QByteArrayView(d, len)); });
            digests[size_t(p)] = h.result();
        }
    });
    for (QByteArray& d : digests)
        m.digests << std::move(d);
    m.seal();
    return std::shared_ptr<const BasePack>(std::move(pack));
}

std::shared_ptr<const BasePack> BasePack::withHash(const Model& model, const QString& hash) {
    auto pack = of(model);
    return pack && *pack && (*pack)->manifest().hash == hash ? *pack : nullptr;
}

QByteArray BasePack::part(int part) const {
    const qint64 n = m_manifest.partSize(part);
    QByteArray out;
    if (n <= 0)
        return out;
    out.reserve(n);
    pieces(qint64(part) * m_manifest.partBytes, n,
           [&out](const char* d, qint64 len) { out.append(d, len); });
    return out;
}

BaseCache::BaseCache(QString dir)
    : m_dir(std::move(dir)) {}

BaseCache BaseCache::of(const QString& cacheDir, const QString& home) {
    return BaseCache(
        QDir(cacheDir.isEmpty() ? QDir(home).filePath(QStringLiteral("cache")) : cacheDir)
            .filePath(QStringLiteral("models")));
}

QString BaseCache::path(const BaseManifest& m, const char* suffix) const {
    return QDir(m_dir).filePath(m.hash.left(64) + QLatin1String(suffix));
}

namespace {

// Whether the first `parts` parts of `file` match their digests, checked on every core; the
// number of the first that does not, or `parts`.
int firstBadPart(QFile& file, const BaseManifest& m, int parts) {
    if (parts <= 0)
        return 0;
    const qint64 length = std::min(file.size(), qint64(parts) * m.partBytes);
    const uchar* base = length > 0 ? file.map(0, length) : nullptr;
    if (!base)
        return 0;
    std::vector<char> good(size_t(parts), 0);
    at::parallel_for(0, parts, 1, [&](int64_t first, int64_t last) {
        for (int64_t p = first; p < last; ++p) {
            const qint64 n = m.partSize(int(p));
            if (p * m.partBytes + n > length)
                continue;
            good[size_t(p)] =
                BaseManifest::digest(QByteArrayView(
                    reinterpret_cast<const char*>(base) + p * m.partBytes, n)) == m.digests[int(p)];
        }
    });
    file.unmap(const_cast<uchar*>(base));
    return int(std::find(good.begin(), good.end(), 0) - good.begin());
}

} // namespace

std::optional<NamedTensors> BaseCache::find(const BaseManifest& m) const {
    QFile file(path(m, ".safetensors"));
    if (!file.open(QIODevice::ReadOnly) || file.size() != m.totalBytes)
        return std::nullopt;
    if (firstBadPart(file, m, m.parts()) != m.parts()) {
        file.close();
        file.remove();
        return std::nullopt;
    }
    auto tensors = mapSafetensorsFile(file.fileName());
    if (!tensors)
        return std::nullopt;
    return std::move(*tensors);
}

int BaseCache::partsHeld(const BaseManifest& m) const {
    QFile file(path(m, ".partial"));
    if (!file.open(QIODevice::ReadWrite))
        return 0;
    const int whole = int(std::min<qint64>(m.parts(), file.size() / m.partBytes));
    // The last part is short: the file holds it only when it holds all.
    const int held = firstBadPart(file, m, file.size() == m.totalBytes ? m.parts() : whole);
    file.resize(std::min(m.totalBytes, qint64(held) * m.partBytes));
    return held;
}

Status BaseCache::prepare(const BaseManifest& m, int held) const {
    if (!QDir().mkpath(m_dir))
        return makeError(ErrorCode::Io,
                         QStringLiteral("the model cache %1 cannot be created; choose a folder "
                                        "this user can write (tandem worker --cache DIR)")
                             .arg(m_dir));
    QFile file(path(m, ".partial"));
    if (!file.open(QIODevice::ReadWrite))
        return makeError(ErrorCode::Io,
                         QStringLiteral("the model cache %1 cannot be written (%2); choose a "
                                        "folder this user can write (tandem worker --cache DIR)")
                             .arg(m_dir, file.errorString()));
    const qint64 needed = m.totalBytes - qint64(held) * m.partBytes;
    const qint64 margin = std::max<qint64>(qint64(256) << 20, m.totalBytes / 50);
    const qint64 free = QStorageInfo(m_dir).bytesAvailable();
    if (free >= 0 && free < needed + margin)
        return makeError(ErrorCode::Io,
                         QStringLiteral("the model cache %1 has %2 free; the run's base model "
                                        "needs %3 more. Free some space there, or choose "
                                        "another folder (tandem worker --cache DIR)")
                             .arg(m_dir, size(free), size(needed + margin)));
    return success();
}

Status BaseCache::write(const BaseManifest& m, int part, const QByteArray& bytes) const {
    if (part < 0 || part >= m.parts() || bytes.size() != m.partSize(part))
        return corrupt(QStringLiteral("part %1 arrived with %2 bytes, not %3")
                           .arg(part + 1)
                           .arg(bytes.size())
                           .arg(m.partSize(part)));
    if (BaseManifest::digest(bytes) != m.digests[part])
        return corrupt(
            QStringLiteral("part %1 of %2 does not match its digest").arg(part + 1).arg(m.parts()));
    QFile file(path(m, ".partial"));
    const bool ok = file.open(QIODevice::ReadWrite) && file.resize(qint64(part) * m.partBytes) &&
                    file.seek(qint64(part) * m.partBytes) && !TANDEM_FAILPOINT("base.write") &&
                    file.write(bytes) == bytes.size() && file.flush();
    if (!ok) {
        const QString why = file.errorString();
        file.resize(qint64(part) * m.partBytes);
        return makeError(
            ErrorCode::Io,
            QStringLiteral("cannot write part %1 of the run's base model to %2: "
                           "%3; %4 free there")
                .arg(part + 1)
                .arg(file.fileName(), why, size(QStorageInfo(m_dir).bytesAvailable())));
    }
    return success();
}

Expected<NamedTensors> BaseCache::complete(const BaseManifest& m) const {
    const QString done = path(m, ".safetensors");
    QFile::remove(done);
    if (!QFile::rename(path(m, ".partial"), done))
        return makeError(ErrorCode::Io,
                         QStringLiteral("cannot name the run's base model %1").arg(done));
    return mapSafetensorsFile(done);
}

std::optional<FoundBase> findBaseIn(const QString& modelsDir, const BaseManifest& m,
                                    const QByteArray& archive) {
    if (modelsDir.isEmpty())
        return std::nullopt;
    QStringList candidates{modelsDir};
    const QDir dir(modelsDir);
    for (const QString& sub : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
        candidates << dir.filePath(sub);
    for (const QString& folder : candidates) {
        if (!QFileInfo::exists(QDir(folder).filePath(QStringLiteral("config.json"))))
            continue;
        auto model = openFolderLikeArchive(folder, archive);
        if (!model)
            continue;
        if (auto pack = BasePack::withHash(*model, m.hash))
            return FoundBase{pack->tensors(), folder};
    }
    return std::nullopt;
}

} // namespace tandem
