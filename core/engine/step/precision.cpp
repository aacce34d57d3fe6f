#include "engine/step/precision.h"

#include "model/torchcompat.h"

#include <ATen/core/grad_mode.h>

namespace tandem {

at::ScalarType autocastType(Precision p) {
    switch (p) {
    case Precision::Bf16:
        return at::kBFloat16;
    case Precision::Fp16:
        return at::kHalf;
    case Precision::Fp32:
        break;
    }
    return at::kFloat;
}

Precision effectivePrecision(Precision requested, const DeviceInfo& device, QString* note) {
    if (requested == Precision::Fp32)
        return requested;
    const c10::DeviceType type = device.kind == DeviceKind::Cuda  ? c10::DeviceType::CUDA
                                 : device.kind == DeviceKind::Mps ? c10::DeviceType::MPS
                                                                  : c10::DeviceType::CPU;
    std::string why;
    QString reason;
    if (!autocastSupported(type, autocastType(requested), &why)) {
        reason = QString::fromStdString(why);
    } else if (type == c10::DeviceType::CUDA && requested == Precision::Bf16 &&
               !device.capability.isEmpty() &&
               device.capability.section(QLatin1Char('.'), 0, 0).toInt() < 8) {
        // Before Ampere, bf16 has no tensor-core path and runs slower than fp32.
        reason = QStringLiteral("bf16 needs compute capability 8.0 or later and %1 has %2; fp16 "
                                "runs there")
                     .arg(device.name, device.capability);
    }
    if (reason.isEmpty())
        return requested;
    if (note)
        *note = QStringLiteral("%1 autocast is not available on %2 with LibTorch %3 (%4); "
                               "computing in fp32 there")
                    .arg(nameOf(requested), device.name, device.torchVersion, reason);
    return Precision::Fp32;
}

bool LossScaler::unscale(const std::vector<at::Tensor>& grads) {
    at::NoGradGuard noGrad;
    const double inverse = 1.0 / m_scale;
    std::vector<at::Tensor> finite;
    finite.reserve(grads.size());
    for (const at::Tensor& g : grads)
        if (g.defined()) {
            g.mul_(inverse);
            finite.push_back(at::isfinite(g).all());
        }
    // One host synchronisation for the whole model, not one per tensor.
    const bool ok = finite.empty() || at::stack(finite).all().item<bool>();
    if (!ok) {
        m_scale *= kBackoff;
        m_goodSteps = 0;
    } else if (++m_goodSteps >= kGrowthInterval) {
        m_scale *= kGrowth;
        m_goodSteps = 0;
    }
    return ok;
}

} // namespace tandem
