#pragma once

#include "model/internal.h"

// Model-internal: which llama.cpp architecture a Hugging Face family is written as, what of a
// config that architecture cannot say (a refusal by name), and the metadata it reads, each key
// under llama.cpp's name and in the type its loader asks for (ggufarch.cpp). The tensors
// themselves are ggufexport.cpp's.

#include "common/expected.h"
#include "formats/gguf.h"
#include "model/ggufexport.h"

#include <QString>

#include <cstdint>
#include <vector>

namespace tandem {

struct HfConfig;
struct GgufVocab;
struct Rope;

// A family under llama.cpp's architecture name. `permuteQk`: its converter reorders the q and k
// rows (LlamaModel and those built on it). `layout`: where the architecture reads more than the
// plain transformer's keys and tensors.
struct GgufArch {
    enum class Layout : uint8_t {
        Plain,
        Gemma3,  // norms written as 1 + w; the sliding window and its pattern read
        Phi3,    // LongRoPE's factors and attention factor; rotary over part of each head
        Olmo2,   // norms after each sublayer, q/k norms over the whole projection; an output
                 // layer required even where the model ties it to the embedding
        Granite, // its four multipliers: embeddings, attention scores, residuals, logits
    };
    const char* modelType;
    const char* name;
    bool permuteQk;
    Layout layout;
};

// The architecture DIR's config is written as, or why it cannot be.
Expected<const GgufArch*> ggufArchFor(const HfConfig& c, const QString& dir);

// llama.h's llama_ftype of a quantization (general.file_type).
uint32_t ggufFileType(GgufQuant q);

// Every key but the tensors: general.*, the architecture's hyperparameters, the tokenizer.
GgufMetadata ggufMetadata(const HfConfig& c, const GgufArch& arch, const GgufVocab& v,
                          const QString& dir, const GgufOptions& o);

// Llama 3's frequency scaling as the divisor of each rotary frequency (the rope_freqs tensor).
std::vector<float> llama3Factors(const Rope& r, int64_t dims);

// OUT's Ollama Modelfile, beside it (OUT's name with .Modelfile): the file, and the tokens that
// end an answer. The chat template travels in the GGUF, where Ollama reads it.
Status writeOllamaModelfile(const QString& out, const GgufVocab& v);

} // namespace tandem
