#pragma once

#include "model/internal.h"

// Model-internal: a Hugging Face model folder's weights, model.safetensors or the shards that
// model.safetensors.index.json maps each tensor to, as tensors over the memory-mapped files:
// nothing is read or copied until a tensor is used, and a file stays mapped (privately: writes
// never reach it) while any tensor over it lives. A frozen base on the CPU computes straight from
// the mapping; a move to a GPU copies each tensor once, from the mapping to the device; weights
// that train are copied once, into their fp32 masters.

#include "common/expected.h"
#include "model/tensors.h"

namespace tandem {

// Every tensor of the folder, by its Hugging Face name, in the files' order. A shard the index
// names that is missing, a tensor in a shard the index does not put there, or a name in two
// shards is refused naming it. A tensor whose bytes do not start on its element size is copied
// (safetensors does not promise alignment).
Expected<NamedTensors> mapHfWeights(const QString& dir);

// Drops the pages under `t` from memory where it lies in one of those mappings, so that a weight
// read once (quantized at load) stops counting against the process; they are read from the file
// again if anything reads them. Nothing for a tensor elsewhere.
void dropMappedPages(const at::Tensor& t);

} // namespace tandem
