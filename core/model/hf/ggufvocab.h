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
    QString model; // tokenizer.ggml.model: "gpt2" (byte-level BPE) or "llama" (SentencePiece)
    QString pre;   // tokenizer.ggml.pre: "llama-bpe", "qwen2", "gpt-2" (gpt2 only)
    std::vector<QByteArray> tokens;
    std::vector<int64_t> types;
    std::vector<QByteArray> merges; // gpt2
    std::vector<double> scores;     // llama: the higher, the sooner a pair merges into it
    bool addSpacePrefix = false;    // llama: a "▁" goes before the text
    int32_t bos = -1, eos = -1, pad = -1, unk = -1;
    bool addBos = false, addEos = false;
    QString chatTemplate;
};

// DIR's tokenizer as GGUF holds it, with `vocabSize` entries (config.json's vocab_size). A
// tokenizer llama.cpp would read differently is refused by name.
Expected<GgufVocab> ggufVocabOf(const QString& dir, int64_t vocabSize);

} // namespace tandem
