#include "engine/coordinator/balancer.h"

#include <algorithm>
#include <cmath>
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
    if (samples <= 0 || !(computeMs > 0) || !std::isfinite(overheadMs))
        return;
    Stats& s = m_stats[worker];
    push(s.speeds, double(samples) / (computeMs / 1000.0));
    push(s.overheadMs, std::max(0.0, overheadMs));
    s.speed = median(s.speeds);
    s.overhead = median(s.overheadMs);
}

double ThroughputBalancer::speed(const QString& worker) const {
    return m_stats.value(worker).speed;
}

double ThroughputBalancer::overheadMs(const QString& worker) const {
    return m_stats.value(worker).overhead;
}

std::vector<int64_t> ThroughputBalancer::split(int64_t batch, const std::vector<QString>& workers,
                                               const std::vector<int64_t>& maxBatch) const {
    const size_t n = workers.size();
    std::vector<int64_t> out(n, 0);
    if (n == 0 || batch <= 0)
        return out;
    if (n == 1) {
        out[0] = batch;
        return out;
    }
    // Speeds and overheads in seconds; unmeasured workers take the measured average.
    std::vector<double> v(n), o(n);
    double sum = 0;
    int measured = 0;
    for (size_t i = 0; i < n; ++i) {
        const auto it = m_stats.constFind(workers[i]);
        if (it != m_stats.constEnd() && it->speed > 0) {
            v[i] = it->speed;
            // Too few measurements to tell a slow link from one slow step: no overhead yet.
            o[i] = int(it->overheadMs.size()) >= kMinToJudge ? it->overhead / 1000.0 : 0.0;
            sum += v[i];
            ++measured;
        }
    }
    const double avg = measured ? sum / measured : 1.0;
    for (size_t i = 0; i < n; ++i)
        if (!(v[i] > 0)) {
            v[i] = avg;
            o[i] = 0;
        }
    std::vector<bool> active(n, true);
    std::vector<double> share(n, 0);
    // Solve for the common finish time T over the active set; drop workers whose share comes
    // out non-positive and solve again.
    for (size_t round = 0; round < n; ++round) {
        double vs = 0, ov = 0;
        for (size_t i = 0; i < n; ++i)
            if (active[i]) {
                vs += v[i];
                ov += o[i] * v[i];
            }
        const double T = (double(batch) + ov) / vs;
        bool dropped = false;
        for (size_t i = 0; i < n; ++i) {
            if (!active[i])
                continue;
            share[i] = (T - o[i]) * v[i];
            if (share[i] <= 0.5) {
                active[i] = false;
                share[i] = 0;
                dropped = true;
            }
        }
        if (!dropped)
            break;
    }
    // Caps: clamp and hand the excess to uncapped workers in proportion to speed.
    double excess = 0;
    for (size_t i = 0; i < n; ++i)
        if (i < maxBatch.size() && maxBatch[i] > 0 && share[i] > double(maxBatch[i])) {
            excess += share[i] - double(maxBatch[i]);
            share[i] = double(maxBatch[i]);
        }
    if (excess > 0) {
        double vs = 0;
        for (size_t i = 0; i < n; ++i)
            if (active[i] &&
                !(i < maxBatch.size() && maxBatch[i] > 0 && share[i] >= double(maxBatch[i])))
                vs += v[i];
        for (size_t i = 0; i < n && vs > 0; ++i)
            if (active[i] &&
                !(i < maxBatch.size() && maxBatch[i] > 0 && share[i] >= double(maxBatch[i])))
                share[i] += excess * v[i] / vs;
    }
    // Largest remainder rounding keeps the total exact.
    int64_t given = 0;
    std::vector<std::pair<double, size_t>> rem;
    for (size_t i = 0; i < n; ++i) {
        out[i] = int64_t(std::floor(share[i]));
        given += out[i];
        rem.emplace_back(share[i] - std::floor(share[i]), i);
    }
    std::sort(rem.begin(), rem.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t j = 0; given < batch; j = (j + 1) % n) {
        const size_t i = rem[j].second;
        if (share[i] > 0 ||
            std::none_of(share.begin(), share.end(), [](double s) { return s > 0; })) {
            ++out[i];
            ++given;
        }
    }
    while (given > batch) { // only when caps cannot hold the whole batch: trim the largest
        auto it = std::max_element(out.begin(), out.end());
        --*it;
        --given;
    }
    return out;
}

} // namespace tandem
