#pragma once

#include "engine/internal.h"

// Engine-internal. The optimizers are LibTorch's own (torch::optim; AdamW8bit is Tandem's,
// blockwiseadam.h), over a flat list of
// parameter tensors that the coordinator owns, so that a run takes the same steps as the same
// settings in PyTorch. Their state is checkpointed in Tandem's own format, one record per
// tensor ("exp_avg.3"), so that checkpoints do not depend on LibTorch's serialisation.

#include "common/expected.h"
#include "common/runenums.h"
#include "formats/tensorfile.h"
#include "model/tensors.h"

#include <ATen/ATen.h>

#include <QList>
#include <QString>

#include <memory>
#include <vector>

namespace torch::optim {
class Optimizer;
}

namespace tandem {

class BlockwiseAdamW;

struct OptimizerConfig {
    using Kind = OptimizerKind;
    Kind kind = Kind::Adam;
    double momentum = 0.9;                         // sgd
    bool nesterov = false;                         // sgd
    double beta1 = 0.9, beta2 = 0.999, eps = 1e-8; // adam, adamw; eps also rmsprop
    double alpha = 0.99;                           // rmsprop's smoothing
    double adagradEps = 1e-10;                     // PyTorch's default for Adagrad
    double weightDecay = 0; // L2 added to the gradient (all but adamw); decoupled (adamw)
    // How SGD, Adam and AdamW update the weights: each tensor in turn (torch::optim's loop,
    // several kernels a tensor), all at once with LibTorch's multi-tensor (_foreach_) operators
    // (the same arithmetic, a few kernels a step), or with its fused kernel (one a step; Adam
    // and AdamW from LibTorch 2.4, on CUDA and the CPU; the same update within fp32 rounding).
    // Auto: fused where there is one, else multi-tensor. RMSprop and Adagrad go tensor by
    // tensor.
    enum class Kernels : uint8_t { Auto, PerTensor, MultiTensor, Fused };
    Kernels kernels = Kernels::Auto;
    // The values Adam's multi-tensor update takes in one pass, a tensor larger than that in
    // parts: its temporaries (the denominators, a weight decay's gradients) are that large, not
    // the model's size. The update is elementwise, so the parts give the same values.
    int64_t passValues = int64_t(16) << 20;
};

// Local-SGD's outer step (DiLoCo): SGD at `momentum`, Nesterov's where there is momentum (at 0
// it is plain SGD), no weight decay.
OptimizerConfig outerStepOptimizer(double momentum);

class Optimizer {
public:
    // `blockPhases`: for 8-bit AdamW, where each parameter's first value falls in its block of
    // the run's flat order (BlockwiseAdamW's phases; empty: `params` are that order's tensors).
    // A shard's owner steps pieces of tensors, each at its own place in the blocks.
    Optimizer(OptimizerConfig config, std::vector<at::Tensor> params,
              std::vector<int64_t> blockPhases = {});
    ~Optimizer();
    Optimizer(const Optimizer&) = delete;
    Optimizer& operator=(const Optimizer&) = delete;

    // One update with learning rate `lr`. grads[i] belongs to params[i]; an undefined
    // gradient leaves its parameter (and state) untouched, as torch.optim does. Each parameter
    // counts its own steps, so a step may also be taken in parts, each with the gradients of
    // some parameters: all but the last pass `counts` false, and stepCount() rises once.
    void step(const std::vector<at::Tensor>& grads, double lr, bool counts = true);

    int64_t stepCount() const { return m_steps; }

    // State by name ("exp_avg.3", ...) for the run checkpoint (the tensors themselves), as
    // records, and back.
    NamedTensors stateTensors() const;
    QList<TensorRecord> stateRecords() const;
    Status restore(int64_t steps, const QList<TensorRecord>& records);
    // The same from tensors, taken as they are where they are already the parameters' dtype and
    // device (not copied): state gathered for this optimizer alone is then held once.
    Status restore(int64_t steps, const NamedTensors& tensors);

    // What the last step ran as (Auto resolved; PerTensor for optimizers without the others).
    OptimizerConfig::Kernels kernelsUsed() const { return m_used; }

private:
    bool stepAll(const std::vector<at::Tensor>& grads, double lr);
    OptimizerConfig m_cfg;
    OptimizerConfig::Kernels m_used = OptimizerConfig::Kernels::PerTensor;
    std::vector<at::Tensor> m_params;
    std::unique_ptr<torch::optim::Optimizer> m_impl;
    std::unique_ptr<BlockwiseAdamW> m_blockwise; // AdamW8bit's, in place of m_impl
    int64_t m_steps = 0;
};

} // namespace tandem
