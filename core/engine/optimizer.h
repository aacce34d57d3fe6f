#pragma once

#include "engine/internal.h"

// Engine-internal. The optimizers work on a flat list of parameter tensors that the
// coordinator owns, and follow torch.optim's update rules exactly, so that a run is comparable
// with the same settings in PyTorch and its state can be checkpointed in Tandem's own format.

#include "common/expected.h"
#include "engine/runenums.h"
#include "formats/tensorfile.h"

#include <ATen/ATen.h>

#include <QList>
#include <QString>

#include <vector>

namespace tandem {

struct OptimizerConfig {
    using Kind = OptimizerKind;
    Kind kind = Kind::Adam;
    double momentum = 0.9; // sgd
    bool nesterov = false; // sgd
    double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    double weightDecay = 0; // L2 added to the gradient (sgd, adam); decoupled (adamw)
};

class Optimizer {
public:
    Optimizer(OptimizerConfig config, std::vector<at::Tensor> params);

    // One update with learning rate `lr`. grads[i] belongs to params[i]; an undefined
    // gradient leaves its parameter (and state) untouched, as torch.optim does.
    void step(const std::vector<at::Tensor>& grads, double lr);

    int64_t stepCount() const { return m_steps; }

    // State as named records ("exp_avg.3", ...) for the run checkpoint, and back.
    QList<TensorRecord> stateRecords() const;
    Status restore(int64_t steps, const QList<TensorRecord>& records);

private:
    OptimizerConfig m_cfg;
    std::vector<at::Tensor> m_params;
    std::vector<at::Tensor> m_buf;    // sgd momentum
    std::vector<at::Tensor> m_expAvg; // adam first moment
    std::vector<at::Tensor> m_expSq;  // adam second moment
    std::vector<int64_t> m_paramSteps;
    int64_t m_steps = 0;
};

} // namespace tandem
