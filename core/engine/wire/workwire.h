#pragma once

#include "engine/internal.h"

// Engine-internal: work on the wire. A worker process reads its request from an Assign message
// and describes its result in a Result message; the coordinator reads that Result back.

#include "common/expected.h"
#include "engine/work.h"
#include "wire/messages.h"

#include <utility>
#include <vector>

namespace tandem {

// A worker process's side of an assignment: the request it computes (its local round, read
// from the wire by the round's mode), and what the Result message says about the step besides
// its tensors. `runFragments`: the fragments the run said it streams (roundFrom()).
Expected<WorkRequest> requestFrom(const wire::Assign& a, int runFragments = 1);
void describeResult(const WorkResult& r, wire::Result& res);
// The coordinator's side: what a Result message says, without its tensors.
WorkResult resultFrom(const wire::Result& res);
// Of the (ns into the step, bytes ready) points a streamed result was let go at, the bytes
// that were ready with at least a tenth of the step's compute still to go before the last
// gradient: those overlapped the backward pass. Gradients that all come in one burst at its
// end (as from a graph optimised into autodiff subgraphs) count for nothing.
qint64 bytesReleasedEarly(const std::vector<std::pair<qint64, qint64>>& released, qint64 stepNs);

} // namespace tandem
