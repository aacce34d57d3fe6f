#pragma once

#include "model/internal.h"

// Model-internal: the one place that turns model names and files into TorchScript modules, and
// the model (model.h) they make: the built-ins and a user's torch.jit.save file.

#include "common/expected.h"
#include "model/model.h"

#include <QByteArray>
#include <QString>

#include <torch/script.h>

namespace tandem {

// The built-in zoo. Each is built as a TorchScript module with registered parameters and
// submodules, so it trains, checkpoints and exports through the same path as a user's own
// scripted model, and its parameter names match the torch.nn definition in the docs.
// Parameters are initialised as torch.nn initialises them, from `seed`.
Expected<torch::jit::Module> buildZooModel(const QString& name, uint64_t seed);

// Loads TorchScript saved from Python (torch.jit.save). This runs the file's code, so it is only
// ever called on a file the user chose or on bytes from a paired coordinator.
Expected<torch::jit::Module> loadScriptModule(const QString& path);
Expected<torch::jit::Module> loadScriptModule(const QByteArray& archive, const QString& name);
QByteArray saveScriptModule(const torch::jit::Module& module);

// A built-in (from `seed`) or a TorchScript file, as a model.
Expected<Model> openScriptModel(const ModelSource& source, uint64_t seed);
Expected<Model> scriptModelFromArchive(const QByteArray& archive, const QString& name);
// The module of a TorchScript model, or null: for the model library's own code and tests.
torch::jit::Module* scriptOf(const Model& model);

// Makes `copy`'s parameters trainable exactly where `original`'s are. Module::deepcopy under
// NoGradGuard (the only way to copy without autograd history) clears requires_grad on every
// parameter, which would turn a frozen model's replica into one with nothing frozen or, worse,
// nothing trainable.
void copyTrainability(const torch::jit::Module& original, torch::jit::Module& copy);

} // namespace tandem
