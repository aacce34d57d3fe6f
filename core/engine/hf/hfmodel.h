#pragma once

#include "engine/internal.h"

// Engine-internal: a Hugging Face folder as a model a run trains (engine/model.h). Its archive
// is Tandem's checkpoint container (formats/tensorfile.h) holding config.json, the adapters'
// settings, whether blocks recompute their activations, and the tensors by Hugging Face name:
// no code, so a worker builds the same transformer from it without running anything a peer
// sent.

#include "common/expected.h"
#include "engine/model.h"

namespace tandem {

// Reads DIR's config.json and weights. With `loraSpec` (--lora), adapters go on the layers it
// targets, drawn from `seed`, and the base weights stay frozen in the checkpoint's dtype;
// without, every weight trains, as fp32.
Expected<Model> openHfModel(const QString& dir, const QString& loraSpec, bool checkpointActivations,
                            uint64_t seed);

bool isHfArchive(const QByteArray& archive);

class HfTransformer;
// What a run leaves in `outDir` for a Hugging Face model: RunFiles::hfModel(), the model as a
// Hugging Face folder (adapters merged), and with adapters RunFiles::adapter(), PEFT's folder.
// `sourceDir` is the folder the model came from: its tokenizer and generation settings are
// copied beside the weights, so the folder works on its own.
Status exportHfModel(const HfTransformer& model, const QString& outDir, const QString& sourceDir);

// The tokenizer's and generation's files of `sourceDir` that exist, copied into `dir`.
Status copyCompanionFiles(const QString& sourceDir, const QString& dir);
Expected<Model> hfModelFromArchive(const QByteArray& archive, const QString& name);

} // namespace tandem
