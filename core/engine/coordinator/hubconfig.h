#pragma once

#include "engine/internal.h"

// Engine-internal: what the coordinator's network side is given (HubConfig) and what it hands
// the training side (HubEvent). Shared by the hub, its sessions and the RemoteWorkers.

#include "engine/coordinator/spilledbytes.h"
#include "engine/shard/rangestate.h"
#include "engine/step/basepack.h"
#include "engine/wire/outerwire.h"
#include "engine/work.h"
#include "formats/dataset.h"
#include "net/connection.h"

#include <QHostAddress>
#include <QLoggingCategory>

#include <functional>
#include <memory>

Q_DECLARE_LOGGING_CATEGORY(lcHub)

namespace tandem {

class RemoteWorker;

// What the hub hands the training side, on the network thread: a worker that is ready to
// take work, or a line for the run's log.
struct HubEvent {
    // Relinked: a working worker's link measured again while it was quiet.
    enum class Kind { Joined, Note, Probed, Declined, Relinked };
    Kind kind = Kind::Note;
    std::shared_ptr<RemoteWorker> worker; // Joined
    // Note; Probed, Relinked: the worker's name; Declined: the node invited (HOST:PORT)
    QString text;
    LinkProbe link; // Probed: its link, as the handshake measured it; Relinked: as now
    QString reason; // Declined: the node's answer

    static HubEvent note(QString text) { return make(Kind::Note, std::move(text)); }
    static HubEvent joined(std::shared_ptr<RemoteWorker> w) {
        HubEvent e = make(Kind::Joined, {});
        e.worker = std::move(w);
        return e;
    }
    static HubEvent probed(QString worker, const LinkProbe& link) {
        HubEvent e = make(Kind::Probed, std::move(worker));
        e.link = link;
        return e;
    }
    static HubEvent relinked(QString worker, const LinkProbe& link) {
        HubEvent e = make(Kind::Relinked, std::move(worker));
        e.link = link;
        return e;
    }
    static HubEvent declined(QString node, QString reason) {
        HubEvent e = make(Kind::Declined, std::move(node));
        e.reason = std::move(reason);
        return e;
    }

private:
    static HubEvent make(Kind kind, QString text) {
        HubEvent e;
        e.kind = kind;
        e.text = std::move(text);
        return e;
    }
};

struct HubConfig {
    QString home;
    QString name; // this machine's, in its Hello; empty: the host name
    QHostAddress address = QHostAddress::LocalHost;
    quint16 port = 0;
    int workerTimeoutMs = 30000;
    QString runId;
    wire::WorkerSettings settings; // what a worker computes with
    // Without the base when there is one (spilledbytes.h); null in a hub that sends no model.
    std::shared_ptr<SpilledBytes> modelArchive;
    // The model's frozen base, sent to a worker part by part when its cache lacks it; null when
    // every weight trains.
    std::shared_ptr<const BasePack> base;
    QString schemaHash;
    QString datasetSpec;
    QString datasetHash;
    std::shared_ptr<const DatasetSplits> data;
    // DPO on every weight: the training pairs' reference log-probabilities, two a pair; each
    // assignment carries its samples' (Objective::reference).
    std::shared_ptr<const std::vector<float>> reference;
    TrainMode mode = TrainMode::Sync;
    DType wire = DType::F32;
    OuterWire outer = OuterWire::Fp32; // local-sgd: weights after the first and deltas
    int fragments = 1;                 // local-sgd: 2 or more streams the exchange
    ModelLayout layout;
    int64_t trainSamples = 0;
    std::function<void(HubEvent)> events; // called on the network thread
    // --mode auto: each worker's link is probed after its Hello and the run held back from it
    // until decide() says what the mode is. Otherwise the run follows the probe at once.
    bool modePending = false;
    // --mode auto chose this machine alone: workers that come are sent home with this reason.
    QString dismissed;
    // A sharded sync run (RunConfig::shard): each worker listens for its links and says where;
    // a result carries the buffers only (the gradients go to the ranges' owners); and
    // `shardReport` hears each member's reports (ShardReport), with its device ID, on the
    // network thread.
    bool sharded = false;
    std::function<void(const QString& deviceId, const wire::ShardReport&)> shardReport;
    // A sharded run's owner sent its range's optimizer state (ShardState), after `steps` steps:
    // in a file in `stateDir` where one is given (written as it came), else in memory.
    std::function<void(const QString& deviceId, int64_t steps, const RangeState& state)> shardState;
    QString stateDir;
    // A sharded run's worker left (its session closed), and why.
    std::function<void(const QString& deviceId, const QString& why)> shardLost;
};

// What the run's workers compute with, from its settings: local-SGD's inner optimizer is the
// run's own optimizer, and the precision and the loss are the run's. Nothing of the
// coordinator's own (its output folder, address, invitations or devices) is in it.
wire::WorkerSettings workerSettings(const RunConfig& cfg);

} // namespace tandem
