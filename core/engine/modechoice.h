#pragma once

// What `--mode auto` decides from and how. Plain C++/Qt, no LibTorch: the figures come from
// the hub's link probes and one timed step on this machine, and the rule is tested alone.

#include <QList>
#include <QString>

namespace tandem {

// One worker's link as the handshake's probe measured it.
struct LinkFacts {
    QString name;              // the worker, as the log names it
    double bytesPerSecond = 0; // one way (the probe times both and reports their mean)
    double rttMs = 0;
};

struct ModeFacts {
    double computeMs = 0; // one step of the global batch, forward and backward, on this machine
    int localDevices = 1; // devices on this machine that train (0: the coordinator only leads)
    QList<LinkFacts> links;
    double syncBytesPerStep = 0;   // each worker's link in one sync step, both ways
    double streamBytesPerStep = 0; // each worker's link per step of the batch in streaming
};

struct ModeChoice {
    bool streaming = false;
    double syncSpeedup = 1;   // predicted, against this machine alone
    double streamSpeedup = 1; // likewise
    double trafficRatio = 1;  // sync's bytes over streaming's, per sample
    QString why;              // the log line that says what was chosen and why
};

// Sync is "a loss" when it keeps less than this share of what the other devices would add in
// streaming. Sync is the exact single-machine trajectory and streaming's outer steps converge a
// little differently, so sync keeps the run while it gets at least half of the gain.
constexpr double kSyncShareToKeep = 0.5;

// The rule. Every device is assumed to compute as fast as this one (the handshake knows the
// link, not the worker's speed). In sync, each step moves syncBytes over each link and the
// balancer shares the batch so that all finish together: with n devices, T the step alone and C
// the slowest link's transfer, a step takes (T + (n-1)·C)/n while C < T, and a worker whose
// transfer alone exceeds T is left out. In streaming, a worker's exchange overlaps its inner
// steps, so it adds its full speed while the link carries a round's bytes within the round's
// compute, and a fraction of it when not.
ModeChoice chooseMode(const ModeFacts& facts);

// "12.3 MB/s", "850 kB/s": a rate for the log.
QString rateText(double bytesPerSecond);

} // namespace tandem
