#include "engine/coordinator/balancer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tandem {

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n == 0 ? 0.0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void push(std::vector<double>& window, double value) {
    window.push_back(value);
    if (int(window.size()) > ThroughputBalancer::kWindow)
        window.erase(window.begin());
}

} // namespace

void ThroughputBalancer::record(const QString& worker, int64_t samples, double computeMs,
                                double overheadMs) {
    if (samples <= 0 || !(computeMs > 0) || !std::isfinite(computeMs) || !std::isfinite(overheadMs))
        return;
    Stats& s = m_stats[worker];
    push(s.samples, double(samples));
    push(s.computeMs, computeMs);
    push(s.overheadMs, std::max(0.0, overheadMs));
    s.overhead = median(s.overheadMs);
    fit(s);
}

void ThroughputBalancer::restart(const QString& worker, int64_t samples, double computeMs,
                                 double overheadMs) {
    const Stats before = m_stats.value(worker);
    m_stats.remove(worker);
    for (int i = 0; i < kMinToJudge; ++i)
        record(worker, samples, computeMs, overheadMs);
    const auto it = m_stats.find(worker);
    if (it == m_stats.end() || !before.fitted || !(before.fixedMs > 0) || samples <= 0)
        return;
    const double fixedPart =
        before.fixedMs / (before.fixedMs + before.perSampleMs * double(samples));
    it->fixedMs = computeMs * fixedPart;
    it->perSampleMs = std::max((computeMs - it->fixedMs) / double(samples), kLeastPerSampleMs);
    it->fitted = true; // holds while its steps are all of one size (fit())
}

void ThroughputBalancer::settle(const QString& worker) {
    const auto it = m_stats.find(worker);
    if (it == m_stats.end() || it->samples.empty())
        return;
    Stats& s = *it;
    const size_t had = s.samples.size();
    for (size_t i = 0; int(s.samples.size()) < kMinToJudge; ++i) {
        s.samples.push_back(s.samples[i % had]);
        s.computeMs.push_back(s.computeMs[i % had]);
        s.overheadMs.push_back(s.overheadMs[i % had]);
    }
    s.overhead = median(s.overheadMs);
    fit(s);
}

void ThroughputBalancer::lastToFinish(const std::vector<QString>& workers, const QString& last,
                                      double stepMs) {
    if (workers.size() < 2 || !(stepMs > 0) || !std::isfinite(stepMs))
        return;
    double total = 0;
    for (const QString& w : workers) {
        const auto it = m_stats.constFind(w);
        // As its overhead, a worker's margin counts once it has been measured kMinToJudge times.
        if (it == m_stats.constEnd() || !(it->perSampleMs > 0) ||
            int(it->samples.size()) < kMinToJudge)
            return;
        total += 1000.0 / it->perSampleMs;
    }
    for (const QString& w : workers) {
        Stats& s = m_stats[w];
        const double part = 1000.0 / s.perSampleMs / total;
        const double hit = w == last ? 1.0 : 0.0;
        s.lastMs += kLastGain * stepMs * (hit - part);
        // Never so low that the margin would need to go below zero, nor more than a step.
        s.lastMs = std::clamp(s.lastMs, -overrunMs(s, 1.0 - part), stepMs);
    }
}

void ThroughputBalancer::fit(Stats& s) {
    const size_t n = s.samples.size();
    std::vector<double> slopes;
    for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j) {
            const double lo = std::min(s.samples[i], s.samples[j]);
            const double hi = std::max(s.samples[i], s.samples[j]);
            if (hi >= lo * kSpread)
                slopes.push_back((s.computeMs[j] - s.computeMs[i]) / (s.samples[j] - s.samples[i]));
        }
    const double shortest = *std::min_element(s.computeMs.begin(), s.computeMs.end());
    if (!slopes.empty()) {
        const double slope = std::max(0.0, median(slopes));
        std::vector<double> fixed;
        for (size_t i = 0; i < n; ++i)
            fixed.push_back(s.computeMs[i] - slope * s.samples[i]);
        s.fixedMs = median(fixed);
        s.fitted = true;
    }
    // Never more than the shortest step measured, and some time per sample however small.
    s.fixedMs = std::clamp(s.fitted ? s.fixedMs : 0.0, 0.0, shortest);
    std::vector<double> per;
    for (size_t i = 0; i < n; ++i)
        per.push_back((s.computeMs[i] - s.fixedMs) / s.samples[i]);
    s.perSampleMs = std::max(median(per), kLeastPerSampleMs);
}

double ThroughputBalancer::overrunMs(const Stats& s, double q) {
    const size_t n = s.samples.size();
    if (int(n) < kMinToJudge)
        return 0;
    std::vector<double> over;
    for (size_t i = 0; i < n; ++i)
        over.push_back(s.computeMs[i] + s.overheadMs[i] -
                       (s.fixedMs + s.perSampleMs * s.samples[i] + s.overhead));
    std::sort(over.begin(), over.end());
    // Below the rank asked, and never the largest two: one or two stalls in a window.
    const auto rank = std::min(size_t(std::floor(std::clamp(q, 0.0, 1.0) * double(n - 1))),
                               n >= 4 ? n - 3 : n - 1);
    return std::max(0.0, over[rank]);
}

double ThroughputBalancer::lateMarginMs(const QString& worker,
                                        const std::vector<QString>& workers) const {
    const Rates r = rates(workers);
    for (size_t i = 0; i < workers.size(); ++i)
        if (workers[i] == worker)
            return r.margin[i] * 1e3;
    return 0;
}

double ThroughputBalancer::speed(const QString& worker) const {
    const auto it = m_stats.constFind(worker);
    return it == m_stats.constEnd() || !(it->perSampleMs > 0) ? 0 : 1000.0 / it->perSampleMs;
}

double ThroughputBalancer::overheadMs(const QString& worker) const {
    return m_stats.value(worker).overhead;
}

double ThroughputBalancer::fixedMs(const QString& worker) const {
    return m_stats.value(worker).fixedMs;
}

double ThroughputBalancer::predictedStepMs(int64_t batch, const std::vector<QString>& workers,
                                           const std::vector<int64_t>& maxBatch) const {
    const std::vector<int64_t> shares = split(batch, workers, maxBatch);
    const Rates r = rates(workers);
    double longest = 0;
    for (size_t i = 0; i < workers.size(); ++i)
        if (shares[i] > 0)
            longest = std::max(longest, (r.overhead[i] + double(shares[i]) / r.speed[i]) * 1e3);
    return longest;
}

ThroughputBalancer::Rates ThroughputBalancer::rates(const std::vector<QString>& workers) const {
    // Speeds and overheads in seconds; unmeasured workers take the measured average.
    const size_t n = workers.size();
    Rates r{std::vector<double>(n, 0), std::vector<double>(n, 0), std::vector<double>(n, 0)};
    double sum = 0;
    int measured = 0;
    for (size_t i = 0; i < n; ++i) {
        const auto it = m_stats.constFind(workers[i]);
        if (it != m_stats.constEnd() && it->perSampleMs > 0) {
            r.speed[i] = 1000.0 / it->perSampleMs;
            // Too few measurements to tell a slow link from one slow step: no overhead yet.
            const double link = int(it->overheadMs.size()) >= kMinToJudge ? it->overhead : 0;
            r.overhead[i] = (link + it->fixedMs) / 1000.0;
            sum += r.speed[i];
            ++measured;
        }
    }
    const double avg = measured ? sum / measured : 1.0;
    for (size_t i = 0; i < n; ++i)
        if (!(r.speed[i] > 0)) {
            r.speed[i] = avg;
            r.overhead[i] = 0;
        }
    // Each worker planned at the quantile of its overruns that its part of the speed sets.
    const double total = std::accumulate(r.speed.begin(), r.speed.end(), 0.0);
    for (size_t i = 0; i < n && n > 1; ++i) {
        const auto it = m_stats.constFind(workers[i]);
        if (it == m_stats.constEnd())
            continue;
        r.margin[i] = std::max(0.0, overrunMs(*it, 1.0 - r.speed[i] / total) + it->lastMs) / 1000.0;
        r.overhead[i] += r.margin[i];
    }
    return r;
}

std::vector<double> ThroughputBalancer::finishTogether(int64_t batch, const Rates& r) {
    // Solve for the common finish time T over the active set; drop workers whose share comes
    // out non-positive and solve again.
    const size_t n = r.speed.size();
    std::vector<bool> active(n, true);
    std::vector<double> share(n, 0);
    for (size_t round = 0; round < n; ++round) {
        double vs = 0, ov = 0;
        for (size_t i = 0; i < n; ++i)
            if (active[i]) {
                vs += r.speed[i];
                ov += r.overhead[i] * r.speed[i];
            }
        const double T = (double(batch) + ov) / vs;
        bool dropped = false;
        for (size_t i = 0; i < n; ++i) {
            if (!active[i])
                continue;
            share[i] = (T - r.overhead[i]) * r.speed[i];
            if (share[i] <= 0.5) {
                active[i] = false;
                share[i] = 0;
                dropped = true;
            }
        }
        if (!dropped)
            break;
    }
    return share;
}

void ThroughputBalancer::applyCaps(std::vector<double>& share, const std::vector<double>& speed,
                                   const std::vector<int64_t>& maxBatch) {
    // Water-filling: clamp every worker over its cap, and hand what it could not take to the
    // workers in the step that still have room, in proportion to speed; again, until nothing is
    // left over or no one has room. A worker never gets past its cap while another has room.
    const size_t n = share.size();
    auto cap = [&](size_t i) {
        return i < maxBatch.size() && maxBatch[i] > 0 ? double(maxBatch[i])
                                                      : std::numeric_limits<double>::infinity();
    };
    for (size_t round = 0; round <= n; ++round) {
        double excess = 0;
        for (size_t i = 0; i < n; ++i)
            if (share[i] > cap(i)) {
                excess += share[i] - cap(i);
                share[i] = cap(i);
            }
        double vs = 0;
        for (size_t i = 0; i < n; ++i)
            if (share[i] > 0 && share[i] < cap(i))
                vs += speed[i];
        if (excess <= 0 || vs <= 0)
            return; // with excess left, the caps cannot hold the batch: roundShares places it
        for (size_t i = 0; i < n; ++i)
            if (share[i] > 0 && share[i] < cap(i))
                share[i] += excess * speed[i] / vs;
    }
}

std::vector<int64_t> ThroughputBalancer::roundShares(int64_t batch,
                                                     const std::vector<double>& share,
                                                     const std::vector<int64_t>& maxBatch) {
    // Largest remainder rounding keeps the total exact; a unit goes past a cap only when every
    // worker in the step is at its cap (the caps cannot hold the batch).
    const size_t n = share.size();
    std::vector<int64_t> out(n, 0);
    int64_t given = 0;
    std::vector<std::pair<double, size_t>> rem;
    for (size_t i = 0; i < n; ++i) {
        out[i] = int64_t(std::floor(share[i]));
        given += out[i];
        rem.emplace_back(share[i] - std::floor(share[i]), i);
    }
    std::sort(rem.begin(), rem.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    const bool anyone = std::any_of(share.begin(), share.end(), [](double s) { return s > 0; });
    auto takes = [&](size_t i) { return share[i] > 0 || !anyone; };
    auto room = [&](size_t i) {
        return !(i < maxBatch.size() && maxBatch[i] > 0 && out[i] >= maxBatch[i]);
    };
    // In remainder order, to those with room; once a whole round finds none, to all.
    bool withinCaps = true;
    while (given < batch) {
        bool placed = false;
        for (size_t j = 0; j < n && given < batch; ++j) {
            const size_t i = rem[j].second;
            if (takes(i) && (!withinCaps || room(i))) {
                ++out[i];
                ++given;
                placed = true;
            }
        }
        if (!placed)
            withinCaps = false;
    }
    while (given > batch) { // the floors of capped shares can only ever sum below the batch
        auto it = std::max_element(out.begin(), out.end());
        --*it;
        --given;
    }
    return out;
}

std::vector<int64_t> ThroughputBalancer::split(int64_t batch, const std::vector<QString>& workers,
                                               const std::vector<int64_t>& maxBatch) const {
    const size_t n = workers.size();
    if (n == 0 || batch <= 0)
        return std::vector<int64_t>(n, 0);
    if (n == 1)
        return {batch};
    const Rates r = rates(workers);
    std::vector<double> share = finishTogether(batch, r);
    applyCaps(share, r.speed, maxBatch);
    return roundShares(batch, share, maxBatch);
}

} // namespace tandem
