#include "engine/wire/workwire.h"

#include "engine/modes/rounds.h"

#include <chrono>

namespace tandem {

void DeviceFigures::add(const DeviceFigures& o) {
    if (!o.defined())
        return;
    const auto sum = [](at::Tensor& into, const at::Tensor& t) {
        if (t.defined())
            into = into.defined() ? into.add(t) : t;
    };
    sum(lossSum, o.lossSum);
    sum(correct, o.correct);
    sum(counted, o.counted);
    sum(pairSums, o.pairSums);
}

int64_t arrivalClockNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

Expected<WorkRequest> requestFrom(const wire::Assign& a, int runFragments) {
    WorkRequest req;
    req.step = a.step;
    req.indices = a.indices;
    req.seed = a.seed;
    req.referenceLogps = a.referenceLogps;
    auto local = roundFrom(a, runFragments);
    if (!local)
        return local.error();
    req.local = std::move(*local);
    return req;
}

void describeResult(const WorkResult& r, wire::Result& res) {
    res.samples = r.samples;
    res.lossSum = r.lossSum;
    res.correct = r.correct;
    res.counted = r.counted;
    if (r.pairs.pairs > 0) {
        res.pairs = r.pairs.pairs;
        res.pairSums.assign(r.pairs.sums.begin(), r.pairs.sums.end());
    }
    res.computeMs = r.computeMs;
    res.memoryCap = r.memoryCap;
}

WorkResult resultFrom(const wire::Result& res) {
    WorkResult r;
    r.step = res.step;
    r.samples = res.samples;
    r.lossSum = res.lossSum;
    r.correct = res.correct;
    r.counted = res.counted;
    r.pairs.pairs = res.pairs;
    for (size_t i = 0; i < res.pairSums.size() && i < r.pairs.sums.size(); ++i)
        r.pairs.sums[i] = res.pairSums[i];
    r.computeMs = res.computeMs;
    r.memoryCap = res.memoryCap;
    r.earlyBytes = res.earlyBytes;
    return r;
}

qint64 bytesReleasedEarly(const std::vector<std::pair<qint64, qint64>>& released, qint64 stepNs) {
    qint64 early = 0;
    if (released.empty())
        return early;
    for (const auto& [at, ready] : released)
        if (at <= released.back().first - stepNs / 10)
            early = std::max(early, ready);
    return early;
}

} // namespace tandem
