#pragma once

#include "engine/internal.h"

// Engine-internal: a Hugging Face model folder's weights: model.safetensors, or the shards
// that model.safetensors.index.json maps each tensor to. Plain bytes (TensorRecord); the
// transformer (transformer.h) checks every name and shape against its config.

#include "common/expected.h"
#include "formats/tensorfile.h"

namespace tandem {

// Every tensor of the folder, by its Hugging Face name. A shard the index names that is
// missing, a tensor in a shard the index does not put there, or a name in two shards is
// refused naming it.
Expected<QList<TensorRecord>> readHfWeights(const QString& dir);

} // namespace tandem
