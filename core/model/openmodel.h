#pragma once

#include "model/internal.h"

// The model library's factory, above both model kinds: the one place that turns what a user
// named, or the bytes a peer or a checkpoint holds, into a model of the right kind.

#include "common/expected.h"
#include "model/model.h"

namespace tandem {

// The model `source` names (a built-in, a TorchScript file or a Hugging Face folder; a run
// checkpoint is the engine's to open), with `options`.
Expected<Model> openModel(const ModelSource& source, const ModelOptions& options);

// Rebuilds a model from Model::archive(): a TorchScript archive or a native transformer's,
// told apart by what the bytes are. Without weights, a native transformer's tensors are
// allocated and left for the caller to fill. `name` is used in messages. Bytes from a peer:
// whatever they hold is an error, never a crash.
Expected<Model> modelFromArchive(const QByteArray& archive, const QString& name);

} // namespace tandem
