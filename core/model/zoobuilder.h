#pragma once

#include "model/internal.h"

// Model-internal: what the built-in models are made of. Each piece is a TorchScript module with
// registered parameters, so a built-in trains, checkpoints and exports through the same path as
// a user's own scripted model.

#include <torch/script.h>

#include <cmath>
#include <random>
#include <string>

namespace tandem {

// Creates modules whose class names are unique within one model: TorchScript serialises
// every class under its qualified name, so two different Conv2d definitions must not share
// one.
class ZooBuilder {
public:
    using Module = torch::jit::Module;

    ZooBuilder(std::string model, uint64_t seed)
        : m_model(std::move(model))
        , m_gen(seed) {}

    Module module(const std::string& cls) {
        Module m(c10::QualifiedName("__torch__.tandem." + m_model + "." + cls + "_" +
                                    std::to_string(m_counter++)));
        // Module::train()/eval() flip this attribute on every submodule.
        m.register_attribute("training", c10::BoolType::get(), true);
        return m;
    }

    // torch.nn's default for Linear and Conv2d: kaiming_uniform(a=sqrt(5)) for the weight,
    // which is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same bound for the bias.
    at::Tensor uniform(at::IntArrayRef shape, int64_t fanIn) {
        const double bound = 1.0 / std::sqrt(static_cast<double>(fanIn));
        at::Tensor t = at::empty(shape, at::kFloat);
        float* p = t.data_ptr<float>();
        for (int64_t i = 0; i < t.numel(); ++i) {
            // Our own mapping from the 64-bit generator, so that weights are the same on every
            // standard library (distribution implementations differ between them).
            const double u = static_cast<double>(m_gen() >> 11) * (1.0 / 9007199254740992.0);
            p[i] = static_cast<float>((2.0 * u - 1.0) * bound);
        }
        return t;
    }

    // N(0, std²) from the same generator, by Box–Muller: GPT-2's initialisation.
    at::Tensor normal(at::IntArrayRef shape, double std) {
        at::Tensor t = at::empty(shape, at::kFloat);
        float* p = t.data_ptr<float>();
        for (int64_t i = 0; i < t.numel(); i += 2) {
            const double u1 =
                (static_cast<double>(m_gen() >> 11) + 1.0) * (1.0 / 9007199254740993.0);
            const double u2 = static_cast<double>(m_gen() >> 11) * (1.0 / 9007199254740992.0);
            const double r = std::sqrt(-2.0 * std::log(u1)) * std;
            p[i] = static_cast<float>(r * std::cos(2.0 * M_PI * u2));
            if (i + 1 < t.numel())
                p[i + 1] = static_cast<float>(r * std::sin(2.0 * M_PI * u2));
        }
        return t;
    }

    // A Linear whose weight is N(0, std²) and whose bias is zero (GPT-2's).
    Module linearNormal(int64_t in, int64_t out, double std) {
        Module m = module("Linear");
        m.register_parameter("weight", normal({out, in}, std).requires_grad_(true), false);
        m.register_parameter("bias", at::zeros({out}).requires_grad_(true), false);
        m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    return torch.linear(x, self.weight, self.bias)
)");
        return m;
    }

    Module layerNorm(int64_t c) {
        Module m = module("LayerNorm");
        m.register_parameter("weight", at::ones({c}).requires_grad_(true), false);
        m.register_parameter("bias", at::zeros({c}).requires_grad_(true), false);
        m.define("def forward(self, x: Tensor) -> Tensor:\n"
                 "    return torch.layer_norm(x, [" +
                 std::to_string(c) + "], self.weight, self.bias, 1e-05, False)\n");
        return m;
    }

    Module embedding(int64_t count, int64_t dim, double std) {
        Module m = module("Embedding");
        m.register_parameter("weight", normal({count, dim}, std).requires_grad_(true), false);
        m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    return torch.embedding(self.weight, x)
)");
        return m;
    }

    Module linear(int64_t in, int64_t out) {
        Module m = module("Linear");
        m.register_parameter("weight", uniform({out, in}, in).requires_grad_(true), false);
        m.register_parameter("bias", uniform({out}, in).requires_grad_(true), false);
        m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    return torch.linear(x, self.weight, self.bias)
)");
        return m;
    }

    Module conv2d(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad, bool bias) {
        Module m = module("Conv2d");
        const int64_t fanIn = in * k * k;
        m.register_parameter("weight", uniform({out, in, k, k}, fanIn).requires_grad_(true), false);
        if (bias)
            m.register_parameter("bias", uniform({out}, fanIn).requires_grad_(true), false);
        const std::string s = std::to_string(stride), p = std::to_string(pad);
        m.define("def forward(self, x: Tensor) -> Tensor:\n"
                 "    return torch.conv2d(x, self.weight, " +
                 std::string(bias ? "self.bias" : "None") + ", [" + s + ", " + s + "], [" + p +
                 ", " + p + "], [1, 1], 1)\n");
        return m;
    }

    Module batchNorm2d(int64_t c) {
        Module m = module("BatchNorm2d");
        m.register_parameter("weight", at::ones({c}).requires_grad_(true), false);
        m.register_parameter("bias", at::zeros({c}).requires_grad_(true), false);
        m.register_buffer("running_mean", at::zeros({c}));
        m.register_buffer("running_var", at::ones({c}));
        m.register_buffer("num_batches_tracked", at::zeros({}, at::kLong));
        m.define(R"(
def forward(self, x: Tensor) -> Tensor:
    if self.training:
        self.num_batches_tracked.add_(1)
    return torch.batch_norm(x, self.weight, self.bias, self.running_mean, self.running_var,
                            self.training, 0.1, 1e-05, False)
)");
        return m;
    }

private:
    std::string m_model;
    std::mt19937_64 m_gen;
    int m_counter = 0;
};

} // namespace tandem
