#include "engine/coordinator/workerpool.h"

#include <QElapsedTimer>

#include <algorithm>
#include <iterator>

namespace tandem {

int64_t PoolMember::bytes() const {
    return remote ? remote->bytesSent() + remote->bytesReceived() : 0;
}

int64_t PoolMember::cap(int64_t passes) const {
    const int64_t asked = remote ? remote->maxBatch() : 0;
    const int64_t perPass =
        asked > 0 && memoryCap > 0 ? std::min(asked, memoryCap) : std::max(asked, memoryCap);
    return perPass * passes;
}

WorkerPool::WorkerPool(RunObserver& observer)
    : m_obs(observer) {
    m_clock.start();
}

std::function<void(HubEvent)> WorkerPool::hubSink() {
    return [this](HubEvent e) {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            const LinkFacts link{e.text, e.link.bytesPerSecond, e.link.rttMs, e.link.atLeast};
            if (e.kind == HubEvent::Kind::Probed || e.kind == HubEvent::Kind::Relinked)
                m_links[e.text] = link; // the latest of each worker's
            if (e.kind == HubEvent::Kind::Joined) {
                if (heldBack(*e.worker))
                    m_notes << QStringLiteral("%1 came back; it is taken in again in %2 s")
                                   .arg(e.worker->name())
                                   .arg(double(m_heldBack.value(e.worker->deviceId()).untilMs -
                                               m_clock.elapsed()) /
                                            1e3,
                                        0, 'f', 0);
                m_joined.push_back(std::move(e.worker));
            } else if (e.kind == HubEvent::Kind::Probed)
                m_probed << link;
            else if (e.kind == HubEvent::Kind::Declined)
                m_declined << std::make_pair(e.text, e.reason);
            else if (e.kind == HubEvent::Kind::Note)
                m_notes << e.text;
        }
        m_cv.notify_all();
    };
}

void WorkerPool::add(std::shared_ptr<WorkerLink> link, RemoteWorker* remote) {
    PoolMember m;
    m.remote = remote;
    m.stats.name = link->name();
    m.stats.device = link->device().name;
    m.link = std::move(link);
    m.link->setReadyCallback([this] {
        { std::lock_guard<std::mutex> lock(m_readyMutex); }
        m_readyCv.notify_all();
    });
    m_members.push_back(std::move(m));
}

Status WorkerPool::applyMemoryPlan(size_t i) {
    PoolMember& m = m_members[i];
    // A worker that only holds computes nothing: the shard plan sizes its range instead.
    if (!m_memoryPlan || m.holdsOnly())
        return success();
    auto cap = m_memoryPlan(m.link->device(), m.stats.name, m.remote == nullptr);
    if (!cap) {
        drop(i, cap.error(), QStringLiteral("the run goes on without it"), 0);
        return cap.error();
    }
    if (*cap > 0) {
        m.memoryCap = m.memoryCap > 0 ? std::min(m.memoryCap, *cap) : *cap;
        m_obs.onMessage(QStringLiteral("%1 (%2) holds at most %3 samples at once")
                            .arg(m.stats.name, m.link->device().name)
                            .arg(m.memoryCap));
    }
    return success();
}

int WorkerPool::waitForJoined(int count, int timeoutMs, const std::function<bool()>& cancelled,
                              bool probed) {
    QElapsedTimer t;
    t.start();
    std::unique_lock<std::mutex> lock(m_mutex);
    const auto have = [&] { return probed ? int(m_probed.size()) : int(m_joined.size()); };
    while (m_hasHub && have() < count && (timeoutMs < 0 || t.elapsed() < timeoutMs)) {
        if (cancelled && cancelled())
            break;
        m_cv.wait_for(lock, std::chrono::milliseconds(200));
    }
    return have();
}

QList<LinkFacts> WorkerPool::probedLinks() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_probed;
}

void WorkerPool::flushNotes() {
    QStringList notes;
    QList<std::pair<QString, QString>> declined;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        notes.swap(m_notes);
        declined.swap(m_declined);
    }
    for (const QString& n : notes)
        m_obs.onMessage(n);
    // On the training thread, as every event is.
    for (const auto& [node, why] : declined)
        m_obs.onEvent(RunEvent{RunEvent::Kind::InviteDeclined, node, why, 0});
}

void WorkerPool::note(const QString& text) {
    m_obs.onMessage(text);
}

void WorkerPool::admitJoined(bool evenHeld, const QSet<QString>* only) {
    flushNotes();
    std::vector<std::shared_ptr<RemoteWorker>> joined;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        const auto held = std::stable_partition(
            m_joined.begin(), m_joined.end(), [&](const std::shared_ptr<RemoteWorker>& w) {
                return (evenHeld || !heldBack(*w)) && (!only || only->contains(w->deviceId()));
            });
        joined.assign(std::make_move_iterator(m_joined.begin()), std::make_move_iterator(held));
        m_joined.erase(m_joined.begin(), held);
    }
    for (auto& w : joined) {
        RemoteWorker* remote = w.get();
        add(std::move(w), remote);
        emitEvent(RunEvent::Kind::WorkerJoined, m_members.back(), QString(), 0);
        (void)applyMemoryPlan(m_members.size() - 1);
    }
}

bool WorkerPool::anyJoined() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return std::any_of(m_joined.begin(), m_joined.end(),
                       [&](const std::shared_ptr<RemoteWorker>& w) { return !heldBack(*w); });
}

std::vector<std::pair<QString, QString>> WorkerPool::joinedWorkers() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    std::vector<std::pair<QString, QString>> out;
    for (const std::shared_ptr<RemoteWorker>& w : m_joined)
        if (!heldBack(*w))
            out.emplace_back(w->deviceId(), w->name());
    return out;
}

bool WorkerPool::heldBack(const RemoteWorker& w) const {
    const auto it = m_heldBack.constFind(w.deviceId());
    return it != m_heldBack.constEnd() && it->untilMs > m_clock.elapsed();
}

qint64 WorkerPool::holdBack(const QString& deviceId, qint64 firstMs) {
    std::lock_guard<std::mutex> lock(m_mutex);
    HeldBack& h = m_heldBack[deviceId];
    const qint64 wait = firstMs << std::min(h.times, 5);
    h.untilMs = m_clock.elapsed() + wait;
    ++h.times;
    return wait;
}

std::vector<size_t> WorkerPool::alive(bool holding) const {
    std::vector<size_t> out;
    for (size_t i = 0; i < m_members.size(); ++i)
        if (m_members[i].alive() && m_members[i].holdsOnly() == holding)
            out.push_back(i);
    return out;
}

bool WorkerPool::anyAlive() const {
    return std::any_of(m_members.begin(), m_members.end(),
                       [](const PoolMember& m) { return m.alive() && !m.holdsOnly(); });
}

std::vector<int64_t> WorkerPool::shares(const std::vector<size_t>& live, int64_t n, int64_t passes,
                                        int64_t step, bool firstRound) {
    if (firstRound) {
        outcomeSlots(live, step);
        m_passes = passes;
    }
    // A worker on trial, or left out for what its steps cost, sits the step out; the others
    // share it as if it were not there.
    std::vector<size_t> taking;
    for (size_t i : live) {
        const PoolMember& m = m_members[i];
        if (m.trialUntil <= step && !(m.outByOutcome && m.slot == WorkerSlot::LeftOut))
            taking.push_back(i);
    }
    if (taking.size() == live.size() || taking.empty())
        return splitShares(live, n, passes, step, firstRound);
    const std::vector<int64_t> some = splitShares(taking, n, passes, step, firstRound);
    std::vector<int64_t> counts(live.size(), 0);
    for (size_t j = 0, k = 0; j < live.size() && k < taking.size(); ++j)
        if (live[j] == taking[k])
            counts[j] = some[k++];
    return counts;
}

std::vector<int64_t> WorkerPool::splitShares(const std::vector<size_t>& live, int64_t n,
                                             int64_t passes, int64_t step, bool firstRound) {
    std::vector<QString> names;
    std::vector<int64_t> caps;
    for (size_t i : live) {
        names.push_back(m_members[i].stats.name);
        caps.push_back(m_members[i].cap(passes));
    }
    if (!firstRound)
        return m_balancer.split(n, names, caps);
    const std::vector<int64_t> entry = entrySlices(live, n, passes);
    for (size_t j = 0; j < entry.size(); ++j)
        if (entry[j] >= 0 && leftOutByLink(live, j, n, passes, step))
            return splitShares(live, n, passes, step, firstRound); // judged: it enters no more
    std::vector<int64_t> counts;
    m_stepUnclean = m_stepUnclean || !entry.empty();
    if (entry.empty()) {
        counts = m_balancer.split(n, names, caps);
    } else {
        // The entry slices first; the workers already measured share the rest as always.
        std::vector<QString> known;
        std::vector<int64_t> knownCaps;
        int64_t rest = n;
        for (size_t j = 0; j < live.size(); ++j)
            if (entry[j] < 0) {
                known.push_back(names[j]);
                knownCaps.push_back(caps[j]);
            } else {
                rest -= entry[j];
            }
        const std::vector<int64_t> split = m_balancer.split(rest, known, knownCaps);
        size_t k = 0;
        for (size_t j = 0; j < live.size(); ++j)
            counts.push_back(entry[j] >= 0 ? entry[j] : split[k++]);
    }
    for (size_t j = 0; j < live.size(); ++j)
        m_members[live[j]].entering = !entry.empty() && entry[j] >= 0;
    updateSlots(live, counts, n, passes, step);
    return counts;
}

std::vector<int64_t> WorkerPool::roundShares(const std::vector<size_t>& live, int64_t n,
                                             int64_t passes, int64_t round) {
    std::vector<int64_t> counts = shares(live, n, passes, round, false); // the split alone
    updateSlots(live, counts, n, passes, round);
    return counts;
}

bool WorkerPool::leftOutByLink(const std::vector<size_t>& live, size_t j, int64_t n, int64_t passes,
                               int64_t step) {
    PoolMember& m = m_members[live[j]];
    if (m.entered > 0 || m_stepBytes <= 0)
        return false;
    const LinkFacts link = linkOf(m.stats.name);
    if (!(link.bytesPerSecond > 0) || link.atLeast)
        return false;
    const double stepMs = stepWithoutMs(live, j, n, passes);
    const double moveMs = linkMs(link);
    if (!linkTooSlow(moveMs, stepMs))
        return false;
    // What the balancer knows of it from now on: its link, and compute as fast as the fastest
    // (unknown yet, and no compute could make up for the link). Its re-measurement replaces it.
    double fastest = 0;
    for (size_t k = 0; k < live.size(); ++k)
        if (k != j)
            fastest = std::max(fastest, m_balancer.speed(m_members[live[k]].stats.name));
    const int64_t probe = std::max<int64_t>(1, n / 8);
    m_balancer.restart(m.stats.name, probe, 1e3 * double(probe) / fastest, moveMs);
    m.entered = int64_t(std::size(kEntry));
    m.outByLink = true;
    m.slot = WorkerSlot::LeftOut;
    m.leftOutSince = step;
    m.probeEvery = kProbeEvery;
    RunEvent e = leftOutEventFor(m, step);
    e.costMs = moveMs;
    e.stepMs = stepMs;
    e.reason = QStringLiteral("it would slow the run: moving the weights there and the gradients "
                              "back takes %1 ms a step over its link (%2 MB/s as measured when it "
                              "joined), against a %3 ms step without it")
                   .arg(moveMs, 0, 'f', 0)
                   .arg(link.bytesPerSecond / 1e6, 0, 'f', 1)
                   .arg(stepMs, 0, 'f', 0);
    sayLeftOut(m, e);
    return true;
}

void WorkerPool::sayLeftOut(PoolMember& m, const RunEvent& e) {
    m.leftOutWhy = e.reason;
    const QString again =
        m.outByLink      ? QStringLiteral("its link is measured again while it is idle")
        : m.outByOutcome ? QStringLiteral("it is timed again in %1 steps, less often while it "
                                          "still slows the run")
                               .arg(m.probeEvery)
                         : QStringLiteral("it is measured again in %1 steps, less often while it "
                                          "would still slow the run")
                               .arg(kProbeEvery);
    m_obs.onMessage(QStringLiteral("leaving %1 out: %2; %3, and it takes part when it would "
                                   "help (local-sgd, a larger batch or a faster link may let it)")
                        .arg(m.stats.name, e.reason, again));
    m_obs.onEvent(e);
}

std::vector<int64_t> WorkerPool::entrySlices(const std::vector<size_t>& live, int64_t n,
                                             int64_t passes) {
    constexpr auto steps = int64_t(std::size(kEntry));
    std::vector<int64_t> entry(live.size(), -1);
    int64_t given = 0;
    bool anyKnown = false, anyTimed = false;
    for (size_t j = 0; j < live.size(); ++j) {
        const PoolMember& m = m_members[live[j]];
        if (!m.remote || m.entered >= steps || m.leftOut()) {
            anyKnown = true;
            anyTimed = anyTimed || m_balancer.speed(m.stats.name) > 0;
        }
    }
    bool entering = false;
    for (size_t j = 0; j < live.size(); ++j) {
        const PoolMember& m = m_members[live[j]];
        if (!m.remote || m.entered >= steps || m.leftOut())
            continue;
        entering = true;
        // A worker whose link was probed waits for a step of the others to judge it against:
        // its first slice costs it the whole model each way, however small.
        if (m.entered == 0 && !anyTimed && hasProbedLink(m.stats.name)) {
            entry[j] = 0;
            continue;
        }
        int64_t slice = std::max<int64_t>(1, n / kEntry[m.entered]);
        if (const int64_t cap = m.cap(passes); cap > 0)
            slice = std::min(slice, cap);
        entry[j] = slice;
        given += slice;
    }
    if (!anyKnown || !entering || given >= n)
        return {};
    return entry;
}

double WorkerPool::stepWithoutMs(const std::vector<size_t>& live, size_t j, int64_t n,
                                 int64_t passes) const {
    std::vector<QString> others;
    std::vector<int64_t> caps;
    for (size_t k = 0; k < live.size(); ++k)
        if (k != j && m_balancer.speed(m_members[live[k]].stats.name) > 0) {
            others.push_back(m_members[live[k]].stats.name);
            caps.push_back(m_members[live[k]].cap(passes));
        }
    return others.empty() ? 0 : m_balancer.predictedStepMs(n, others, caps);
}

bool WorkerPool::hasProbedLink(const QString& worker) const {
    const LinkFacts l = linkOf(worker);
    return m_stepBytes > 0 && l.bytesPerSecond > 0 && !l.atLeast;
}

LinkFacts WorkerPool::linkOf(const QString& worker) const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_links.value(worker);
}

double WorkerPool::linkMs(const LinkFacts& link) const {
    return 2e3 * double(m_stepBytes) / link.bytesPerSecond + link.rttMs;
}

// A worker left out is measured again now and then with a small slice: links and loads
// change, and one noisy early step must not exclude a device for good. Leaving a worker out and
// taking it back are said in the log.
void WorkerPool::updateSlots(const std::vector<size_t>& live, std::vector<int64_t>& counts,
                             int64_t n, int64_t passes, int64_t step) {
    for (size_t j = 0; j < live.size(); ++j) {
        PoolMember& m = m_members[live[j]];
        if (m.outByLink && m.leftOut()) {
            // Judged by its link's latest measurement: once it would not be left out for it,
            // it enters again, on its entry slices, and they decide.
            const LinkFacts link = linkOf(m.stats.name);
            if (link.atLeast || !linkTooSlow(linkMs(link), stepWithoutMs(live, j, n, passes))) {
                m_balancer.forget(m.stats.name);
                m.outByLink = false;
                m.entered = 0;
                m.entering = true; // from the next step
                m.slot = WorkerSlot::Active;
                m_obs.onMessage(QStringLiteral("%1 takes part again: its link now moves %2 MB/s")
                                    .arg(m.stats.name)
                                    .arg(link.bytesPerSecond / 1e6, 0, 'f', 1));
                emitEvent(RunEvent::Kind::WorkerBack, m, QString(), step);
            }
            continue;
        }
        if (counts[j] > 0 || !m.leftOut() || step - m.leftOutSince < m.probeEvery)
            continue;
        const auto donor = size_t(std::max_element(counts.begin(), counts.end()) - counts.begin());
        const int64_t probe = std::min(counts[donor] - 1, std::max<int64_t>(1, n / 8));
        if (probe > 0) {
            counts[donor] -= probe;
            counts[j] = probe;
            m.slot = WorkerSlot::Probing;
            m.leftOutSince = step;
            m.probeAwaited = true;
            m_stepUnclean = true;
        }
    }
    for (size_t j = 0; j < live.size(); ++j) {
        PoolMember& m = m_members[live[j]];
        if (m.entering)
            continue; // on its entry, a slice or waiting for one
        const bool out = counts[j] == 0;
        if (out && !m.leftOut()) {
            m.slot = WorkerSlot::LeftOut;
            m.leftOutSince = step;
            m.probeEvery = kProbeEvery;
            sayLeftOut(m, leftOutEvent(live, j, n, passes, step));
        } else if (out && m.slot == WorkerSlot::Probing && !m.probeAwaited &&
                   step != m.leftOutSince) {
            // Its re-measurement found it would still slow the run: each costs a small slice
            // of one step, so they grow rarer while that lasts.
            m.slot = WorkerSlot::LeftOut;
            m.probeEvery = std::min(2 * m.probeEvery, kProbeEveryMost);
        } else if (!out && m.leftOut() && step != m.leftOutSince) {
            m.slot = WorkerSlot::Active;
            m_obs.onMessage(QStringLiteral("%1 takes part again").arg(m.stats.name));
            emitEvent(RunEvent::Kind::WorkerBack, m, QString(), step);
        }
    }
}

void WorkerPool::record(size_t i, const WorkResult& r, double rttMs, bool measure) {
    PoolMember& m = m_members[i];
    // What a worker's result says beyond its gradient: its log lines, and a lower memory cap.
    for (const QString& n : r.notes)
        m_obs.onMessage(QStringLiteral("%1: %2").arg(m.stats.name, n));
    if (r.memoryCap > 0 && (m.memoryCap == 0 || r.memoryCap < m.memoryCap)) {
        m.memoryCap = r.memoryCap;
        if (r.notes.isEmpty()) // a remote worker: its own log has the details
            m_obs.onMessage(QStringLiteral("%1 holds at most %2 samples at once (it ran out of "
                                           "memory, or its memory says so); it gets no more "
                                           "from now on")
                                .arg(m.stats.name)
                                .arg(m.memoryCap));
    }
    const double overheadMs = rttMs - r.computeMs;
    // An entering worker's first result is its warm-up, and its entry ends with a judgement.
    const bool entry = m.entering && measure;
    if (entry && ++m.entered == 1)
        measure = false;
    // A worker left out is judged afresh by its re-measurement: what was known of it is from
    // before, and its load or its link may have changed since.
    if (m.slot == WorkerSlot::Probing && r.samples > 0)
        m.probeAwaited = false;
    if (measure && m.slot == WorkerSlot::Probing)
        m_balancer.restart(m.stats.name, r.samples, r.computeMs, overheadMs);
    else if (measure)
        m_balancer.record(m.stats.name, r.samples, r.computeMs, overheadMs);
    if (entry && m.entered == int64_t(std::size(kEntry)))
        m_balancer.settle(m.stats.name);
    m.stats.computeS += r.computeMs / 1e3;
    m.stats.communicateS += std::max(0.0, overheadMs) / 1e3;
    m.stats.overlappedBytes += r.earlyBytes;
}

void WorkerPool::drop(size_t i, const Error& why, const QString& consequence, int64_t step) {
    PoolMember& m = m_members[i];
    const QString& reason = why.message;
    m_lastDrop = m.remote ? about(why, ErrorSubject::Peer) : why;
    m_stepUnclean = true;
    m.slot = WorkerSlot::Dropped;
    m.stats.status = WorkerSummary::Status::Dropped;
    m.stats.reason = reason;
    m_balancer.forget(m.stats.name);
    m_obs.onMessage(QStringLiteral("dropped %1: %2; %3").arg(m.stats.name, reason, consequence));
    emitEvent(RunEvent::Kind::WorkerDropped, m, reason, step, why.code == ErrorCode::Cancelled);
}

void WorkerPool::waitUntil(const std::function<bool()>& anyReady, int timeoutMs) {
    std::unique_lock<std::mutex> lock(m_readyMutex);
    m_readyCv.wait_for(lock, std::chrono::milliseconds(timeoutMs), anyReady);
}

QList<WorkerSummary> WorkerPool::summaries() const {
    QList<WorkerSummary> out;
    for (const PoolMember& m : m_members) {
        WorkerSummary w = m.stats;
        w.bytes = m.bytes();
        // A worker's own rate: samples over the time it computed.
        w.samplesPerS = w.computeS > 0 ? double(w.samples) / w.computeS : 0;
        w.leftOut = m.leftOut();
        if (m.alive() && m.leftOut()) {
            w.status = WorkerSummary::Status::LeftOut;
            w.reason = m.leftOutWhy;
        }
        out << w;
    }
    return out;
}

std::pair<int64_t, int64_t> WorkerPool::remoteBytes() const {
    int64_t bytes = 0, served = 0;
    for (const PoolMember& m : m_members)
        if (m.remote) {
            bytes += m.bytes();
            served += m.served;
        }
    return {bytes, served};
}

RunEvent WorkerPool::leftOutEvent(const std::vector<size_t>& live, size_t j, int64_t n,
                                  int64_t passes, int64_t step) const {
    const PoolMember& m = m_members[live[j]];
    std::vector<QString> others;
    std::vector<int64_t> caps;
    for (size_t k = 0; k < live.size(); ++k)
        if (k != j) {
            others.push_back(m_members[live[k]].stats.name);
            caps.push_back(m_members[live[k]].cap(passes));
        }
    RunEvent e = leftOutEventFor(m, step);
    std::vector<QString> all = others;
    all.push_back(m.stats.name);
    const double link = m_balancer.overheadMs(m.stats.name);
    const double fixed = m_balancer.fixedMs(m.stats.name);
    const double late = m_balancer.lateMarginMs(m.stats.name, all);
    const double speed = m_balancer.speed(m.stats.name);
    e.costMs = link + fixed + late;
    e.stepMs = m_balancer.predictedStepMs(n, others, caps);
    const QString lateText =
        late >= 0.5 ? QStringLiteral(", %1 ms its steps often run over").arg(late, 0, 'f', 0)
                    : QString();
    e.reason = QStringLiteral("it would slow the run: a step costs it %1 ms before its first "
                              "sample (%2 ms moving the weights, %3 ms of its own compute%4) and "
                              "%5 ms a sample, against a %6 ms step without it")
                   .arg(e.costMs, 0, 'f', 0)
                   .arg(link, 0, 'f', 0)
                   .arg(fixed, 0, 'f', 0)
                   .arg(lateText)
                   .arg(speed > 0 ? 1000.0 / speed : 0.0, 0, 'g', 2)
                   .arg(e.stepMs, 0, 'f', 0);
    return e;
}

RunEvent WorkerPool::leftOutEventFor(const PoolMember& m, int64_t step) {
    RunEvent e;
    e.kind = RunEvent::Kind::WorkerLeftOut;
    e.worker = m.stats.name;
    e.step = step;
    return e;
}

void WorkerPool::emitEvent(RunEvent::Kind kind, const PoolMember& m, const QString& reason,
                           int64_t step, bool leaving) {
    RunEvent e;
    e.kind = kind;
    e.worker = m.stats.name;
    e.reason = reason;
    e.step = step;
    e.leaving = leaving;
    m_obs.onEvent(e);
}

} // namespace tandem
