#include "wire/basemanifest.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

namespace tandem {

namespace {

const QString kFormat = QStringLiteral("tandem-base-1");
constexpr qint64 kMaxManifestBytes = qint64(4) << 20;

Error corrupt(const QString& what) {
    return makeError(ErrorCode::Corrupt, QStringLiteral("the run's base model: %1").arg(what));
}

} // namespace

qint64 BaseManifest::partSize(int part) const {
    if (part < 0 || part >= parts())
        return 0;
    return std::min(partBytes, totalBytes - qint64(part) * partBytes);
}

QByteArray BaseManifest::json() const {
    QJsonArray d;
    for (const QByteArray& digest : digests)
        d << QString::fromLatin1(digest.toHex());
    return QJsonDocument(QJsonObject{{QStringLiteral("format"), kFormat},
                                     {QStringLiteral("total_bytes"), totalBytes},
                                     {QStringLiteral("part_bytes"), partBytes},
                                     {QStringLiteral("parts"), d}})
        .toJson(QJsonDocument::Compact);
}

void BaseManifest::seal() {
    hash = QString::fromLatin1(digest(json()).toHex());
}

QByteArray BaseManifest::digest(QByteArrayView bytes) {
    return QCryptographicHash::hash(bytes, QCryptographicHash::Blake2b_256);
}

Expected<BaseManifest> BaseManifest::parse(const QByteArray& json, const QString& hash) {
    if (json.size() > kMaxManifestBytes)
        return corrupt(QStringLiteral("its manifest is over 4 MB"));
    if (QString::fromLatin1(digest(json).toHex()) != hash)
        return corrupt(QStringLiteral("its manifest does not match its hash"));
    const QJsonObject o = QJsonDocument::fromJson(json).object();
    if (o.value(QStringLiteral("format")).toString() != kFormat)
        return corrupt(QStringLiteral("its manifest is not in a format this Tandem reads"));
    BaseManifest m;
    m.hash = hash;
    m.totalBytes = o.value(QStringLiteral("total_bytes")).toInteger(-1);
    m.partBytes = o.value(QStringLiteral("part_bytes")).toInteger(-1);
    if (m.totalBytes < 8 || m.totalBytes > kMaxBase)
        return corrupt(QStringLiteral("its size is outside 8 bytes to 1 TiB"));
    if (m.partBytes < kMinPart || m.partBytes > kMaxPart)
        return corrupt(QStringLiteral("its parts are outside 64 KiB to 64 MiB"));
    const QJsonArray parts = o.value(QStringLiteral("parts")).toArray();
    const qint64 expected = (m.totalBytes + m.partBytes - 1) / m.partBytes;
    if (expected > kMaxParts || parts.size() != expected)
        return corrupt(QStringLiteral("it lists %1 parts where its size makes %2")
                           .arg(parts.size())
                           .arg(expected));
    for (const QJsonValue& v : parts) {
        const QByteArray digest = QByteArray::fromHex(v.toString().toLatin1());
        if (digest.size() != 32 || v.toString().size() != 64)
            return corrupt(QStringLiteral("a part's digest is not 32 bytes of hex"));
        m.digests << digest;
    }
    return m;
}

} // namespace tandem
