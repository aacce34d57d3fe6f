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

// A batch on its way to a device: the inputs as stored (images still as bytes, a quarter of
// their floats' size), in page-locked memory where the device can copy from it without blocking
// (CUDA), so the host can gather it ahead of the step that uses it.
struct HostBatch {
    at::Tensor inputs, targets;
};
HostBatch gatherForDevice(const Dataset& data, const std::vector<int64_t>& indices,
                          const c10::Device& device);
// The batch on `device` as gatherInputs and gatherTargets give it: copied without blocking from
// page-locked memory, then images turned to floats there.
std::pair<at::Tensor, at::Tensor> toDevice(const Dataset& data, const HostBatch& batch,
                                           const c10::Device& device);

// A training set kept whole on an accelerator, so that a step copies its sample indices there
// and nothing else: the rows as stored (images as bytes, tokens as 32-bit integers), gathered
// and converted on the device to exactly what gatherInputs and gatherTargets give.
class ResidentRows {
public:
    // What `data` takes on a device.
    static int64_t bytesFor(const Dataset& data);

    ResidentRows(const Dataset& data, const c10::Device& device);

    // The batch of the samples `indices` names, on the device.
    std::pair<at::Tensor, at::Tensor> batch(const std::vector<int64_t>& indices) const;

private:
    at::Tensor windows(const at::Tensor& indices, int64_t offset) const;

    const Dataset& m_data;
    c10::Device m_device;
    at::Tensor m_inputs, m_targets; // [count, …]; for windows, m_inputs is the tokens in use
};

} // namespace tandem
