#pragma once

#include "engine/internal.h"

// Engine-internal: a batch of a dataset's rows as tensors, for training, the check before a run
// and evaluation alike.

#include "formats/dataset.h"

#include <ATen/ATen.h>

#include <vector>

namespace tandem {

// Builds a batch from dataset rows: images as floats in [0,1], tables as stored floats, token ids
// and integer arrays as int64.
at::Tensor gatherInputs(const Dataset& data, const std::vector<int64_t>& indices);
// The rows' targets: int64 class indices [n] or ids [n, …], or floats [n, …].
at::Tensor gatherTargets(const Dataset& data, const std::vector<int64_t>& indices);

} // namespace tandem
