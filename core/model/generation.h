#pragma once

#include "model/internal.h"

// Model-internal: what one generation holds, apart from the model. A GenerationSession owns the
// tokens so far (a transformer's KV cache, a byte-level model's window); a Sampler owns the
// temperature, top-p and the seed's generator. The model holds weights only, so any number of
// sessions (Try it… and an evaluation, say) may use one model at once, each on its own thread.

#include "common/expected.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <random>
#include <vector>

namespace tandem {

class GenerationSession {
public:
    virtual ~GenerationSession() = default;
    // The scores (fp32, on the CPU) of the token after `ids`, which the session then holds as
    // well. InvalidArgument for ids the model cannot take, Incompatible for a model whose output
    // is not next-token scores, OutOfMemory or Runtime for what LibTorch throws.
    virtual Expected<at::Tensor> next(const std::vector<int64_t>& ids) = 0;
    // The tokens held so far.
    virtual int64_t length() const = 0;
    // The most it may hold (0: no limit; a byte-level model's window slides instead).
    virtual int64_t limit() const = 0;
};

// Picks the next token: the likeliest at temperature 0, else a draw from softmax(logits / T)
// among the likeliest tokens whose probabilities add up to top_p, from the sampler's own
// generator, so that a seed gives the same text on every platform.
class Sampler {
public:
    Sampler(double temperature, double topP, uint64_t seed);
    int64_t pick(const at::Tensor& logits);

private:
    double m_temperature;
    double m_topP;
    std::mt19937_64 m_rng;
};

} // namespace tandem
