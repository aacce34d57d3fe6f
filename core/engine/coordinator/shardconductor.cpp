#include "engine/coordinator/shardconductor.h"

#include "engine/coordinator/hub.h"
#include "engine/coordinator/hubsession.h"
#include "engine/shard/shardplan.h"
#include "engine/step/memoryplan.h"
#include "engine/wire/wiretensors.h"

#include <chrono>

namespace tandem {

namespace {

// A setup that sends the workers this much in all says so as it waits for them.
constexpr qint64 kSayBytes = qint64(256) << 20;

// The ranges a plan's `ends` give this machine (`self`) and `workers`, in the setup's order.
std::vector<ShardRange> rangesOf(const std::vector<int64_t>& ends, const QString& self,
                                 const std::vector<QString>& workers) {
    std::vector<ShardRange> out;
    for (size_t i = 0; i < ends.size(); ++i)
        out.push_back({i == 0 ? 0 : ends[i - 1], ends[i], i == 0 ? self : workers[i - 1]});
    return out;
}

// The workers' ranges travel on their links once the setup is sent: what a setup of gigabytes
// waits for, said to `say`.
void saySending(const std::vector<ShardRange>& ranges,
                const std::vector<std::shared_ptr<SpilledBytes>>& blobs,
                const QHash<QString, QString>& names,
                const std::function<void(const QString&)>& say) {
    QStringList sending;
    qint64 sent = 0;
    for (size_t r = 1; r < ranges.size() && r < blobs.size(); ++r)
        if (const auto& blob = blobs[r]) {
            sending << QStringLiteral("%1 %2").arg(names.value(ranges[r].owner, ranges[r].owner),
                                                   bytesText(blob->size()));
            sent += blob->size();
        }
    if (sent >= kSayBytes)
        say(QStringLiteral("the sharded run's machines are taking their ranges (%1); its steps "
                           "begin once every machine has its range and its links")
                .arg(sending.join(QStringLiteral(", "))));
}

// What a member's count grew by between two reports; a count that went back (a member that
// misreports) grew by nothing.
double grew(quint64 from, quint64 to) {
    return to > from ? double(to - from) : 0.0;
}

} // namespace

Status ShardConductor::start(CoordinatorHub* hub, const std::vector<QString>& workers,
                             const std::vector<int64_t>& ends, std::vector<at::Tensor>* replica,
                             DType wire, OptimizerConfig optimizer, int64_t firstStep,
                             int64_t steps, const StateParts& state, int timeoutMs) {
    m_hub = hub;
    m_replica = replica;
    m_wire = wire;
    m_optimizer = optimizer;
    ++m_setups;
    const ShardLayout layout = ShardLayout::of(*replica);
    const int64_t members = int64_t(workers.size()) + 1;
    if (auto st = checkShardEnds(ends, members, layout.values, optimizer.kind); !st)
        return st;
    // The blobs the owners take and the ranges' logs are made here: for a model of gigabytes
    // they take seconds, which the network thread spends answering the links.
    const std::vector<ShardRange> ranges = rangesOf(ends, hub->identity().deviceId(), workers);
    std::vector<std::unique_ptr<ShardLog>> logs;
    Status logged = success();
    auto starts = rangeStarts(ranges, firstStep, steps, state, &logs, &logged);
    if (!starts)
        return starts.error();
    Status result = success();
    hub->runOnNetwork([&] {
        m_self = hub->identity().deviceId();
        forgetSetup();
        wire::ShardSetup setup = newSetup(firstStep, steps);
        // A link between two members is lost as a silent worker is.
        setup.linkTimeoutMs = hub->config().workerTimeoutMs;
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_lastClosed = firstStep - 1;
        }
        m_machine = new ShardPart(hub->identity(), replica, wire, optimizer, hub);
        QObject::connect(m_machine, &ShardPart::report, m_machine, [this](wire::ShardReport r) {
            // This machine's links to the coordinator are its links to the workers.
            if (r.kind == wire::ShardReport::Kind::Updated)
                for (size_t m = 1; m < m_members.size(); ++m)
                    if (HubSession* s = m_hub->workingSession(m_members[m])) {
                        r.sent += quint64(s->connection()->bytesHandedOver());
                        r.received += quint64(s->connection()->bytesReceived());
                    }
            onReport(m_self, r);
        });
        for (auto failed : {&ShardPart::failed, &ShardPart::unreachable})
            QObject::connect(m_machine, failed, m_machine,
                             [this](const QString& why) { onLost(m_self, why); });
        QObject::connect(m_machine, &ShardPart::memberLost, m_machine,
                         [this](const QString& id, const QString& why) { onLost(id, why); });
        QObject::connect(
            m_machine, &ShardPart::summed, m_machine,
            [this](size_t range, const ShardLog::Span& span) { onSummed(range, span); });
        auto port = m_machine->listen(hub->address());
        if (!port) {
            result = port.error();
            return;
        }
        // A worker reaches this machine where it reaches the hub: an empty host says so.
        setup.members << wire::ShardSetup::Peer{m_self, QString(), *port};
        std::vector<HubSession*> sessions;
        for (const QString& w : workers) {
            HubSession* s = hub->workingSession(w);
            if (!s || s->shardPort() == 0) {
                markLost(w);
                result = makeError(ErrorCode::Runtime,
                                   QStringLiteral("worker (device %1) left before the sharded "
                                                  "run was set up")
                                       .arg(w));
                return;
            }
            sessions.push_back(s);
            setup.members << wire::ShardSetup::Peer{w, s->connection()->peerHost(), s->shardPort(),
                                                    m_holders.contains(w)};
        }
        // The members are this machine, then the workers, in the order `ranges` names them.
        m_ranges = ranges;
        m_members.clear();
        for (const ShardRange& r : m_ranges) {
            m_members.push_back(r.owner);
            setup.ranges << wire::ShardSetup::Span{r.begin, r.end, r.owner};
        }
        if (setup.backup) {
            m_logs = std::move(logs);
            m_logBytes = 0;
            noteLog(logged);
        }
        m_peers = setup.members;
        if (auto st = m_machine->setup(setup, QByteArray(), std::move(starts->self)); !st) {
            result = st.error();
            return;
        }
        for (size_t w = 0; w < sessions.size(); ++w)
            sessions[w]->sendShardSetup(setup, starts->blobs[w + 1]);
    });
    if (!result)
        return result;
    if (m_progress)
        saySending(ranges, starts->blobs, m_names, m_progress);
    std::unique_lock<std::mutex> lock(m_mutex);
    return await(
        lock, [&] { return m_ready.size() == qsizetype(m_members.size()); }, timeoutMs,
        QStringLiteral("the links between the run's machines"));
}

void ShardConductor::sendProbe(const std::vector<QString>& workers) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_probing = QSet<QString>(workers.begin(), workers.end());
        m_probed.clear();
    }
    m_hub->runOnNetwork([&] {
        wire::ShardSetup setup;
        setup.probe = true;
        setup.runId = m_hub->config().runId;
        setup.members = m_peers;
        for (const QString& w : workers) {
            if (HubSession* s = m_hub->workingSession(w)) {
                s->sendShardSetup(setup, nullptr);
                continue;
            }
            std::lock_guard<std::mutex> lock(m_mutex);
            m_probed.insert(w, QStringLiteral("it left before it was taken in"));
        }
    });
}

QHash<QString, QString> ShardConductor::probeAnswers(int waitMs) {
    std::unique_lock<std::mutex> lock(m_mutex);
    if (waitMs > 0)
        m_cv.wait_for(lock, std::chrono::milliseconds(waitMs),
                      [&] { return m_probed.size() >= m_probing.size(); });
    return m_probed;
}

void ShardConductor::endProbe() {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_probing.clear();
    m_probed.clear();
}

wire::ShardSetup ShardConductor::newSetup(int64_t firstStep, int64_t steps) const {
    wire::ShardSetup setup;
    setup.backup = !m_backupDir.isEmpty();
    setup.runId = m_hub->config().runId;
    setup.token = ShardIntroduction::newToken();
    setup.firstStep = firstStep;
    setup.optimizerSteps = steps;
    setup.outerStep = m_outerStep;
    setup.outerMomentum = m_outerStep ? m_optimizer.momentum : 0;
    setup.fragments = m_fragments;
    return setup;
}

void ShardConductor::forgetSetup() {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_ready.clear();
        m_updated.clear();
        m_states.clear();
        m_failure.clear();
        m_lost.clear();
        m_counts.clear();
        m_fullStep.clear();
        m_logFailure.clear();
    }
    delete m_machine;
    m_machine = nullptr;
    m_logs.clear();
    m_logBytes = 0;
}

template <typename Done>
Status ShardConductor::await(std::unique_lock<std::mutex>& lock, Done done, int timeoutMs,
                             const QString& what) {
    const bool ok = m_cv.wait_for(lock, std::chrono::milliseconds(timeoutMs),
                                  [&] { return !m_failure.isEmpty() || done(); });
    if (!m_failure.isEmpty())
        return makeError(ErrorCode::Runtime, m_failure);
    if (!ok)
        return makeError(
            ErrorCode::Runtime,
            QStringLiteral("the sharded run waited %1 s for %2").arg(timeoutMs / 1000).arg(what));
    return success();
}

void ShardConductor::ownGradients(int64_t step, const QByteArray& bundle, qint64 ready) {
    QMetaObject::invokeMethod(
        m_hub,
        [this, step, bundle, ready] {
            if (m_machine)
                m_machine->gradientsReady(step, bundle, ready);
        },
        Qt::QueuedConnection);
}

void ShardConductor::close(int64_t step, double lr,
                           const std::vector<std::pair<QString, double>>& counted) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_lastClosed = step;
        m_fullStep[step] = counted.size() == m_computing;
        while (!m_fullStep.empty() && m_fullStep.begin()->first < step - 2)
            m_fullStep.erase(m_fullStep.begin());
    }
    wire::ShardClose c;
    c.step = step;
    c.lr = lr;
    for (const auto& w : counted)
        c.counted << w;
    QMetaObject::invokeMethod(
        m_hub,
        [this, c] {
            for (size_t m = 1; m < m_members.size(); ++m)
                if (HubSession* s = m_hub->workingSession(m_members[m]))
                    s->sendShard(c);
            if (!m_machine)
                return;
            if (auto st = m_machine->close(c); !st)
                onLost(m_self, st.error().message);
        },
        Qt::QueuedConnection);
}

Expected<std::vector<at::Tensor>> ShardConductor::takeLanded(int fragment, int64_t step) {
    std::optional<ShardNode::Landed> landed;
    QMetaObject::invokeMethod(
        m_hub,
        [this, fragment, &landed] {
            if (m_machine)
                landed = m_machine->takeLanded(fragment);
        },
        Qt::BlockingQueuedConnection);
    if (!landed || landed->step != step)
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("fragment %1's values of step %2 did not land on this "
                                        "machine (%3)")
                             .arg(fragment + 1)
                             .arg(step + 1)
                             .arg(landed ? QStringLiteral("step %1's did").arg(landed->step + 1)
                                         : QStringLiteral("none did")));
    return std::move(landed->values);
}

Status ShardConductor::waitUpdated(int64_t step, int timeoutMs) {
    std::unique_lock<std::mutex> lock(m_mutex);
    auto st = await(
        lock, [&] { return m_updated[step].size() == qsizetype(m_members.size()); }, timeoutMs,
        QStringLiteral("every machine to hold step %1's weights").arg(step + 1));
    for (auto it = m_updated.begin(); it != m_updated.end();)
        it = it->first <= step ? m_updated.erase(it) : std::next(it);
    return st;
}

Expected<std::pair<int64_t, RangeState>> ShardConductor::fetchState(size_t range, int timeoutMs) {
    const QString owner = m_ranges[range].owner;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_states.erase(owner);
    }
    QMetaObject::invokeMethod(
        m_hub,
        [this, owner] {
            if (owner != m_self) {
                if (HubSession* s = m_hub->workingSession(owner))
                    s->sendShard(wire::ShardSave{});
            } else if (const ShardOwner* own = m_machine ? m_machine->owner() : nullptr) {
                // Its tensors where they lie: nothing steps them before the state is taken in.
                onState(m_self, own->stepCount(), RangeState::ofOwner(own->rangeState()));
            }
        },
        Qt::QueuedConnection);
    std::unique_lock<std::mutex> lock(m_mutex);
    if (auto st = await(
            lock, [&] { return m_states.count(owner) > 0; }, timeoutMs,
            QStringLiteral("range %1's state").arg(range + 1));
        !st)
        return st.error();
    std::pair<int64_t, RangeState> state = std::move(m_states[owner]);
    m_states.erase(owner);
    return state;
}

Expected<int64_t> ShardConductor::collectState(const RangeSink& sink, int timeoutMs, bool rebase) {
    int64_t next = 0;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        next = m_lastClosed + 1;
    }
    // A range at a time, its bytes gone before the next range's come: this machine never holds
    // every range's at once.
    int64_t steps = -1;
    for (size_t r = 0; r < m_ranges.size(); ++r) {
        auto state = fetchState(r, timeoutMs);
        if (!state)
            return state.error();
        if (steps >= 0 && state->first != steps)
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("the owners of the run's ranges have taken %1 and %2 "
                                            "steps")
                                 .arg(steps)
                                 .arg(state->first));
        steps = state->first;
        const ShardRange& range = m_ranges[r];
        if (auto st = sink(range, steps, state->second); !st)
            return makeError(
                st.error().code,
                QStringLiteral("device %1's range: %2").arg(range.owner, st.error().message));
        // The logs begin again from the state gathered: what they held is in it.
        if (rebase && !m_backupDir.isEmpty())
            swapLog(r, next, steps, state->second);
    }
    return std::max<int64_t>(steps, 0);
}

Expected<std::pair<int64_t, NamedTensors>> ShardConductor::gatherState(int timeoutMs,
                                                                       bool keepState) {
    GatheredState whole(ShardLayout::of(*m_replica), keepState);
    auto steps = collectState(
        [&](const ShardRange& r, int64_t steps, const RangeState& state) {
            return whole.add(r.begin, r.end, steps, state, m_replica);
        },
        timeoutMs, /*rebase=*/keepState);
    if (!steps)
        return steps.error();
    auto state = whole.take();
    if (!state)
        return state.error();
    return std::pair{*steps, std::move(*state)};
}

Expected<std::pair<int64_t, std::unique_ptr<SpilledState>>>
ShardConductor::spillState(const QString& dir, int timeoutMs) {
    auto spilled = std::make_unique<SpilledState>(ShardLayout::of(*m_replica), dir);
    auto steps = collectState(
        [&](const ShardRange& r, int64_t steps, const RangeState& state) {
            return spilled->add(r.begin, r.end, steps, state, m_replica);
        },
        timeoutMs);
    if (!steps)
        return steps.error();
    return std::pair{*steps, std::move(spilled)};
}

Status ShardConductor::rebaseLogs(int timeoutMs) {
    int64_t next = 0;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        next = m_lastClosed + 1;
    }
    // A range at a time: no more than one range's state here at once.
    for (size_t r = 0; r < m_ranges.size(); ++r) {
        auto state = fetchState(r, timeoutMs);
        if (!state)
            return state.error();
        swapLog(r, next, state->first, state->second);
    }
    return success();
}

void ShardConductor::roundReplica() {
    if (m_replica)
        roundToWire(*m_replica, m_wire);
}

std::vector<ShardConductor::Traffic> ShardConductor::traffic() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    std::vector<Traffic> out;
    for (const ShardRange& r : m_ranges) {
        Traffic t{r};
        const auto it = m_counts.find(r.owner);
        if (it != m_counts.end() && it->second.last.step > it->second.first.step) {
            const Count& first = it->second.first;
            const Count& last = it->second.last;
            t.steps = last.step - first.step;
            t.sentPerStep = grew(first.sent, last.sent) / double(t.steps);
            t.receivedPerStep = grew(first.received, last.received) / double(t.steps);
        }
        if (it != m_counts.end() && it->second.fullSteps > 0) {
            t.fullSteps = it->second.fullSteps;
            t.sentPerFullStep = it->second.fullSent / double(t.fullSteps);
            t.receivedPerFullStep = it->second.fullReceived / double(t.fullSteps);
        }
        out.push_back(t);
    }
    return out;
}

ShardConductor::Holding ShardConductor::holding(const QString& deviceId) const {
    std::lock_guard<std::mutex> lock(m_mutex);
    Holding h;
    for (size_t i = 0; i < m_ranges.size(); ++i) {
        if (m_ranges[i].owner != deviceId)
            continue;
        h.shard = int(i) + 1;
        h.shards = int(m_ranges.size());
        h.bytes = (m_ranges[i].end - m_ranges[i].begin) *
                  (shardBytesPerValue(m_optimizer.kind) +
                   shardArrivingBytesPerValue(m_computing, m_wire));
    }
    const auto it = m_counts.find(deviceId);
    if (it != m_counts.end() && it->second.previous.step >= 0) {
        const Count& a = it->second.previous;
        const Count& b = it->second.last;
        h.linkBytes =
            (grew(a.sent, b.sent) + grew(a.received, b.received)) / double(b.step - a.step);
    }
    return h;
}

bool ShardConductor::isMember(const QString& deviceId) const {
    return std::find(m_members.begin(), m_members.end(), deviceId) != m_members.end();
}

void ShardConductor::onState(const QString& member, int64_t steps, const RangeState& state) {
    if (!isMember(member))
        return;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_states[member] = {steps, state};
    }
    m_cv.notify_all();
}

void ShardConductor::onReport(const QString& member, const wire::ShardReport& r) {
    // A machine that would join says whether it reaches the members; no member is asked.
    if (r.kind == wire::ShardReport::Kind::Probed) {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            if (!m_probing.contains(member) || m_probed.contains(member))
                return;
            m_probed.insert(
                member,
                r.worker.isEmpty()
                    ? QString()
                    : QStringLiteral("no link to %1: %2")
                          .arg(r.worker == m_self
                                   ? QStringLiteral("this machine")
                                   : m_names.value(r.worker,
                                                   QStringLiteral("device %1").arg(r.worker)),
                               r.why));
        }
        m_cv.notify_all();
        return;
    }
    // Only the run's members report, of its members, and of the step under way or the next: what
    // else a peer says is not kept.
    const bool stepped =
        r.kind == wire::ShardReport::Kind::Held || r.kind == wire::ShardReport::Kind::Updated;
    if (!isMember(member) || (r.kind == wire::ShardReport::Kind::Held && !isMember(r.worker)))
        return;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (stepped && (r.step <= m_lastClosed - 1 || r.step > m_lastClosed + 2))
            return;
        // A member says what else it has to say of this setup after it is ready: what comes
        // before is of the setup before it (the run set up again), and is not kept.
        if (r.kind != wire::ShardReport::Kind::Ready && !m_ready.contains(member))
            return;
        // Of two members that lost the link between them, the one named first goes: what the
        // other says of it comes from a machine the run goes on without.
        if (r.kind == wire::ShardReport::Kind::Lost && m_lost.contains(member))
            return;
        switch (r.kind) {
        case wire::ShardReport::Kind::Ready:
            m_ready.insert(member);
            break;
        case wire::ShardReport::Kind::Held:
            break; // the owner steps by itself once it holds every counted range
        case wire::ShardReport::Kind::Probed:
            break; // answered above
        case wire::ShardReport::Kind::Refused:
            if (m_failure.isEmpty())
                m_failure = QStringLiteral("the owner of a range (device %1) refused worker %2's "
                                           "gradients for step %3: %4")
                                .arg(member, r.worker)
                                .arg(r.step + 1)
                                .arg(r.why);
            break;
        case wire::ShardReport::Kind::Lost:
            break; // below, without the lock
        case wire::ShardReport::Kind::Updated: {
            m_updated[r.step].insert(member);
            Counts& n = m_counts[member];
            if (n.first.step < 0)
                n.first = {r.step, r.sent, r.received};
            if (r.step > n.last.step) {
                n.previous = n.last;
                n.last = {r.step, r.sent, r.received};
                const auto full = m_fullStep.find(r.step);
                // A step's bytes are what two reports a step apart differ by: the first report
                // has no step before it, and its figures hold the run's setup.
                if (n.previous.step >= 0 && n.previous.step == r.step - 1 &&
                    full != m_fullStep.end() && full->second) {
                    ++n.fullSteps;
                    n.fullSent += grew(n.previous.sent, n.last.sent);
                    n.fullReceived += grew(n.previous.received, n.last.received);
                }
            }
            break;
        }
        }
    }
    // A member lost its link to another. The other goes, unless it is this machine, which hears
    // the member itself, or a member that has trained with the run and the reporter a newcomer:
    // then the member that cannot reach it goes.
    if (r.kind == wire::ShardReport::Kind::Lost && isMember(r.worker)) {
        if (r.worker == m_self)
            return onLost(member, QStringLiteral("its link to this machine ended: %1").arg(r.why));
        if (m_newcomers.contains(member) && !m_newcomers.contains(r.worker))
            return onLost(
                member, QStringLiteral("its link to %1 ended: %2")
                            .arg(m_names.value(r.worker, QStringLiteral("device %1").arg(r.worker)),
                                 r.why));
        return onLost(
            r.worker,
            QStringLiteral("%1's link to it ended: %2")
                .arg(m_names.value(member, QStringLiteral("device %1").arg(member)), r.why));
    }
    m_cv.notify_all();
}

void ShardConductor::markLost(const QString& deviceId) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_lost.contains(deviceId))
        m_lost << deviceId;
}

void ShardConductor::onLost(const QString& member, const QString& why) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (m_probing.contains(member) && !m_probed.contains(member))
            m_probed.insert(member, why.isEmpty() ? QStringLiteral("it left") : why);
        if (member != m_self && isMember(member) && !m_lost.contains(member))
            m_lost << member;
        if (m_failure.isEmpty() && isMember(member))
            m_failure =
                member == m_self
                    ? QStringLiteral("this machine's part of the sharded run failed: %1").arg(why)
                    : QStringLiteral("%1, a machine of the sharded run, was lost: %2")
                          .arg(m_names.value(member, QStringLiteral("device %1").arg(member)), why);
    }
    m_cv.notify_all();
}

} // namespace tandem
