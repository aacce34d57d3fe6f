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
// whatever they hold is an error, never a crash. With `base`, a native transformer's frozen
// weights are those tensors, by name (a worker's cached base, or the folder a checkpoint was
// trained from), each checked against the archive's shape and dtype; every base weight the
// archive leaves out must be among them. `maxBytes` (0: no limit) is the memory this machine
// has for the model: a native transformer whose tensors would take more is refused with the
// figures before anything is allocated for them.
Expected<Model> modelFromArchive(const QByteArray& archive, const QString& name,
                                 const NamedTensors* base = nullptr, int64_t maxBytes = 0);

// A Hugging Face folder opened as the run that made `archive` (a native transformer's) opened
// its own, so that its base comes out as that run's did (quantized the same way): how a worker
// uses a copy of the model it holds already. ErrorCode::NotFound when the folder is another
// model.
Expected<Model> openFolderLikeArchive(const QString& dir, const QByteArray& archive);

} // namespace tandem
