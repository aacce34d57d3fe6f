#pragma once

#include "engine/internal.h"

// Engine-internal: one machine's whole part in a sharded run, as its coordinator sets it up
// (wire::ShardSetup): it listens for the links of the members listed after it and dials those
// before it (shardlink.h), owns its range of the values (shardowner.h), and takes part in each
// step through its ShardNode. What it has to say to the coordinator (its links are up, a
// worker's range is held or refused, the replica is up to date) comes out as reports; the
// coordinator's own machine hands them on directly, a worker's session sends them.

#include "common/expected.h"
#include "engine/shard/shardlink.h"
#include "engine/shard/shardnode.h"
#include "engine/shard/shardowner.h"
#include "engine/step/optimizer.h"
#include "wire/messages.h"

#include <QElapsedTimer>
#include <QHostAddress>
#include <QObject>
#include <QPointer>

#include <memory>
#include <vector>

namespace tandem {

class ShardPart : public QObject {
    Q_OBJECT

public:
    // This machine (`identity`) in a run whose trainable tensors its worker's `replica` holds
    // (outlives this), sending values in `wire` and stepping its range with `optimizer`, or with
    // local-SGD's outer optimizer where the setup says so (ShardSetup::outerStep).
    ShardPart(const Identity& identity, std::vector<at::Tensor>* replica, DType wire,
              OptimizerConfig optimizer, QObject* parent = nullptr);
    // Closes its links first, saying so, with nothing more reported of them.
    ~ShardPart() override;

    // Listens for the links of the members after this one; the port goes to the coordinator.
    Expected<quint16> listen(const QHostAddress& address, quint16 port = 0);
    // The coordinator's setup: a second one (the coordinator set the run up again without a
    // machine it lost) ends the first, its links and its range first. `range` holds the fp32
    // weights of this machine's range and, after them, its optimizer's state after
    // setup.optimizerSteps steps (ShardOwner::rangeStateBytes(); none: it starts afresh); empty
    // where it owns none. Refuses a setup that does not name this machine, ranges that do not cover
    // the replica's values, and weights or a state that do not fit; links follow, and report(Ready)
    // says when every one is up. The coordinator's own machine is given its range's owner as it
    // starts (`own`, cut where the run's state is) instead of its bytes.
    Status setup(const wire::ShardSetup& setup, const QByteArray& range,
                 std::unique_ptr<ShardOwner> own = nullptr);
    // Only a test of the links (wire::ShardSetup::probe): dials every member `setup` lists but
    // this machine, each at once, and closes each link as soon as the member has proven who it
    // is; then report(Probed) names the first member that did not answer, or none. The setup
    // this machine is part of, if any, is not touched. A second probe replaces the first.
    void probe(const wire::ShardSetup& setup);
    // How long a probe waits for each member's answer (a link through a cut cable never
    // answers).
    static constexpr int kProbeMs = 10000;

    // The worker's gradient bundle for `step`, of which the first `ready` bytes are final
    // (ShardNode::gradientsReady). Returns the bytes it sent to other machines.
    qint64 gradientsReady(int64_t step, const QByteArray& bundle, qint64 ready);
    // Streaming: the last new values of fragment `fragment` that landed here, and their step
    // (ShardNode::takeLanded).
    std::optional<ShardNode::Landed> takeLanded(int fragment);
    // Whether this machine's worker is computing (ShardNode::setReplicaBusy).
    void setReplicaBusy(bool busy);
    // A worker's replica as the wire carries the owners' weights: over a 16-bit wire, each value
    // rounded to it, as the coordinator rounds its own (ShardConductor::roundReplica). A fresh
    // run's first step after its first setup sends no worker the whole model
    // (SyncPolicy::sendsWeights): each computes on the model it was admitted with, rounded here.
    // Nothing while its worker computes; never the coordinator's, whose replica is its masters.
    void roundReplica();
    // The coordinator closes a step on this machine's range.
    Status close(const wire::ShardClose& close);

    // This machine's range's owner: null before the setup, or where it owns none.
    const ShardOwner* owner() const { return m_owner.get(); }
    bool isSetUp() const { return m_node != nullptr; }

Q_SIGNALS:
    // An Updated report carries the bytes on this machine's links to the other members; the
    // machine adds those of its links to the coordinator before it passes the report on.
    void report(const tandem::wire::ShardReport& report);
    // This machine's part failed: the run cannot go on as set up.
    void failed(const QString& why);
    // A link to another member could not be made in time: this machine cannot take part in
    // the run as set up, and the run can go on without it.
    void unreachable(const QString& why);
    // The link to the member `deviceId` was lost: so is what it holds.
    void memberLost(const QString& deviceId, const QString& why);
    // As the machine that logs every range (wire::ShardSetup::backup; the coordinator): what a
    // step added to a segment of range `range`.
    void summed(size_t range, const tandem::ShardLog::Span& span);

private:
    void dial(const ShardMember& to);
    // Ends the setup: its links, its range and its replica's step.
    void reset();
    void linkUp(Connection* link, const QString& deviceId);
    // The node's steps and lost links, as this part's reports.
    void reportFromNode();

    // How long a member keeps dialling one that refuses (it may not be set up yet), and how
    // often.
    static constexpr qint64 kLinkPatienceMs = 30000;
    static constexpr int kRedialMs = 200;
    // How long a link to another member may carry nothing before it is lost, where the setup
    // does not say (wire::ShardSetup::linkTimeoutMs): a run's default worker timeout.
    static constexpr int kLinkTimeoutMs = 30000;

    Identity m_identity;
    std::vector<at::Tensor>* m_replica;
    DType m_wire;
    OptimizerConfig m_optimizer;
    ShardListener m_listener;
    ShardIntroduction m_intro;
    QElapsedTimer m_since; // since the setup
    std::unique_ptr<ShardOwner> m_owner;
    ShardNode* m_node = nullptr;
    int m_expectLinks = 0;
    int m_links = 0;
    int m_linkTimeoutMs = kLinkTimeoutMs;
    bool m_replicaBusy = false; // said before the node was set up
    int m_generation = 0;       // setups so far: a dial of an earlier one is let go
    std::vector<QPointer<ShardDial>> m_probeDials; // the last probe's, until each answers
};

} // namespace tandem
