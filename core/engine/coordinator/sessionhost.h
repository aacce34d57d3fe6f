#pragma once

#include "engine/internal.h"

// Engine-internal: what a worker's connection (HubSession) and its link (RemoteWorker) need of
// the hub that owns them: the run's settings, the log, the dataset, and word of a worker that
// joined, was measured or left. The hub (hub.h) is the one implementation; the sessions know it
// only through this, so the hub's side and the sessions' do not include each other.

#include "engine/coordinator/hubconfig.h"

#include <QByteArray>
#include <QObject>
#include <QString>

#include <memory>

namespace tandem {

class HubSession;
class RemoteWorker;
struct LinkProbe;

class SessionHost {
public:
    virtual ~SessionHost() = default;
    virtual const HubConfig& config() const = 0;
    virtual void addMessage(const QString& text) = 0;
    // "NAME (device 1F65 EBAE)": how the run names a worker in its log, its events and its
    // summary; " #2" and on when another session has the same.
    virtual QString workerName(const QString& displayName, const QString& deviceId,
                               const HubSession* session) const = 0;
    virtual QByteArray datasetContainer() = 0;
    virtual void joined(std::shared_ptr<RemoteWorker> worker) = 0;
    virtual void probed(const QString& worker, const QString& address, const LinkProbe& link) = 0;
    virtual void sessionGone(HubSession* session) = 0;
    // From any thread: `request` goes to `session` on the network thread, if it is still there.
    virtual void postAssign(HubSession* session, WorkRequest request) = 0;
    // The network thread's object: what a closing session's connection is handed to.
    virtual QObject* networkObject() = 0;
};

} // namespace tandem
