#pragma once

// What the engine's unit tests share: zoo models, random images, index ranges and the CPU
// device.

#include "engine/devices.h"
#include "engine/step/batch.h"
#include "engine/step/replica.h"
#include "engine/training.h"
#include "engine/wire/workwire.h"
#include "model/scriptmodel.h"

#include <QRandomGenerator>

#include <string>
#include <utility>
#include <vector>

namespace tandem::testing {

inline std::vector<std::pair<std::string, std::vector<int64_t>>>
shapes(const torch::jit::Module& m) {
    std::vector<std::pair<std::string, std::vector<int64_t>>> out;
    for (const auto& p : m.named_parameters(true))
        out.emplace_back(p.name, p.value.sizes().vec());
    return out;
}

// The layout of `params` as a model's trainable tensors named p0, p1, ...
inline ModelLayout namedLayout(const std::vector<at::Tensor>& params) {
    std::vector<std::string> names;
    for (size_t i = 0; i < params.size(); ++i)
        names.push_back("p" + std::to_string(i));
    return ModelLayout::of(names, params, {}, {});
}

inline torch::jit::Module zoo(const char* name, uint64_t seed = 0) {
    auto m = buildZooModel(QLatin1String(name), seed);
    if (!m)
        qFatal("%s", qPrintable(m.error().message));
    return *m;
}

// n random 28x28 images with labels in 0..9, as a Fashion-MNIST stand-in.
inline std::shared_ptr<const Dataset> randomImages(int64_t n, uint64_t seed = 1,
                                                   std::vector<int64_t> shape = {1, 28, 28}) {
    auto d = std::make_shared<Dataset>();
    d->sampleShape = shape;
    QRandomGenerator rng{quint32(seed)};
    d->u8.resize(size_t(n * d->sampleSize()));
    for (uint8_t& v : d->u8)
        v = uint8_t(rng.bounded(256));
    for (int64_t i = 0; i < n; ++i)
        d->labels.push_back(int64_t(rng.bounded(10)));
    return d;
}

inline std::vector<int64_t> iota(int64_t n) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        v[size_t(i)] = i;
    return v;
}

inline DeviceInfo cpuDevice() {
    return detectDevices().last();
}

inline at::Tensor scalarParam(std::initializer_list<float> v) {
    return at::tensor(std::vector<float>(v));
}

} // namespace tandem::testing
