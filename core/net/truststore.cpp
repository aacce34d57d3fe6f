#include "net/truststore.h"

#include "common/files.h"
#include "net/identity.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace tandem {

TrustStore::TrustStore(const QString& home)
    : m_path(QDir(home).filePath(QStringLiteral("trusted-devices.json"))) {}

Expected<QList<TrustStore::Entry>> TrustStore::load() const {
    QList<Entry> out;
    if (!QFileInfo::exists(m_path))
        return out; // nothing paired yet
    auto bytes = readRegularFile(m_path, 16 << 20);
    if (!bytes)
        return bytes.error();
    const auto damaged = [&](const QString& what) {
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("the list of paired devices %1 is damaged (%2); no device "
                                        "is trusted until it is repaired: fix or delete the file, "
                                        "then pair the machines again")
                             .arg(m_path, what));
    };
    QJsonParseError perr;
    const QJsonDocument doc = QJsonDocument::fromJson(*bytes, &perr);
    if (!doc.isObject())
        return damaged(perr.error != QJsonParseError::NoError ? perr.errorString()
                                                              : QStringLiteral("not an object"));
    const QJsonValue devices = doc.object().value(QStringLiteral("devices"));
    if (!devices.isArray())
        return damaged(QStringLiteral("no \"devices\" list"));
    for (const QJsonValue& v : devices.toArray()) {
        const QJsonObject o = v.toObject();
        Entry e{o.value(QStringLiteral("id")).toString(),
                o.value(QStringLiteral("name")).toString(),
                QDateTime::fromString(o.value(QStringLiteral("added")).toString(), Qt::ISODate)};
        if (!isDeviceId(e.id))
            return damaged(QStringLiteral("entry %1 has no valid device ID").arg(out.size() + 1));
        out << e;
    }
    return out;
}

QList<TrustStore::Entry> TrustStore::entries() const {
    auto l = load();
    return l ? *l : QList<Entry>();
}

bool TrustStore::contains(const QString& deviceId) const {
    // A damaged store trusts nobody: failing closed is the only safe reading.
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
    // A damaged file is never overwritten by a list that would lose the devices it held.
    auto loaded = load();
    if (!loaded)
        return loaded.error();
    QList<Entry> list = *loaded;
    for (const Entry& e : list)
        if (e.id == id)
            return success();
    list << Entry{id, name, QDateTime::currentDateTimeUtc()};
    return save(list);
}

Expected<bool> TrustStore::remove(const QString& deviceId) {
    const QString id = deviceId.trimmed().toLower();
    auto loaded = load();
    if (!loaded)
        return loaded.error();
    QList<Entry> list = *loaded;
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
    return writeFileAtomically(m_path,
                               QJsonDocument(QJsonObject{{QStringLiteral("devices"), a}}).toJson(),
                               "truststore.write");
}

} // namespace tandem
