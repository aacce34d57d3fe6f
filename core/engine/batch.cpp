#include "engine/batch.h"

#include "formats/tokenstream.h"

namespace tandem {

namespace {

// Window i's tokens from `offset` (0: the input, 1: the target) as an [n, context] batch.
at::Tensor gatherWindows(const Dataset& data, const std::vector<int64_t>& indices, int64_t offset) {
    const int64_t context = data.sampleShape[0];
    at::Tensor out = at::empty({static_cast<int64_t>(indices.size()), context}, at::kLong);
    auto* dst = out.data_ptr<int64_t>();
    for (size_t i = 0; i < indices.size(); ++i)
        data.stream->copy(data.firstToken + indices[i] * context + offset, context,
                          dst + int64_t(i) * context);
    return out;
}

template <typename T>
at::Tensor gatherRows(const std::vector<T>& from, at::IntArrayRef shape, int64_t per,
                      const std::vector<int64_t>& indices, at::ScalarType type) {
    at::Tensor out = at::empty(shape, type);
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

} // namespace

at::Tensor gatherInputs(const Dataset& data, const std::vector<int64_t>& indices) {
    const std::vector<int64_t> shape = batchShape(indices, data.sampleShape);
    const int64_t per = data.sampleSize();
    switch (data.storage) {
    case Dataset::Storage::U8:
        return gatherRows(data.u8, shape, per, indices, at::kByte).to(at::kFloat).div_(255.0);
    case Dataset::Storage::F32:
        return gatherRows(data.f32, shape, per, indices, at::kFloat);
    case Dataset::Storage::I64:
        return gatherRows(data.i64, shape, per, indices, at::kLong);
    case Dataset::Storage::Windows:
        return gatherWindows(data, indices, 0);
    }
    return {};
}

at::Tensor gatherTargets(const Dataset& data, const std::vector<int64_t>& indices) {
    if (data.storage == Dataset::Storage::Windows)
        return gatherWindows(data, indices, 1);
    const std::vector<int64_t> shape = batchShape(indices, data.targetShape);
    const int64_t per = data.targetSize();
    if (data.targets == Dataset::Targets::Values)
        return gatherRows(data.values, shape, per, indices, at::kFloat);
    return gatherRows(data.labels, shape, per, indices, at::kLong);
}

} // namespace tandem
