#pragma once

#include "model/internal.h"

// Model-internal: the tokenizer of a Hugging Face folder as GGUF's tokenizer.ggml.* keys
// (ggufvocab.cpp).

#include "common/expected.h"

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <vector>

namespace tandem {

struct GgufVocab {
    QString model; // tokenizer.ggml.model: "gpt2"
    QString pre;   // tokenizer.ggml.pre: "llama-bpe", "qwen2", "gpt-2"
    std::vector<QByteArray> tokens;
    std::vector<int64_t> types;
    std::vector<QByteArray> merges;
    int32_t bos = -1, eos = -1, pad = -1;
    bool addBos = false, addEos = false;
    QString chatTemplate;
};

// DIR's tokenizer as GGUF holds it, with `vocabSize` entries (config.json's vocab_size). A
// tokenizer llama.cpp would read differently is refused by name.
Expected<GgufVocab> ggufVocabOf(const QString& dir, int64_t vocabSize);

} // namespace tandem
