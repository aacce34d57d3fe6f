#pragma once

// The worker process: connects to a coordinator, takes part in its run until it ends.

#include "common/expected.h"
#include "engine/workeroptions.h"

#include <QString>

#include <functional>

namespace tandem {

// Runs until the coordinator ends the run (exit code 0) or the worker cannot go on (1, with
// the reason given to `log`; 2 when the device asked for is not here). Needs a QCoreApplication;
// runs its own event loop.
int runWorker(const WorkerOptions& options, const std::function<void(const QString&)>& log);

} // namespace tandem
