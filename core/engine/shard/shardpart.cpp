#include "engine/shard/shardpart.h"

#include "engine/wire/wiretensors.h"

#include <QTimer>

#include <memory>
#include <utility>

namespace tandem {

namespace {

// The owner of [begin, end) from the setup's blob `range`: the range's fp32 weights, then (a
// resumed run's, after `steps` steps) its optimizer's state.
Expected<std::unique_ptr<ShardOwner>> ownerOfBlob(const ShardLayout& layout, int64_t begin,
                                                  int64_t end, const QByteArray& range,
                                                  int64_t steps, const OptimizerConfig& optimizer) {
    const qint64 want = (end - begin) * qint64(sizeof(float));
    if (range.size() == want) {
        // The weights alone: the owner keeps them where they arrived, a share of the blob's
        // bytes (not a copy), so that a range of gigabytes is never held twice. The caller lets
        // its own share go, and no one else reads them.
        auto* kept = new QByteArray(range);
        return std::make_unique<ShardOwner>(ShardOwner::adopting(
            layout, begin, end,
            at::from_blob(
                const_cast<char*>(kept->constData()), {end - begin}, [kept](void*) { delete kept; },
                at::TensorOptions().dtype(at::kFloat)),
            optimizer));
    }
    // A resumed run's state follows the weights: they are copied out, so that the state's bytes
    // go with the blob, and the state is read where it lies, copied once, into the owner.
    auto owner = std::make_unique<ShardOwner>(layout, begin, end,
                                              at::from_blob(const_cast<char*>(range.constData()),
                                                            {end - begin},
                                                            at::TensorOptions().dtype(at::kFloat)),
                                              optimizer);
    if (auto st = owner->restoreRange(
            steps, QByteArray::fromRawData(range.constData() + want, range.size() - want));
        !st)
        return st.error();
    return owner;
}

} // namespace

ShardPart::ShardPart(const Identity& identity, std::vector<at::Tensor>* replica, DType wire,
                     OptimizerConfig optimizer, QObject* parent)
    : QObject(parent)
    , m_identity(identity)
    , m_replica(replica)
    , m_wire(wire)
    , m_optimizer(optimizer)
    , m_listener(identity) {
    connect(&m_listener, &ShardListener::linked, this,
            [this](Connection* link, const QString& deviceId) { linkUp(link, deviceId); });
}

ShardPart::~ShardPart() {
    reset();
}

Expected<quint16> ShardPart::listen(const QHostAddress& address, quint16 port) {
    if (auto st = m_listener.listen(address, port); !st)
        return st.error();
    return m_listener.port();
}

Status ShardPart::setup(const wire::ShardSetup& setup, const QByteArray& range,
                        std::unique_ptr<ShardOwner> own) {
    const auto refuse = [](const QString& why) {
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("the coordinator's setup of the sharded run: %1").arg(why));
    };
    reset();
    if (!m_replica)
        return refuse(QStringLiteral("this machine has no replica to keep up to date"));
    const QString me = m_identity.deviceId();
    int myIndex = -1;
    ShardIntroduction intro;
    intro.runId = setup.runId;
    intro.token = setup.token;
    for (int i = 0; i < setup.members.size(); ++i) {
        const wire::ShardSetup::Peer& p = setup.members[i];
        if (intro.find(p.deviceId))
            return refuse(QStringLiteral("device %1 is listed twice").arg(p.deviceId));
        if (p.deviceId == me)
            myIndex = i;
        intro.members.push_back({p.deviceId, p.host, p.port});
    }
    if (myIndex < 0)
        return refuse(QStringLiteral("it does not name this machine (device %1)").arg(me));
    const ShardLayout layout = ShardLayout::of(*m_replica);
    std::vector<ShardRange> ranges;
    const wire::ShardSetup::Span* mine = nullptr;
    for (const wire::ShardSetup::Span& r : setup.ranges) {
        if (!intro.find(r.owner))
            return refuse(
                QStringLiteral("device %1 owns a range but is not a member").arg(r.owner));
        ranges.push_back({r.begin, r.end, r.owner});
        if (r.owner == me) {
            if (mine)
                return refuse(QStringLiteral("this machine owns two ranges"));
            mine = &r;
        }
    }
    if (ranges.empty() || ranges.back().end != layout.values)
        return refuse(QStringLiteral("its ranges cover %1 values; the model has %2")
                          .arg(ranges.empty() ? 0 : ranges.back().end)
                          .arg(layout.values));
    if (mine && own) {
        if (own->begin() != mine->begin || own->end() != mine->end || !range.isEmpty())
            return refuse(QStringLiteral("the owner made for values %1 to %2 is not this machine's")
                              .arg(own->begin())
                              .arg(own->end()));
        m_owner = std::move(own);
    } else if (mine) {
        const qint64 want = (mine->end - mine->begin) * qint64(sizeof(float));
        if (range.size() < want || (range.size() > want && setup.optimizerSteps == 0))
            return refuse(QStringLiteral("the range's weights and state are %1 bytes; its "
                                         "weights alone are %2")
                              .arg(range.size())
                              .arg(want));
        // Local-SGD's owners take the workers' parameter deltas with the outer optimizer.
        auto owner =
            ownerOfBlob(layout, mine->begin, mine->end, range, setup.optimizerSteps,
                        setup.outerStep ? outerStepOptimizer(setup.outerMomentum) : m_optimizer);
        if (!owner)
            return refuse(owner.error().message);
        m_owner = std::move(*owner);
    } else if (!range.isEmpty() || own) {
        return refuse(QStringLiteral("weights came for a range this machine does not own"));
    }
    // A member that only holds keeps no replica up to date: no owner sends it weights, and it is
    // done with a step once it has sent its own range's.
    QSet<QString> weightless;
    for (const wire::ShardSetup::Peer& p : setup.members)
        if (p.holdsOnly)
            weightless.insert(p.deviceId);
    m_node = new ShardNode(me, layout, std::move(ranges), m_wire, m_owner.get(),
                           weightless.contains(me) ? nullptr : m_replica, this);
    m_node->setWeightless(weightless);
    // Streaming: each step exchanges one fragment, which lands beside the replica.
    if (setup.fragments > 1)
        m_node->setWindows(fragmentWindows(layout, setup.fragments));
    // Before any link: the one that logs takes the owners' sums on theirs.
    m_node->setBackup(setup.backup ? setup.members.front().deviceId : QString());
    reportFromNode();
    m_node->open(setup.firstStep);
    m_node->setReplicaBusy(m_replicaBusy);
    // Every member links with every other: a worker sends each owner its range and takes each
    // owner's weights. The later one in the list dials.
    m_expectLinks = int(intro.members.size()) - 1;
    m_linkTimeoutMs = setup.linkTimeoutMs > 0 ? setup.linkTimeoutMs : kLinkTimeoutMs;
    m_listener.introduce(intro);
    m_intro = intro;
    m_since.start();
    for (int i = 0; i < myIndex; ++i)
        dial(intro.members[size_t(i)]);
    if (m_expectLinks == 0)
        Q_EMIT report({wire::ShardReport::Kind::Ready, 0, {}, {}});
    return success();
}

void ShardPart::probe(const wire::ShardSetup& setup) {
    // What an earlier probe still dials goes, and says nothing more: a coordinator that probes
    // again wants this one's answer, and the dials of probes asked over and over must not pile up.
    for (const QPointer<ShardDial>& d : std::exchange(m_probeDials, {}))
        delete d.data();
    const QString me = m_identity.deviceId();
    ShardIntroduction intro;
    intro.runId = setup.runId;
    for (const wire::ShardSetup::Peer& p : setup.members)
        if (p.deviceId != me && p.port != 0)
            intro.members.push_back({p.deviceId, p.host, p.port});
    // The answers so far: how many are out, and the first member that did not answer.
    struct Answers {
        size_t waiting = 0;
        QString unreached, why;
    };
    auto answers = std::make_shared<Answers>();
    answers->waiting = intro.members.size();
    const auto answered = [this, answers](const QString& deviceId, const QString& why) {
        if (!why.isEmpty() && answers->unreached.isEmpty()) {
            answers->unreached = deviceId;
            answers->why = why;
        }
        if (--answers->waiting == 0)
            Q_EMIT report({wire::ShardReport::Kind::Probed, 0, answers->unreached, answers->why});
    };
    if (intro.members.empty())
        return Q_EMIT report({wire::ShardReport::Kind::Probed, 0, {}, {}});
    for (const ShardMember& to : intro.members) {
        auto* attempt = new ShardDial(m_identity, intro, to, this);
        m_probeDials.emplace_back(attempt);
        attempt->setProbe(true);
        attempt->setTimeout(kProbeMs);
        connect(attempt, &ShardDial::reached, this, [attempt, answered, id = to.deviceId] {
            attempt->deleteLater();
            answered(id, {});
        });
        connect(attempt, &ShardDial::failed, this,
                [attempt, answered, id = to.deviceId](const QString& why) {
                    attempt->deleteLater();
                    answered(id, why);
                });
    }
}

void ShardPart::reportFromNode() {
    connect(m_node, &ShardNode::summed, this, &ShardPart::summed);
    connect(m_node, &ShardNode::held, this, [this](qint64 step, const QString& worker) {
        Q_EMIT report({wire::ShardReport::Kind::Held, step, worker, {}});
    });
    connect(m_node, &ShardNode::refused, this,
            [this](qint64 step, const QString& worker, const QString& why) {
                Q_EMIT report({wire::ShardReport::Kind::Refused, step, worker, why});
            });
    connect(m_node, &ShardNode::updated, this, [this](qint64 step) {
        const auto [sent, received] = m_node->linkBytes();
        Q_EMIT report(
            {wire::ShardReport::Kind::Updated, step, {}, {}, quint64(sent), quint64(received)});
    });
    connect(m_node, &ShardNode::linkLost, this, &ShardPart::memberLost);
}

void ShardPart::reset() {
    ++m_generation;
    if (m_node) {
        m_node->disconnect(this);
        m_node->closeLinks(QStringLiteral("the sharded run is set up again"));
        delete m_node;
        m_node = nullptr;
    }
    m_owner.reset();
    m_links = 0;
    m_expectLinks = 0;
}

void ShardPart::dial(const ShardMember& to) {
    auto* attempt = new ShardDial(m_identity, m_intro, to, this);
    const int generation = m_generation;
    connect(attempt, &ShardDial::linked, this,
            [this, attempt, generation, id = to.deviceId](Connection* link) {
                attempt->deleteLater();
                if (generation != m_generation) { // a link of a setup that is over
                    link->close(QStringLiteral("the sharded run is set up again"));
                    link->deleteWhenFlushed();
                    return;
                }
                linkUp(link, id);
            });
    connect(attempt, &ShardDial::failed, this, [this, attempt, generation, to](const QString& why) {
        attempt->deleteLater();
        if (generation != m_generation)
            return;
        // The coordinator sets the members up one by one: the one dialled may not have heard of
        // this run yet, and refuses until it has.
        if (m_since.elapsed() < kLinkPatienceMs) {
            QTimer::singleShot(kRedialMs, this, [this, generation, to] {
                if (generation == m_generation)
                    dial(to);
            });
            return;
        }
        Q_EMIT unreachable(QStringLiteral("no link to device %1 within %2 s: %3")
                               .arg(to.deviceId)
                               .arg(kLinkPatienceMs / 1000)
                               .arg(why));
    });
}

void ShardPart::linkUp(Connection* link, const QString& deviceId) {
    if (!m_node) { // a link before the setup: the listener was introduced to nobody
        link->close(QStringLiteral("this machine is not set up for a sharded run"));
        link->deleteWhenFlushed();
        return;
    }
    if (auto st = m_node->addLink(link, deviceId); !st)
        return Q_EMIT failed(st.error().message);
    // A link that goes silent (a cut cable, a Wi-Fi drop: the connection stays open) is lost as
    // a closed one is, and the coordinator sets the run up again without one of its ends. The
    // link pings the other end, so a member that is busy but alive is always heard.
    link->setIdleTimeout(m_linkTimeoutMs);
    if (++m_links == m_expectLinks)
        Q_EMIT report({wire::ShardReport::Kind::Ready, 0, {}, {}});
}

qint64 ShardPart::gradientsReady(int64_t step, const QByteArray& bundle, qint64 ready) {
    return m_node ? m_node->gradientsReady(step, bundle, ready) : 0;
}

std::optional<ShardNode::Landed> ShardPart::takeLanded(int fragment) {
    return m_node ? m_node->takeLanded(fragment) : std::nullopt;
}

void ShardPart::setReplicaBusy(bool busy) {
    m_replicaBusy = busy;
    if (m_node)
        m_node->setReplicaBusy(busy);
}

void ShardPart::roundReplica() {
    if (m_replica && !m_replicaBusy)
        roundToWire(*m_replica, m_wire);
}

Status ShardPart::close(const wire::ShardClose& close) {
    if (!m_node)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("a step closed before the sharded run was set up"));
    std::vector<std::pair<QString, double>> counted(close.counted.begin(), close.counted.end());
    return m_node->close(close.step, counted, close.lr);
}

} // namespace tandem
