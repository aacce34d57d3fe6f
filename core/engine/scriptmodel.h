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

// A LibTorch exception as an error: `what` and the exception's first line.
Error torchError(const QString& what, const std::exception& e);

// Loads TorchScript saved from Python (torch.jit.save). This runs the file's code, so it is
// only ever called on a file the user chose or on bytes from a paired coordinator.
Expected<torch::jit::Module> loadScriptModule(const QString& path);
Expected<torch::jit::Module> loadScriptModule(const QByteArray& archive, const QString& name);
QByteArray saveScriptModule(const torch::jit::Module& module);

// The model as flat lists of named tensors, in the order named_parameters()/named_buffers()
// give. The tensors alias the module's own storage.
//
// `params` are the trainable parameters only: everything that computes, sends, combines or
// optimizes gradients works on them. A parameter the model's author froze (requires_grad
// false: a pretrained backbone, a LoRA base) is in `frozen`: it reaches a worker inside the
// model itself and is never sent, optimized or changed after that; checkpoints and exports
// carry it as it came.
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
ModelTensors modelTensors(const torch::jit::Module& module);

// "3290624 trainable parameters", and ", 20 frozen, which are never sent or changed" where
// some are, for the log.
QString describeParameters(const ModelTensors& t);

// Refuses a model with nothing to train (every parameter frozen), naming it.
Status checkTrainable(const ModelTensors& t, const QString& modelName);

// Makes `copy`'s parameters trainable exactly where `original`'s are. Module::deepcopy under
// NoGradGuard (the only way to copy without autograd history) clears requires_grad on every
// parameter, which would turn a frozen model's replica into one with nothing frozen or,
// worse, nothing trainable.
void copyTrainability(const torch::jit::Module& original, torch::jit::Module& copy);

// SHA-256 (hex) over parameter and buffer names, shapes and dtypes, and which parameters are
// frozen: two processes train the same model exactly when their schema hashes agree. A model
// with nothing frozen hashes as it did before frozen parameters were told apart.
QByteArray schemaHash(const ModelTensors& t);

// The LibTorch scalar type of a storage dtype.
at::ScalarType scalarTypeOf(DType d);

// Conversions between tensors and the storage layer's plain records.
TensorRecord toRecord(const std::string& name, const at::Tensor& t);
Expected<at::Tensor> fromRecord(const TensorRecord& r);

} // namespace tandem
