#pragma once

#include "engine/internal.h"

// Engine-internal: mixed precision. A worker computes its forward pass in fp16 or bf16 under
// autocast where its device and LibTorch allow it; weights, gradients and the parameter
// server's optimizer stay in fp32 (the master weights), as with torch.autocast in PyTorch.

#include "common/deviceinfo.h"
#include "common/runenums.h"

#include <ATen/ATen.h>

#include <QString>

#include <optional>
#include <vector>

namespace tandem {

at::ScalarType autocastType(Precision p); // Half or BFloat16; Float for fp32

// What `device` computes in when `requested` is asked for. When it must fall back to fp32,
// `note` says why, in words for the run's log.
Precision effectivePrecision(Precision requested, const DeviceInfo& device, QString* note);

// fp16's dynamic loss scale, with torch.cuda.amp.GradScaler's rule: start at 2^16, halve when
// a gradient overflows, double after 2000 steps in a row without overflow. Gradients are
// computed from loss * scale (so small ones do not flush to zero in fp16) and divided by the
// scale before anyone uses them.
class LossScaler {
public:
    static constexpr double kInitialScale = 65536.0;
    static constexpr double kGrowth = 2.0;
    static constexpr double kBackoff = 0.5;
    static constexpr int kGrowthInterval = 2000;

    explicit LossScaler(double initialScale = kInitialScale)
        : m_scale(initialScale) {}

    double scale() const { return m_scale; }
    // Divides `grads` by the scale in place and updates the scale. Returns false when any of
    // them is inf or NaN: the caller must discard them (the scale has been halved).
    bool unscale(const std::vector<at::Tensor>& grads);

private:
    double m_scale;
    int m_goodSteps = 0;
};

} // namespace tandem
