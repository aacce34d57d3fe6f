#pragma once

#include "model/internal.h"

// Model-internal: a model's tensors as the engine sees them, and the conversions between
// tensors and the storage layer's plain records (formats/tensorfile.h), which carry no LibTorch.

#include "common/expected.h"
#include "formats/tensorfile.h"

#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

namespace tandem {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// The model as flat lists of named tensors, in the model's own order. The tensors alias the
// model's own storage.
//
// `params` are the trainable parameters only: everything that computes, sends, combines or
// optimizes gradients works on them. A parameter the model's author froze (requires_grad false:
// a pretrained backbone, a LoRA base) is in `frozen`: it reaches a worker inside the model
// itself and is never sent, optimized or changed after that; checkpoints and exports carry it as
// it came.
struct ModelTensors {
    std::vector<std::string> paramNames;
    std::vector<at::Tensor> params;
    std::vector<std::string> frozenNames;
    std::vector<at::Tensor> frozen;
    std::vector<std::string> bufferNames;
    std::vector<at::Tensor> buffers;

    int64_t trainableCount() const;
    int64_t frozenCount() const;
};

// "3290624 trainable parameters", and ", 20 frozen, which are never sent or changed" where
// some are, for the log.
QString describeParameters(const ModelTensors& t);

// Refuses a model with nothing to train (every parameter frozen), naming it.
Status checkTrainable(const ModelTensors& t, const QString& modelName);

// Every tensor of one safetensors file, over its private mapping (read-only to the tensors'
// users: writes never reach the file), in the file's order; the file stays mapped while any of
// them lives. Nothing is read until a tensor is used.
Expected<NamedTensors> mapSafetensorsFile(const QString& path);

// SHA-256 (hex) over parameter and buffer names, shapes and dtypes, and which parameters are
// frozen: two processes train the same model exactly when their schema hashes agree. A model
// with nothing frozen hashes as it did before frozen parameters were told apart.
QByteArray schemaHash(const ModelTensors& t);

// A LibTorch exception as an error: `what` and the exception's first line.
Error torchError(const QString& what, const std::exception& e);
// The first line of a LibTorch exception: the rest is a C++ backtrace.
QString firstLine(const std::exception& e);

// The LibTorch scalar type of a storage dtype.
at::ScalarType scalarTypeOf(DType d);
// The storage dtype of a scalar type, or false for one storage has not.
bool dtypeOf(at::ScalarType s, DType* out);

// Conversions between tensors and the storage layer's plain records.
TensorRecord toRecord(const std::string& name, const at::Tensor& t);
// `t` as a lazy record: its bytes are read where it lies (shared, not copied) when a writer
// asks for them, where it is a contiguous CPU tensor of a storage dtype; copied then otherwise.
// It holds `t`, which must not change until they are written.
LazyTensor toLazy(const std::string& name, const at::Tensor& t);
Expected<at::Tensor> fromRecord(const TensorRecord& r);
// The tensor a lazy one reads (openCheckpoint): refused when fewer or more bytes come than its
// shape holds.
Expected<at::Tensor> readLazy(const LazyTensor& t);
// Values [offset, offset + n) of the lazy tensor `t`, flattened: only their bytes are read where
// it can read a part (LazyTensor::part), all of it otherwise. Refused outside the tensor.
Expected<at::Tensor> readLazyPart(const LazyTensor& t, int64_t offset, int64_t n);

} // namespace tandem
