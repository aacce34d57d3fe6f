#pragma once

#include "engine/internal.h"

// Engine-internal: what `--mode auto` decides from and how. Plain C++/Qt, no LibTorch: the figures
// come from the hub's link probes and one timed step on this machine, and the rule is tested alone.

#include <QList>
#include <QString>

#include <cstdint>

namespace tandem {

// One worker's link as the handshake's probe measured it.
struct LinkFacts {
    QString name;              // the worker, as the log names it
    double bytesPerSecond = 0; // one way (the probe times both and reports their mean)
    double rttMs = 0;
    bool atLeast = false; // faster than the probe could time: bytesPerSecond is a floor
};

struct ModeFacts {
    double computeMs = 0; // one step of the global batch, forward and backward, on this machine
    int localDevices = 1; // devices on this machine that train (0: the coordinator only leads)
    QList<LinkFacts> links;
    double syncBytesPerStep = 0;   // each worker's link in one sync step, both ways
    double streamBytesPerStep = 0; // each worker's link per step of the batch in streaming
    // The steps the run has left (0: not known, as good as endless).
    int64_t steps = 0;
    // What each worker receives before its first step (the model, and the data it lacks).
    double startBytes = 0;
    int localSteps = 32; // streaming's inner steps per round (H)
    // What this machine took to make a copy of the model and compute its first step, cold:
    // what a worker pays before it adds anything, beyond its transfers.
    double coldStartMs = 0;
};

struct ModeChoice {
    bool streaming = false;
    // The other machines would cost more to start than they save over the steps left: this
    // machine trains alone (in sync) and the workers are sent home.
    bool alone = false;
    double syncSpeedup = 1;   // predicted, against this machine alone
    double streamSpeedup = 1; // likewise
    double trafficRatio = 1;  // sync's bytes over streaming's, per sample
    double startS = 0;        // predicted seconds before the workers add anything
    double aloneS = 0;        // predicted seconds of the steps left on this machine alone
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
//
// A run of known length also pays for starting the workers: each receives the model (and the
// data it lacks) over its link, makes its copy and computes a cold first step (as long as this
// machine's took), then two more before it keeps pace, while the run waits for it. The speed-ups
// above are then taken over the whole run, start included, and a run too short to repay the
// start trains on this machine alone.
ModeChoice chooseMode(const ModeFacts& facts);

// How many of this machine's steps starting a worker is counted as, beyond its transfers and
// its cold first step.
constexpr double kWorkerWarmUpSteps = 2;
// The start as predicted is counted this many times over: on loopback a worker's first real
// steps took three times the prediction (bench/short_runs.sh), and a short run that ends later
// with more machines is the mistake to avoid.
constexpr double kStartMargin = 3;
// Other machines take part only where the run is predicted to end sooner than this share of
// this machine alone's time; otherwise it trains alone. The start's margin above is the
// safety, so any predicted gain counts.
constexpr double kGainToKeep = 1.0;
// A run of known length streams only when it has at least this many rounds of H steps.
constexpr int kMinStreamingRounds = 4;

// "12.3 MB/s", "850 kB/s": a rate for the log.
QString rateText(double bytesPerSecond);
// A measured link's speed as the log says it: "at least 1.2 GB/s" where it was a floor.
QString linkRateText(double bytesPerSecond, bool atLeast);

} // namespace tandem
