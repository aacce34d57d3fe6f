#pragma once

// Engine-internal: generation with a Hugging Face model already built, for generation.cpp,
// which has loaded a run checkpoint's model and should not load it again.

#include "engine/generation.h"
#include "engine/model.h"

namespace tandem {

// generateWithTokenizer() for `model`, whose tokenizer and chat template are in `folder`.
Status generateHf(const Model& model, const QString& folder, const GenerateOptions& options,
                  const std::function<bool(const QByteArray&)>& onText);

} // namespace tandem
