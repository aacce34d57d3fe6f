#pragma once

#include "engine/internal.h"

// Engine-internal: AdamW with its two moments held in 8 bits a value, in blocks of 256 values
// that each keep their largest magnitude in fp32 (Dettmers et al., "8-bit Optimizers via
// Block-wise Quantization", ICLR 2022: the dynamic-tree maps, block-wise absmax). Each step
// reads a block's moments back to fp32, takes AdamW's update there (PyTorch's arithmetic,
// decoupled weight decay), and stores them again, each moment as the nearest of the map's 256
// values times the block's new largest magnitude. The state is 2 bytes a value and 8 a block,
// a quarter of AdamW's 8 bytes, for a full fine-tune that would not fit otherwise.
//
// The blocks are laid over the run's flat order of trainable values (the gradient bundle's,
// shardowner.h's ShardLayout), not over each tensor: block k holds the values [256k, 256k + 256)
// of that order, cut where a tensor ends. `phases` says where each parameter's first value falls
// in its block, so that a tensor handed over in parts, each with its own phase, takes the steps
// the whole tensor would.

#include "common/expected.h"
#include "model/tensors.h"

#include <ATen/ATen.h>

#include <vector>

namespace tandem {

class BlockwiseAdamW {
public:
    static constexpr int64_t kBlock = 256;

    // OptimizerConfig's fields for AdamW.
    struct Options {
        double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0.01;
        int64_t passValues = int64_t(16) << 20; // the most values a pass's temporaries hold
        // On the CPU, one loop over each block that reads, updates and stores its values in
        // place (a fifth of the time), rather than tensor operations over a pass.
        bool cpuLoop = true;
    };

    // `phases[i]`: the place in its block of params[i]'s first value, 0 to kBlock - 1 (empty:
    // the flat order of `params` themselves, the last one first, as ShardLayout lays them).
    BlockwiseAdamW(const Options& options, std::vector<at::Tensor> params,
                   std::vector<int64_t> phases = {});

    // One update; an undefined gradient leaves its parameter and state alone. Each parameter
    // counts its own steps, as torch.optim's do. Temporaries are at most `passValues` values.
    void step(const std::vector<at::Tensor>& grads, double lr);

    // "exp_avg.3" and "exp_avg_sq.3" (the codes, uint8, the parameter's shape),
    // "exp_avg_absmax.3" and "exp_avg_sq_absmax.3" (fp32, one a block), "step.3".
    NamedTensors stateTensors() const;
    // Takes the names above back. fp32 moments ("exp_avg.3" of the parameter's dtype, with no
    // absmax: a full-precision Adam's checkpoint) are quantized as they are taken.
    Status restore(const NamedTensors& tensors);

    // Blocks of a parameter of `values` values whose first one is at `phase` in its block.
    static int64_t blocksOf(int64_t values, int64_t phase);
    // The phase of each of `params` in their flat order (the last one first).
    static std::vector<int64_t> flatPhases(const std::vector<at::Tensor>& params);
    // The maps' 256 values, ascending: signed (the first moment) or not (the second).
    static const std::vector<float>& map(bool signedMap);

private:
    struct State {
        at::Tensor m, v;       // uint8 codes, flat
        at::Tensor mMax, vMax; // fp32 absmax, one a block
        int64_t step = 0;
    };
    void stepOne(size_t i, const at::Tensor& grad, double lr);
    // The same on the CPU, block by block (Options::cpuLoop). False where it does not apply.
    bool stepOnCpu(size_t i, const at::Tensor& grad, double lr, double bias1, double bias2);
    State emptyState(size_t i) const;
    State& stateOf(size_t i);

    double m_beta1, m_beta2, m_eps, m_weightDecay;
    int64_t m_passValues;
    bool m_cpuLoop;
    std::vector<at::Tensor> m_params;
    std::vector<int64_t> m_phases;
    std::vector<State> m_state;
};

} // namespace tandem
