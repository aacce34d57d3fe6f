#pragma once

// A Hugging Face model folder as one GGUF file, for llama.cpp, Ollama and LM Studio (GPT-2,
// Llama, Mistral, Qwen2, Qwen3, SmolLM3, Gemma 3 and Phi-3, with byte-level BPE or
// SentencePiece tokenizers): the architecture and its hyperparameters under llama.cpp's own
// names and keys, the tensors under llama.cpp's names with the transformations its converter
// applies (Llama's q/k rows permuted for its RoPE layout, GPT-2's Conv1D weights transposed,
// Llama 3's RoPE frequency factors and Phi-3's LongRoPE factors as tensors), the tokenizer
// (vocabulary, token types, merges, the pre-tokenizer's llama.cpp name, special ids, whether a
// BOS is added, the chat template), and general.* metadata naming the base model and Tandem. A
// family or tokenizer that GGUF cannot express as llama.cpp reads it is refused by name before a
// byte is written, and the file is written under a temporary name and renamed, so a failed
// export leaves nothing behind.

#include "common/expected.h"

#include <QString>
#include <QStringList>

#include <cstdint>
#include <functional>
#include <vector>

namespace tandem {

// How the weights are stored: F16, BF16, Q8_0 (ggml's blocks of 32 with one scale each), or
// Q4_K_M (4-bit k-quants, with the tensors llama.cpp's own quantizer keeps at more bits kept so:
// the output layer in Q6_K, and the value projections and MLP down projections of the first and
// last eighth of the blocks and of every third block between in Q6_K). Norms, biases and other
// one-dimensional tensors stay F32, as llama.cpp keeps them; a tensor whose rows are no whole
// number of its type's blocks falls back as llama.cpp's quantizer falls back, and is named.
enum class GgufQuant : uint8_t { F16, BF16, Q8_0, Q4_K_M };
QString ggufQuantName(GgufQuant q); // "q8_0"
bool ggufQuantFromName(const QString& name, GgufQuant* out);
QStringList ggufQuantNames();

struct GgufOptions {
    GgufQuant quant = GgufQuant::F16;
    QString name;      // general.name; the folder's name when empty
    QString baseModel; // general.base_model.0.name, where known
    int64_t loraRank = 0;
    double loraAlpha = 0;
    std::function<void(const QString&)> log; // progress lines, for people
};

// Writes DIR (config.json, its safetensors, tokenizer.json and tokenizer_config.json) to OUT.
Status exportGgufFromFolder(const QString& dir, const QString& out, const GgufOptions& options);

// The size of the file exportGgufFromFolder would write in each of `quants`, from DIR's shapes
// alone (nothing of the weights is read): what the app shows beside each quantization.
Expected<std::vector<int64_t>> ggufExportBytes(const QString& dir,
                                               const std::vector<GgufQuant>& quants);

} // namespace tandem
