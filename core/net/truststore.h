#pragma once

#include "common/expected.h"

#include <QDateTime>
#include <QList>
#include <QString>

namespace tandem {

// The device IDs this node accepts, kept as JSON in the home folder. Every check reads the
// file again, so a device removed by another process (the CLI, the GUI) is refused at once.
class TrustStore {
public:
    struct Entry {
        QString id;
        QString name;
        QDateTime added;
    };

    explicit TrustStore(const QString& home);

    // The trusted devices; an error names the file when it is damaged or unreadable.
    Expected<QList<Entry>> load() const;
    // The same, empty when the file is damaged (a damaged store trusts nobody).
    QList<Entry> entries() const;
    bool contains(const QString& deviceId) const;
    Status add(const QString& deviceId, const QString& name = {});
    // Returns false when the ID was not there.
    Expected<bool> remove(const QString& deviceId);
    QString path() const { return m_path; }

private:
    Status save(const QList<Entry>& entries) const;
    QString m_path;
};

} // namespace tandem
