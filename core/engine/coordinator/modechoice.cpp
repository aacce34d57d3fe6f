#include "engine/coordinator/modechoice.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tandem {

QString rateText(double bytesPerSecond) {
    if (bytesPerSecond >= 1e9)
        return QStringLiteral("%1 GB/s").arg(bytesPerSecond / 1e9, 0, 'f', 2);
    if (bytesPerSecond >= 1e6)
        return QStringLiteral("%1 MB/s").arg(bytesPerSecond / 1e6, 0, 'f', 1);
    return QStringLiteral("%1 kB/s").arg(bytesPerSecond / 1e3, 0, 'f', 0);
}

QString linkRateText(double bytesPerSecond, bool atLeast) {
    return atLeast ? QStringLiteral("at least %1").arg(rateText(bytesPerSecond))
                   : rateText(bytesPerSecond);
}

namespace {

double transferMs(double bytes, const LinkFacts& link) {
    return link.bytesPerSecond > 0 ? bytes / link.bytesPerSecond * 1000.0 : 1e12;
}

// The shortest sync step the balancer can make: this machine's devices and the m workers with
// the cheapest links share the batch so that all finish together, t = (T + ΣC) / (L + m).
double syncStepMs(const ModeFacts& f) {
    std::vector<double> costs;
    for (const LinkFacts& l : f.links)
        costs.push_back(transferMs(f.syncBytesPerStep, l) + l.rttMs);
    std::sort(costs.begin(), costs.end());
    double best = f.localDevices > 0 ? f.computeMs / f.localDevices : 1e12;
    double sum = 0;
    for (size_t m = 1; m <= costs.size(); ++m) {
        sum += costs[m - 1];
        const double t = (f.computeMs + sum) / double(f.localDevices + int(m));
        // Every worker counted must still have time to compute; without a device here, some
        // worker has to take part whatever its link costs.
        if (t > costs[m - 1] || f.localDevices == 0)
            best = std::min(best, t);
    }
    return best;
}

// How long the run waits before its workers add anything: the slowest link's transfer of what
// a worker receives first, and the warm-up steps (0 for a run of unknown length).
double startMs(const ModeFacts& f) {
    if (f.steps <= 0)
        return 0;
    double slowest = 0;
    for (const LinkFacts& l : f.links)
        slowest = std::max(slowest, transferMs(f.startBytes, l) + l.rttMs);
    return kStartMargin * (slowest + f.coldStartMs + kWorkerWarmUpSteps * f.computeMs);
}

QString seconds(double ms) {
    return ms >= 10e3 ? QString::number(std::lround(ms / 1e3)) : QString::number(ms / 1e3, 'f', 1);
}

} // namespace

ModeChoice chooseMode(const ModeFacts& f) {
    ModeChoice c;
    if (f.links.isEmpty() || f.computeMs <= 0) {
        c.why = QStringLiteral("no worker joined over the network before the run began: "
                               "training in sync");
        return c;
    }
    c.syncSpeedup = f.computeMs / syncStepMs(f);
    double stream = f.localDevices;
    for (const LinkFacts& l : f.links)
        stream += std::min(1.0, f.computeMs / std::max(transferMs(f.streamBytesPerStep, l), 1e-9));
    c.streamSpeedup = stream;
    c.trafficRatio = f.streamBytesPerStep > 0 ? f.syncBytesPerStep / f.streamBytesPerStep : 1;
    // Which of the two, from their speeds once running (the start costs both the same). A run
    // of fewer than a few rounds streams badly: each worker is timed, then waits a round for
    // its first exchange.
    const bool tooShortToStream =
        f.steps > 0 && f.steps < int64_t(kMinStreamingRounds) * std::max(1, f.localSteps);
    c.streaming = !tooShortToStream && c.streamSpeedup - 1 > (c.syncSpeedup - 1) / kSyncShareToKeep;

    // Over a run of known length the start counts: each mode's speed-up is taken over the
    // whole run, against one device of this machine.
    const double start = startMs(f);
    if (f.steps > 0) {
        const double work = double(f.steps) * f.computeMs; // the steps on one device
        c.startS = start / 1e3;
        c.aloneS = work / std::max(1, f.localDevices) / 1e3;
        const double syncMs = start + work / c.syncSpeedup;
        const double streamMs = tooShortToStream ? syncMs : start + work / c.streamSpeedup;
        c.syncSpeedup = work / syncMs;
        c.streamSpeedup = work / streamMs;
        if (f.localDevices > 0 && std::min(syncMs, streamMs) >= kGainToKeep * c.aloneS * 1e3) {
            c.streaming = false;
            c.alone = true;
            c.why =
                QStringLiteral("this run has %1 step(s) left, about %2 s on this machine alone; "
                               "the other machine(s) would take about %3 s to receive the "
                               "model and warm up, and the run would end no sooner (%4 s in "
                               "sync, %5 s streaming): training on this machine alone")
                    .arg(f.steps)
                    .arg(seconds(c.aloneS * 1e3), seconds(start), seconds(syncMs),
                         seconds(streamMs));
            return c;
        }
    }

    const LinkFacts& slowest = *std::min_element(
        f.links.begin(), f.links.end(),
        [](const LinkFacts& a, const LinkFacts& b) { return a.bytesPerSecond < b.bytesPerSecond; });
    const QString link =
        QStringLiteral("the link to %1 moves %2; a sync step %3 %4 ms moving the weights against "
                       "%5 ms of compute")
            .arg(slowest.name, linkRateText(slowest.bytesPerSecond, slowest.atLeast),
                 c.streaming ? QStringLiteral("would spend") : QStringLiteral("spends"))
            .arg(std::lround(transferMs(f.syncBytesPerStep, slowest) + slowest.rttMs))
            .arg(std::lround(f.computeMs / std::max(1, f.localDevices + int(f.links.size()))));
    if (c.streaming)
        c.why = QStringLiteral("%1: streaming mode will send 1/%2 of sync's traffic (about "
                               "%3× this machine alone, against %4× in sync)")
                    .arg(link)
                    .arg(std::lround(c.trafficRatio))
                    .arg(c.streamSpeedup, 0, 'f', 1)
                    .arg(c.syncSpeedup, 0, 'f', 1);
    else if (tooShortToStream)
        c.why = QStringLiteral("%1: training in sync (about %2× this machine alone; the %3 "
                               "step(s) left are too few to stream, which needs %4 rounds of %5)")
                    .arg(link)
                    .arg(c.syncSpeedup, 0, 'f', 1)
                    .arg(f.steps)
                    .arg(kMinStreamingRounds)
                    .arg(f.localSteps);
    else if (c.streamSpeedup > c.syncSpeedup)
        // Say why the faster prediction lost: sync is exact, and is kept while it earns enough.
        c.why = QStringLiteral("%1: training in sync (about %2× this machine alone; streaming "
                               "would make %3×, but sync follows one machine's training exactly "
                               "and is kept while it brings at least %4 % of streaming's gain)")
                    .arg(link)
                    .arg(c.syncSpeedup, 0, 'f', 1)
                    .arg(c.streamSpeedup, 0, 'f', 1)
                    .arg(std::lround(kSyncShareToKeep * 100));
    else
        c.why = QStringLiteral("%1: training in sync (about %2× this machine alone; streaming "
                               "would make %3×)")
                    .arg(link)
                    .arg(c.syncSpeedup, 0, 'f', 1)
                    .arg(c.streamSpeedup, 0, 'f', 1);
    if (start > 0)
        c.why += QStringLiteral(", counting about %1 s for the workers to start over the %2 "
                                "step(s) left")
                     .arg(seconds(start))
                     .arg(f.steps);
    return c;
}

} // namespace tandem
