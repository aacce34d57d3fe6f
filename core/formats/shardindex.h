#pragma once

// A sharded safetensors model: model.safetensors.index.json's weight_map, which names the shard
// file of each tensor, and the check of the shards' own directories against it. Free of
// LibTorch, so that what a downloaded index may say is checked (and fuzzed) before any shard is
// mapped into tensors.

#include "common/expected.h"

#include <QMap>
#include <QString>
#include <QStringList>

namespace tandem {

// The shard files an index names, each with the tensors it puts there. An index that is not a
// JSON object with a weight_map, or that names a file outside the folder, is refused naming
// `name` and what it says.
Expected<QMap<QString, QStringList>> readShardIndex(const QByteArray& bytes, const QString& name);

// Checks the tensors each shard holds (`held`, by shard file, as their directories list them)
// against the index (`index`, readShardIndex's): a tensor in a shard the index does not put it
// in, a name in two shards, or one the index names that no shard holds is refused naming it.
Status checkShards(const QMap<QString, QStringList>& index, const QMap<QString, QStringList>& held,
                   const QString& name);

} // namespace tandem
