#pragma once

#include "model/internal.h"

// Model-internal: a Hugging Face folder as a model a run trains (model.h). Its archive is
// Tandem's checkpoint container (formats/tensorfile.h) holding config.json, the adapters'
// settings, whether blocks recompute their activations, and the tensors by Hugging Face name: no
// code, so a worker builds the same transformer from it without running anything a peer sent.

#include "common/expected.h"
#include "model/model.h"

namespace tandem {

class HfTransformer;

// Reads DIR's config.json and maps its weights. With `options.lora`, adapters go on the layers
// it targets, drawn from the seed, and the base weights stay frozen in the checkpoint's dtype
// (on the CPU, straight from the mapped file); without, every weight trains, as fp32.
Expected<Model> openHfModel(const QString& dir, const ModelOptions& options);

// A model archive that holds a native transformer (and not TorchScript's zip).
bool isHfArchive(const QByteArray& archive);
// `base`: the frozen weights the archive leaves out (openmodel.h's modelFromArchive).
// `maxBytes` (0: no limit): the most its tensors may take here.
Expected<Model> hfModelFromArchive(const QByteArray& archive, const QString& name,
                                   const NamedTensors* base = nullptr, int64_t maxBytes = 0);

// The Hugging Face folder `dir` opened as the run that made `archive` opened its own: with the
// adapters' settings the archive holds, so that its base is quantized as that run's was. Refused
// (ErrorCode::NotFound) when the folder's config.json is not the archive's.
Expected<Model> openHfFolderAs(const QString& dir, const QByteArray& archive);

// The transformer of a model built from a Hugging Face folder, or null: for the model library's
// own code and tests.
const HfTransformer* transformerOf(const Model& model);
HfTransformer* transformerOf(Model& model);

// The tokenizer's and generation's files of `sourceDir` that exist, copied into `dir`.
Status copyCompanionFiles(const QString& sourceDir, const QString& dir);

} // namespace tandem
