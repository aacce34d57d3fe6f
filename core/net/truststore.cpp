#include "truststore.h"

#include "identity.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace tandem {

TrustStore::TrustStore(const QString& home)
    : m_path(QDir(home).filePath(QStringLiteral("trusted-devices.json"))) {}

QList<TrustStore::Entry> TrustStore::entries() const {
    QList<Entry> out;
    QFile f(m_path);
    if (!f.open(QIODevice::ReadOnly) || f.size() > (16 << 20))
        return out;
    const QJsonArray a =
        QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("devices")).toArray();
    for (const QJsonValue& v : a) {
        const QJsonObject o = v.toObject();
        Entry e{o.value(QStringLiteral("id")).toString(),
                o.value(QStringLiteral("name")).toString(),
                QDateTime::fromString(o.value(QStringLiteral("added")).toString(), Qt::ISODate)};
        if (isDeviceId(e.id))
            out << e;
    }
    return out;
}

bool TrustStore::contains(const QString& deviceId) const {
    for (const Entry& e : entries())
        if (e.id == deviceId)
            return true;
    return false;
}

Status TrustStore::add(const QString& deviceId, const QString& name) {
    const QString id = deviceId.trimmed().toLower();
    if (!isDeviceId(id))
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("\"%1\" is not a device ID (64 hexadecimal digits, as "
                                        "'tandem identity' prints)")
                             .arg(deviceId));
    QList<Entry> list = entries();
    for (const Entry& e : list)
        if (e.id == id)
            return success();
    list << Entry{id, name, QDateTime::currentDateTimeUtc()};
    return save(list);
}

Expected<bool> TrustStore::remove(const QString& deviceId) {
    const QString id = deviceId.trimmed().toLower();
    QList<Entry> list = entries();
    const qsizetype before = list.size();
    list.removeIf([&](const Entry& e) { return e.id == id; });
    if (list.size() == before)
        return false;
    if (auto st = save(list); !st)
        return st.error();
    return true;
}

Status TrustStore::save(const QList<Entry>& entries) const {
    QJsonArray a;
    for (const Entry& e : entries)
        a.append(QJsonObject{{QStringLiteral("id"), e.id},
                             {QStringLiteral("name"), e.name},
                             {QStringLiteral("added"), e.added.toString(Qt::ISODate)}});
    QDir().mkpath(QFileInfo(m_path).absolutePath());
    QSaveFile f(m_path);
    const QByteArray bytes = QJsonDocument(QJsonObject{{QStringLiteral("devices"), a}}).toJson();
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit())
        return makeError(ErrorCode::Io,
                         QStringLiteral("cannot write %1: %2").arg(m_path, f.errorString()));
    return success();
}

} // namespace tandem
