#pragma once

// Watches a home's trust store for devices that stop being trusted. Another process (the
// command line, the app) may unpair a device at any moment; the store is read again every
// interval, and revoked() fires once for each watched device that is gone. Sessions with that
// device end at once.

#include <QObject>
#include <QSet>
#include <QString>
#include <QTimer>

namespace tandem {

class TrustWatcher : public QObject {
    Q_OBJECT

public:
    explicit TrustWatcher(QString home, QObject* parent = nullptr, int intervalMs = 1000);

    // Starts watching `deviceId`.
    void watch(const QString& deviceId);
    void unwatch(const QString& deviceId);

Q_SIGNALS:
    void revoked(const QString& deviceId);
    // The set of trusted devices differs from the last reading.
    void changed();

private:
    void check();

    QString m_home;
    QTimer m_timer;
    QSet<QString> m_watched;
    QSet<QString> m_trusted;
};

} // namespace tandem
