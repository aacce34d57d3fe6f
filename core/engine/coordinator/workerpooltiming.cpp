#include "engine/coordinator/workerpool.h"

#include <algorithm>

// The pool's second judge, in sync: a remote worker is timed by the run's own steps, with it
// against without it (WorkerPool::kJudgeSteps).

namespace tandem {

void WorkerPool::stepTook(const std::vector<int64_t>& took, int64_t n, double ms, int64_t step,
                          size_t last) {
    TimedStep t;
    t.with.assign(m_members.size(), 0);
    for (size_t i = 0; i < took.size() && i < t.with.size(); ++i)
        t.with[i] = took[i] > 0 ? 1 : 0;
    t.n = n;
    t.step = step;
    t.ms = ms;
    // A step with an entry slice or a re-measurement's, or one that lost a worker, says
    // nothing of how long the run's steps take with these workers.
    const bool clean = !m_stepUnclean;
    m_stepUnclean = false;
    if (!clean || !(ms > 0))
        return;
    if (last < took.size() && took[last] > 0) {
        std::vector<QString> names;
        for (size_t i = 0; i < took.size() && i < m_members.size(); ++i)
            if (took[i] > 0)
                names.push_back(m_members[i].stats.name);
        m_balancer.lastToFinish(names, m_members[last].stats.name, ms);
    }
    m_steps.push_back(t);
    constexpr size_t kKept = 512;
    if (m_steps.size() > kKept)
        m_steps.pop_front();
    for (size_t i = 0; i < m_members.size(); ++i) {
        const PoolMember& m = m_members[i];
        if (m.remote && m.alive() && m.slot == WorkerSlot::Active && !m.entering && t.with[i])
            judgeByOutcome(i, t, step);
    }
}

double WorkerPool::meanStepMs(const std::vector<char>& with, int64_t n, int64_t since) const {
    const auto same = [&](const std::vector<char>& a) {
        for (size_t i = 0; i < std::max(a.size(), with.size()); ++i)
            if ((i < a.size() && a[i]) != (i < with.size() && with[i]))
                return false;
        return true;
    };
    std::vector<double> ms;
    for (auto it = m_steps.rbegin();
         it != m_steps.rend() && it->step >= since && int(ms.size()) < kJudgeSteps; ++it)
        if (it->n == n && same(it->with))
            ms.push_back(it->ms);
    if (int(ms.size()) < kJudgeSteps)
        return 0;
    // The mean, since the run's speed is the steps' mean: a worker that makes some steps end
    // late costs all of that lateness. Only the longest is set aside, as a stall of the
    // machine rather than of the worker.
    std::sort(ms.begin(), ms.end());
    double sum = 0;
    for (size_t k = 0; k + 1 < ms.size(); ++k)
        sum += ms[k];
    return sum / double(ms.size() - 1);
}

void WorkerPool::judgeByOutcome(size_t i, const TimedStep& last, int64_t step) {
    PoolMember& m = m_members[i];
    std::vector<char> without = last.with;
    without[i] = 0;
    if (std::find(without.begin(), without.end(), 1) == without.end())
        return; // it computes alone: there is nothing to compare it with
    // Its steps since it was last judged, against steps without it taken since then (a trial's,
    // or those while it was left out): one verdict for each such comparison.
    const double withMs = meanStepMs(last.with, last.n, m.judgedAt + 1);
    if (withMs <= 0)
        return;
    const double withoutMs =
        meanStepMs(without, last.n, std::max(m.judgedAt + 1, step - kBaselineSteps));
    if (withoutMs <= 0) {
        // None. Where its steps are clearly shorter than the balancer foresees for the others'
        // compute alone, which every step without it would take at the least, it helps.
        std::vector<QString> others;
        std::vector<int64_t> caps;
        for (size_t k = 0; k < without.size(); ++k)
            if (without[k]) {
                others.push_back(m_members[k].stats.name);
                caps.push_back(m_members[k].cap(m_passes));
            }
        const double least = m_balancer.predictedStepMs(last.n, others, caps);
        if (least > 0 && withMs < (1 - kJudgeMargin) * least) {
            m.judgedAt = step;
            m.outcomeStrikes = 0;
            return;
        }
        // Otherwise the next steps go without it, one worker's trial at a time, and none
        // sooner than kBaselineSteps after its last.
        if (m.lastTrial >= 0 && step - m.lastTrial < kBaselineSteps)
            return;
        for (const PoolMember& k : m_members)
            if (k.trialUntil > step)
                return;
        m.lastTrial = step;
        m.trialUntil = step + 1 + kJudgeSteps;
        m_obs.onMessage(QStringLiteral("timing %1 steps without %2, to see whether it makes "
                                       "the run's steps shorter")
                            .arg(kJudgeSteps)
                            .arg(m.stats.name));
        return;
    }
    m.judgedAt = step;
    // Left out only where its steps are clearly longer: the two means differ by a few percent
    // from one window to the next on a busy machine.
    if (withMs <= (1 + kJudgeMargin) * withoutMs) {
        m.outcomeStrikes = 0;
        return;
    }
    m.outByOutcome = true;
    m.slot = WorkerSlot::LeftOut;
    m.leftOutSince = step;
    m.probeEvery = std::min(kProbeEvery << std::min<int64_t>(m.outcomeStrikes, 8), kProbeEveryMost);
    ++m.outcomeStrikes;
    RunEvent e = leftOutEventFor(m, step);
    e.withMs = withMs;
    e.stepMs = withoutMs;
    e.reason = QStringLiteral("it slowed the run: steps took %1 ms with it against %2 ms without "
                              "it (means of %3 steps each)")
                   .arg(withMs, 0, 'f', 0)
                   .arg(withoutMs, 0, 'f', 0)
                   .arg(kJudgeSteps);
    sayLeftOut(m, e);
}

void WorkerPool::outcomeSlots(const std::vector<size_t>& live, int64_t step) {
    for (size_t i : live) {
        PoolMember& m = m_members[i];
        if (!m.outByOutcome || m.slot != WorkerSlot::LeftOut ||
            step - m.leftOutSince < m.probeEvery)
            continue;
        // Its load or link may have changed: it takes part again, and the steps it takes part
        // in from now on are judged against the latest without it.
        m.outByOutcome = false;
        m.slot = WorkerSlot::Active;
        m_obs.onMessage(
            QStringLiteral("%1 takes part again, to be timed against the steps without it")
                .arg(m.stats.name));
        emitEvent(RunEvent::Kind::WorkerBack, m, QString(), step);
    }
}

} // namespace tandem
