#include "engine/step/batch.h"

#include "formats/tokenstream.h"

#include <cstring>

namespace tandem {

namespace {

// Window i's tokens from `offset` (0: the input, 1: the target) as an [n, context] batch.
at::Tensor gatherWindows(const Dataset& data, const std::vector<int64_t>& indices, int64_t offset,
                         bool pinned = false) {
    const int64_t context = data.sampleShape[0];
    at::Tensor out = at::empty({static_cast<int64_t>(indices.size()), context},
                               at::TensorOptions(at::kLong).pinned_memory(pinned));
    auto* dst = out.data_ptr<int64_t>();
    for (size_t i = 0; i < indices.size(); ++i)
        data.stream->copy(data.firstToken + indices[i] * context + offset, context,
                          dst + int64_t(i) * context);
    return out;
}

template <typename T>
at::Tensor gatherRows(const std::vector<T>& from, at::IntArrayRef shape, int64_t per,
                      const std::vector<int64_t>& indices, at::ScalarType type,
                      bool pinned = false) {
    at::Tensor out = at::empty(shape, at::TensorOptions(type).pinned_memory(pinned));
    auto* dst = static_cast<T*>(out.data_ptr());
    for (size_t i = 0; i < indices.size(); ++i)
        std::memcpy(dst + int64_t(i) * per, from.data() + indices[i] * per,
                    size_t(per) * sizeof(T));
    return out;
}

std::vector<int64_t> batchShape(const std::vector<int64_t>& indices,
                                const std::vector<int64_t>& perSample) {
    std::vector<int64_t> shape{static_cast<int64_t>(indices.size())};
    shape.insert(shape.end(), perSample.begin(), perSample.end());
    return shape;
}

// The rows as stored: images as bytes.
at::Tensor gatherStored(const Dataset& data, const std::vector<int64_t>& indices, bool pinned) {
    const std::vector<int64_t> shape = batchShape(indices, data.sampleShape);
    const int64_t per = data.sampleSize();
    switch (data.storage) {
    case Dataset::Storage::U8:
        return gatherRows(data.u8, shape, per, indices, at::kByte, pinned);
    case Dataset::Storage::F32:
        return gatherRows(data.f32, shape, per, indices, at::kFloat, pinned);
    case Dataset::Storage::I64:
        return gatherRows(data.i64, shape, per, indices, at::kLong, pinned);
    case Dataset::Storage::Windows:
        return gatherWindows(data, indices, 0, pinned);
    }
    return {};
}

// Stored inputs as the model takes them: images as floats in [0, 1], wherever they are.
at::Tensor asModelInputs(const Dataset& data, const at::Tensor& stored) {
    return data.storage == Dataset::Storage::U8 ? stored.to(at::kFloat).div_(255.0) : stored;
}

at::Tensor gatherTargetsInto(const Dataset& data, const std::vector<int64_t>& indices,
                             bool pinned) {
    if (data.storage == Dataset::Storage::Windows)
        return gatherWindows(data, indices, 1, pinned);
    const std::vector<int64_t> shape = batchShape(indices, data.targetShape);
    const int64_t per = data.targetSize();
    if (data.targets == Dataset::Targets::Values)
        return gatherRows(data.values, shape, per, indices, at::kFloat, pinned);
    return gatherRows(data.labels, shape, per, indices, at::kLong, pinned);
}

// A host tensor viewed over a vector's storage, without a copy.
template <typename T>
at::Tensor viewOf(const std::vector<T>& v, std::vector<int64_t> shape, at::ScalarType type) {
    return at::from_blob(const_cast<T*>(v.data()), shape, type);
}

} // namespace

at::Tensor gatherInputs(const Dataset& data, const std::vector<int64_t>& indices) {
    return asModelInputs(data, gatherStored(data, indices, false));
}

at::Tensor gatherTargets(const Dataset& data, const std::vector<int64_t>& indices) {
    return gatherTargetsInto(data, indices, false);
}

HostBatch gatherForDevice(const Dataset& data, const std::vector<int64_t>& indices,
                          const c10::Device& device) {
    const bool pinned = device.is_cuda();
    return {gatherStored(data, indices, pinned), gatherTargetsInto(data, indices, pinned)};
}

std::pair<at::Tensor, at::Tensor> toDevice(const Dataset& data, const HostBatch& batch,
                                           const c10::Device& device) {
    const bool async = batch.inputs.is_pinned();
    return {asModelInputs(data, batch.inputs.to(device, async)), batch.targets.to(device, async)};
}

int64_t ResidentRows::bytesFor(const Dataset& data) {
    const int64_t n = data.count();
    if (data.storage == Dataset::Storage::Windows)
        return (n * data.sampleShape[0] + 1) * int64_t(sizeof(int32_t));
    const int64_t in = data.storage == Dataset::Storage::U8    ? 1
                       : data.storage == Dataset::Storage::F32 ? 4
                                                               : 8;
    const int64_t out = data.targets == Dataset::Targets::Values ? 4 : 8;
    return n * (data.sampleSize() * in + std::max<int64_t>(1, data.targetSize()) * out);
}

ResidentRows::ResidentRows(const Dataset& data, const c10::Device& device)
    : m_data(data)
    , m_device(device) {
    const int64_t n = data.count();
    std::vector<int64_t> inShape{n}, outShape{n};
    inShape.insert(inShape.end(), data.sampleShape.begin(), data.sampleShape.end());
    outShape.insert(outShape.end(), data.targetShape.begin(), data.targetShape.end());
    switch (data.storage) {
    case Dataset::Storage::U8:
        m_inputs = viewOf(data.u8, inShape, at::kByte).to(device);
        break;
    case Dataset::Storage::F32:
        m_inputs = viewOf(data.f32, inShape, at::kFloat).to(device);
        break;
    case Dataset::Storage::I64:
        m_inputs = viewOf(data.i64, inShape, at::kLong).to(device);
        break;
    case Dataset::Storage::Windows: {
        // Every token a window or its target reads, as int32, a few million at a time.
        const int64_t tokens = n * data.sampleShape[0] + 1;
        at::Tensor host = at::empty({tokens}, at::kInt);
        constexpr int64_t kPart = int64_t(1) << 22;
        std::vector<int64_t> part(size_t(std::min(tokens, kPart)));
        for (int64_t from = 0; from < tokens; from += kPart) {
            const int64_t m = std::min(kPart, tokens - from);
            data.stream->copy(data.firstToken + from, m, part.data());
            host.narrow(0, from, m).copy_(at::from_blob(part.data(), {m}, at::kLong));
        }
        m_inputs = host.to(device);
        return;
    }
    }
    m_targets = data.targets == Dataset::Targets::Values
                    ? viewOf(data.values, outShape, at::kFloat).to(device)
                    : viewOf(data.labels, outShape, at::kLong).to(device);
}

std::pair<at::Tensor, at::Tensor> ResidentRows::batch(const std::vector<int64_t>& indices) const {
    const int64_t n = int64_t(indices.size());
    at::Tensor host =
        at::empty({n}, at::TensorOptions(at::kLong).pinned_memory(m_device.is_cuda()));
    std::memcpy(host.data_ptr<int64_t>(), indices.data(), size_t(n) * sizeof(int64_t));
    const at::Tensor idx = host.to(m_device, host.is_pinned());
    if (m_data.storage == Dataset::Storage::Windows)
        return {windows(idx, 0), windows(idx, 1)};
    return {asModelInputs(m_data, m_inputs.index_select(0, idx)), m_targets.index_select(0, idx)};
}

at::Tensor ResidentRows::windows(const at::Tensor& indices, int64_t offset) const {
    const int64_t context = m_data.sampleShape[0];
    const at::Tensor positions =
        (indices * context + offset).unsqueeze(1) + at::arange(context, indices.options());
    return m_inputs.take(positions).to(at::kLong);
}

} // namespace tandem
