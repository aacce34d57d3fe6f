#include "net/trustwatcher.h"

#include "net/truststore.h"

#include <QMetaMethod>

namespace tandem {

TrustWatcher::TrustWatcher(QString home, QObject* parent, int intervalMs)
    : QObject(parent)
    , m_home(std::move(home)) {
    for (const TrustStore::Entry& e : TrustStore(m_home).entries())
        m_trusted.insert(e.id);
    m_timer.setInterval(intervalMs);
    connect(&m_timer, &QTimer::timeout, this, &TrustWatcher::check);
    m_timer.start();
}

void TrustWatcher::watch(const QString& deviceId) {
    m_watched.insert(deviceId);
}

void TrustWatcher::unwatch(const QString& deviceId) {
    m_watched.remove(deviceId);
}

void TrustWatcher::check() {
    // Nothing to tell anyone: a worker that has not met its coordinator yet.
    if (m_watched.isEmpty() && !isSignalConnected(QMetaMethod::fromSignal(&TrustWatcher::changed)))
        return;
    QSet<QString> now;
    for (const TrustStore::Entry& e : TrustStore(m_home).entries())
        now.insert(e.id);
    const bool differs = now != m_trusted;
    m_trusted = now;
    const QSet<QString> watched = m_watched;
    for (const QString& id : watched)
        if (!now.contains(id)) {
            m_watched.remove(id);
            Q_EMIT revoked(id);
        }
    if (differs)
        Q_EMIT changed();
}

} // namespace tandem
