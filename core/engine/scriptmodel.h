#pragma once

#include "engine/internal.h"

// Engine-internal: the one place that turns model names and files into TorchScript modules.

#include "common/expected.h"
#include "formats/tensorfile.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <torch/script.h>

#include <vector>

namespace tandem {

// The built-in zoo. Each is built as a TorchScript module with registered parameters and
// submodules, so it trains, checkpoints and exports through the same path as a user's own
// scripted model, and its parameter names match the torch.nn definition in the docs.
QStringList zooModelNames();
bool isZooModel(const QString& name);
// Parameters are initialised as torch.nn initialises them, from `seed`.
Expected<torch::jit::Module> buildZooModel(const QString& name, uint64_t seed);

// Loads TorchScript saved from Python (torch.jit.save). This runs the file's code, so it is
// only ever called on a file the user chose or on bytes from a paired coordinator.
Expected<torch::jit::Module> loadScriptModule(const QString& path);
Expected<torch::jit::Module> loadScriptModule(const QByteArray& archive, const QString& name);
QByteArray saveScriptModule(const torch::jit::Module& module);

// The model as a flat list of named tensors, in the order named_parameters()/named_buffers()
// give. The tensors alias the module's own storage.
struct ModelTensors {
    std::vector<std::string> paramNames;
    std::vector<at::Tensor> params;
    std::vector<std::string> bufferNames;
    std::vector<at::Tensor> buffers;
};
ModelTensors modelTensors(const torch::jit::Module& module);

// SHA-256 (hex) over parameter and buffer names, shapes and dtypes: two processes train the
// same model exactly when their schema hashes agree.
QByteArray schemaHash(const ModelTensors& t);

// The LibTorch scalar type of a storage dtype.
at::ScalarType scalarTypeOf(DType d);

// Conversions between tensors and the storage layer's plain records.
TensorRecord toRecord(const std::string& name, const at::Tensor& t);
Expected<at::Tensor> fromRecord(const TensorRecord& r);

} // namespace tandem
