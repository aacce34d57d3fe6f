#pragma once

#include "engine/internal.h"

// Engine-internal: the local modes' rounds (worker.h's LocalRound), each defined in its mode's
// file beside the mode's StepPolicy, and the one place that reads a round off the wire.

#include "common/expected.h"
#include "engine/work.h"

#include <memory>
#include <vector>

namespace tandem {

// Local-SGD (modes/localsgd.cpp): the worker returns its whole parameter delta.
std::shared_ptr<LocalRound> localSgdRound(int innerSteps, double innerLr);

// Streaming local-SGD (modes/streaming.cpp): the worker keeps its weights from round to round,
// merges fragment `merge`'s new global values (`mergeValues`, `mergeBuffers`) when they come,
// and returns fragment `send`'s delta only.
struct StreamingAssignment {
    int fragments = 0;
    int send = 0;
    int merge = -1;
    at::Tensor mergeValues;
    std::vector<at::Tensor> mergeBuffers;
};
std::shared_ptr<LocalRound> streamingRound(int innerSteps, double innerLr,
                                           StreamingAssignment assignment);

// A worker process's reading of an assignment's round: null for a gradient step. Refuses one
// no mode sends, and, where the run said it streams in `runFragments` (2 or more:
// wire::RunSpec::fragments, which the worker's memory plan counts on), a round cut otherwise.
Expected<std::shared_ptr<LocalRound>> roundFrom(const wire::Assign& a, int runFragments = 1);

} // namespace tandem
