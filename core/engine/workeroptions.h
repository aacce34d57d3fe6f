#pragma once

// What a worker process is told to do (workerclient.h runs it; worker/session.h is one
// connection of it). Plain C++/Qt.

#include <QJsonObject>
#include <QString>

#include <cstdint>
#include <functional>

namespace tandem {

struct WorkerOptions {
    QString host;
    quint16 port = 0;
    QString home;
    QString cacheDir; // datasets and base models received from coordinators; empty: <home>/cache
    // A Hugging Face folder, or a folder of them, looked in for a run's base model before it is
    // received; empty: none.
    QString modelsDir;
    QString name; // shown to the coordinator; empty: the host name
    int threads = 0;
    // How long to keep trying to reach the coordinator, at start and after losing it (a
    // coordinator that crashed and is resumed from its checkpoint comes back on the same
    // address).
    int reconnectSeconds = 60;
    int idleTimeoutSeconds = 60;
    int64_t maxBatch = 0;
    // Join only a sharded run (tandem train --shard), to own a range of its state and compute
    // nothing: a machine with memory to spare and a slow processor.
    bool holdsOnly = false;
    // Where a sharded run's other machines link to this one: the port it listens on (0: any free
    // port, which the coordinator passes on), for a firewall that opens one; and the port they
    // are told to dial, where a port forward or relay in front of it listens (0: the same). With
    // several devices, each worker takes the next port.
    quint16 shardPort = 0;
    quint16 shardAdvertisedPort = 0;
    // Which device to compute on: "cuda:1", "mps", "cpu" (empty: the best); "all", or a list
    // such as "cuda:0,cuda:1", runs one worker per device, each a worker of its own to the
    // coordinator.
    QString devices;
    // What happens in the run, for a program that shows it (the app's lending view), as typed
    // JSON objects with "event" naming the kind:
    //   joined    coordinator, coordinator_id, run, mode, device
    //   progress  step, samples (this worker's so far), loss (mean since the last progress),
    //             samples_per_s (since the last), share (of the step's samples; 0: not given)
    //   paused, resumed
    // Progress comes at most twice a second.
    std::function<void(const QJsonObject&)> events;
};

} // namespace tandem
