// Which llama.cpp architecture a family is written as, and the metadata it reads
// (ggufarch.h). The facts are llama.cpp's: gguf-py's constants.py and llama-arch.cpp for the
// names and keys, llama-model.cpp for what each architecture's loader reads and ignores.
#include "model/hf/ggufarch.h"

#include "common/files.h"
#include "formats/endofturn.h"
#include "model/hf/config.h"
#include "model/hf/family.h"
#include "model/hf/ggufvocab.h"

#include <QDir>
#include <QFileInfo>

#include <cmath>

namespace tandem {

namespace {

// The families llama.cpp reads, under its architecture names (ggufarch.h says what each field
// means).
using Layout = GgufArch::Layout;
constexpr GgufArch kArchs[] = {{"gpt2", "gpt2", false, Layout::Plain},
                               {"llama", "llama", true, Layout::Plain},
                               {"mistral", "llama", true, Layout::Plain},
                               {"qwen2", "qwen2", false, Layout::Plain},
                               {"qwen3", "qwen3", false, Layout::Plain},
                               {"smollm3", "smollm3", true, Layout::Plain},
                               {"gemma3_text", "gemma3", false, Layout::Gemma3},
                               {"phi3", "phi3", false, Layout::Phi3},
                               {"olmo2", "olmo2", false, Layout::Olmo2},
                               {"granite", "granite", true, Layout::Granite}};

// What of a Gemma 3 config llama.cpp's gemma3 architecture cannot say (llama-model.cpp: five
// sliding-window blocks to one global, the sliding ones' rotary base 10,000, attention scaled by
// 1/√head_dim, the embeddings by √hidden); empty when nothing.
QString unsupportedGemma3(const HfConfig& c) {
    for (int64_t i = 0; i < c.layers; ++i)
        if (c.isSliding(i) != ((i + 1) % 6 != 0))
            return QStringLiteral("a pattern of sliding-window blocks other than five to one "
                                  "global");
    const Rope& local = c.localRope ? *c.localRope : c.rope;
    if (local.type != Rope::Type::Default || local.theta != 10000.0)
        return QStringLiteral("a rotary base other than 10,000 in the sliding-window blocks");
    if (std::fabs(c.attnScale * std::sqrt(double(c.headDim)) - 1) > 1e-6)
        return QStringLiteral("query_pre_attn_scalar other than head_dim");
    if (std::fabs(c.embedScale - std::sqrt(double(c.hidden))) > 1e-6 * c.embedScale)
        return QStringLiteral("embeddings scaled otherwise than by the square root of their width");
    if (c.attnSoftcap > 0 || c.finalSoftcap > 0)
        return QStringLiteral("soft-capped logits");
    if (c.residualScale != 1.0 || c.logitsDivisor != 1.0)
        return QStringLiteral("scaled residuals or logits");
    return {};
}

// What of the config GGUF's architecture for it cannot say, as a refusal; empty when nothing.
QString unsupportedFeature(const HfConfig& c, const GgufArch& arch) {
    if (arch.layout == Layout::Gemma3)
        return unsupportedGemma3(c);
    // Phi-3's LongRoPE factors and its partial rotary embedding are llama.cpp's phi3's own.
    const bool phi3 = arch.layout == Layout::Phi3;
    if (c.rope.type == Rope::Type::LongRope && !phi3)
        return QStringLiteral("LongRoPE scaling");
    // llama.cpp's smollm3 leaves rotary positions out of every fourth block, and no other.
    for (int64_t i = 0; i < c.layers; ++i)
        if (!c.hasRope(i) != (c.modelType == QLatin1String("smollm3") && (i + 1) % 4 == 0))
            return QStringLiteral("rotary positions left out of other blocks than every fourth");
    if (c.rotaryDims > 0 && c.rotaryDims != c.headDim && !phi3)
        return QStringLiteral("partial rotary embeddings");
    if (c.attnSoftcap > 0 || c.finalSoftcap > 0)
        return QStringLiteral("soft-capped logits");
    // Granite's multipliers are its architecture's keys; Gemma's √hidden is gemma3's own.
    if (arch.layout != Layout::Granite &&
        (c.embedScale != 1.0 || c.residualScale != 1.0 || c.logitsDivisor != 1.0 ||
         c.attnScale != 0 || c.embedScaleInDtype))
        return QStringLiteral("scaled embeddings, residuals or attention");
    if (c.embedScaleInDtype)
        return QStringLiteral("embeddings scaled in the weights' own precision");
    return {};
}

} // namespace

uint32_t ggufFileType(GgufQuant q) { // llama.h's llama_ftype
    switch (q) {
    case GgufQuant::F16:
        return 1;
    case GgufQuant::BF16:
        return 32;
    case GgufQuant::Q8_0:
        return 7;
    case GgufQuant::Q4_K_M:
        return 15;
    }
    return 1;
}

std::vector<float> llama3Factors(const Rope& r, int64_t dims) {
    std::vector<float> out;
    const double lowWavelen = double(r.originalMaxPositions) / r.lowFreqFactor;
    const double highWavelen = double(r.originalMaxPositions) / r.highFreqFactor;
    for (int64_t i = 0; i < dims; i += 2) {
        const double freq = 1.0 / std::pow(r.theta, double(i) / double(dims));
        const double wavelen = 2 * M_PI / freq;
        if (wavelen < highWavelen) {
            out.push_back(1.0f);
        } else if (wavelen > lowWavelen) {
            out.push_back(float(r.factor));
        } else {
            const double smooth = (double(r.originalMaxPositions) / wavelen - r.lowFreqFactor) /
                                  (r.highFreqFactor - r.lowFreqFactor);
            out.push_back(float(1.0 / ((1 - smooth) / r.factor + smooth)));
        }
    }
    return out;
}

// The llama.cpp architecture a folder's family is, or why the folder cannot be written as it.
Expected<const GgufArch*> ggufArchFor(const HfConfig& c, const QString& dir) {
    const GgufArch* arch = nullptr;
    for (const GgufArch& a : kArchs)
        if (c.modelType == QLatin1String(a.modelType))
            arch = &a;
    if (!arch)
        return makeError(
            ErrorCode::Unsupported,
            QStringLiteral("%1 is a %2 model; Tandem writes GGUF for GPT-2, Llama, Mistral, "
                           "Qwen2, Qwen3, SmolLM3, Gemma 3, Phi-3, OLMo 2 and Granite so far. "
                           "Export it as hf and convert that folder with llama.cpp's "
                           "convert_hf_to_gguf.py")
                .arg(dir, QLatin1String(c.family->title)));
    if (c.source.contains(QLatin1String("quantization_config")))
        return makeError(ErrorCode::Unsupported,
                         QStringLiteral("%1 holds quantized weights (its config.json has a "
                                        "quantization_config); train from it and export the run, "
                                        "which writes them dequantized")
                             .arg(dir));
    if (const QString f = unsupportedFeature(c, *arch); !f.isEmpty())
        return makeError(ErrorCode::Unsupported,
                         QStringLiteral("%1 uses %2, which llama.cpp's %3 architecture does not "
                                        "read from GGUF")
                             .arg(dir, f, QLatin1String(arch->name)));
    if (c.rope.type != Rope::Type::Default && c.rope.type != Rope::Type::Linear &&
        c.rope.type != Rope::Type::Llama3 && c.rope.type != Rope::Type::LongRope)
        return makeError(
            ErrorCode::Unsupported,
            QStringLiteral("%1's RoPE scaling is not one GGUF export writes").arg(dir));
    return arch;
}

// The metadata, each key in the type llama.cpp's loader asks for.
GgufMetadata ggufMetadata(const HfConfig& c, const GgufArch& arch, const GgufVocab& v,
                          const QString& dir, const GgufOptions& o) {
    const QString a = QLatin1String(arch.name);
    GgufMetadata meta;
    auto key = [&](const QString& k, GgufValue v) { meta.emplace_back(k.toUtf8(), std::move(v)); };
    auto archKey = [&](const char* k, GgufValue v) {
        key(a + QLatin1Char('.') + QLatin1String(k), std::move(v));
    };
    key(QStringLiteral("general.architecture"), GgufValue::string(a));
    key(QStringLiteral("general.type"), GgufValue::string(QStringLiteral("model")));
    key(QStringLiteral("general.name"),
        GgufValue::string(o.name.isEmpty() ? QFileInfo(dir).fileName() : o.name));
    key(QStringLiteral("general.description"),
        GgufValue::string(
            o.loraRank > 0 ? QStringLiteral("Fine-tuned with Tandem (LoRA rank %1)").arg(o.loraRank)
                           : QStringLiteral("Fine-tuned with Tandem")));
    if (!o.baseModel.isEmpty()) {
        key(QStringLiteral("general.base_model.count"), GgufValue::u32(1));
        key(QStringLiteral("general.base_model.0.name"), GgufValue::string(o.baseModel));
    }
    key(QStringLiteral("general.file_type"), GgufValue::u32(ggufFileType(o.quant)));
    key(QStringLiteral("general.quantization_version"), GgufValue::u32(2));
    if (o.loraRank > 0) {
        key(QStringLiteral("tandem.lora.rank"), GgufValue::u32(uint32_t(o.loraRank)));
        key(QStringLiteral("tandem.lora.alpha"), GgufValue::f32(float(o.loraAlpha)));
    }
    const bool gpt2 = c.family->learnedPositions;
    archKey("context_length", GgufValue::u32(uint32_t(c.maxPositions)));
    archKey("embedding_length", GgufValue::u32(uint32_t(c.hidden)));
    archKey("block_count", GgufValue::u32(uint32_t(c.layers)));
    archKey("feed_forward_length", GgufValue::u32(uint32_t(c.intermediate)));
    archKey("attention.head_count", GgufValue::u32(uint32_t(c.heads)));
    archKey("attention.head_count_kv", GgufValue::u32(uint32_t(c.kvHeads)));
    if (gpt2) {
        archKey("attention.layer_norm_epsilon", GgufValue::f32(float(c.normEps)));
    } else {
        archKey("attention.layer_norm_rms_epsilon", GgufValue::f32(float(c.normEps)));
        archKey("rope.freq_base", GgufValue::f32(float(c.rope.theta)));
        archKey("rope.dimension_count", GgufValue::u32(uint32_t(c.rotated())));
        archKey("attention.key_length", GgufValue::u32(uint32_t(c.headDim)));
        archKey("attention.value_length", GgufValue::u32(uint32_t(c.headDim)));
        if (c.rope.type == Rope::Type::Linear) {
            archKey("rope.scaling.type", GgufValue::string(QStringLiteral("linear")));
            archKey("rope.scaling.factor", GgufValue::f32(float(c.rope.factor)));
        }
        // LongRoPE: llama.cpp takes the long factors once its context passes the original
        // length, and scales cos and sin by the attention factor (the rope_factors_* tensors
        // hold the factors).
        if (arch.layout == Layout::Granite) {
            // llama.cpp multiplies the embeddings and each residual branch, scales the scores
            // by attention.scale in place of 1/√head_dim, and divides the logits.
            archKey("embedding_scale", GgufValue::f32(float(c.embedScale)));
            archKey("residual_scale", GgufValue::f32(float(c.residualScale)));
            archKey("logit_scale", GgufValue::f32(float(c.logitsDivisor)));
            archKey("attention.scale",
                    GgufValue::f32(
                        float(c.attnScale != 0 ? c.attnScale : 1 / std::sqrt(double(c.headDim)))));
        }
        if (c.rope.type == Rope::Type::LongRope) {
            archKey("rope.scaling.original_context_length",
                    GgufValue::u32(uint32_t(c.rope.originalMaxPositions)));
            archKey("rope.scaling.attn_factor", GgufValue::f32(float(c.rope.attentionFactor)));
        }
        if (arch.layout == Layout::Gemma3)
            archKey("attention.sliding_window", GgufValue::u32(uint32_t(c.slidingWindow)));
    }
    archKey("vocab_size", GgufValue::u32(uint32_t(c.vocab)));
    key(QStringLiteral("tokenizer.ggml.model"), GgufValue::string(v.model));
    if (!v.pre.isEmpty())
        key(QStringLiteral("tokenizer.ggml.pre"), GgufValue::string(v.pre));
    key(QStringLiteral("tokenizer.ggml.tokens"), GgufValue::stringArray(v.tokens));
    if (!v.scores.empty())
        key(QStringLiteral("tokenizer.ggml.scores"), GgufValue::f32Array(v.scores));
    key(QStringLiteral("tokenizer.ggml.token_type"), GgufValue::i32Array(v.types));
    if (v.model == QLatin1String("gpt2"))
        key(QStringLiteral("tokenizer.ggml.merges"), GgufValue::stringArray(v.merges));
    else
        key(QStringLiteral("tokenizer.ggml.add_space_prefix"),
            GgufValue::boolean(v.addSpacePrefix));
    if (v.unk >= 0)
        key(QStringLiteral("tokenizer.ggml.unknown_token_id"), GgufValue::u32(uint32_t(v.unk)));
    if (v.bos >= 0)
        key(QStringLiteral("tokenizer.ggml.bos_token_id"), GgufValue::u32(uint32_t(v.bos)));
    if (v.eos >= 0)
        key(QStringLiteral("tokenizer.ggml.eos_token_id"), GgufValue::u32(uint32_t(v.eos)));
    if (v.pad >= 0)
        key(QStringLiteral("tokenizer.ggml.padding_token_id"), GgufValue::u32(uint32_t(v.pad)));
    key(QStringLiteral("tokenizer.ggml.add_bos_token"), GgufValue::boolean(v.addBos));
    key(QStringLiteral("tokenizer.ggml.add_eos_token"), GgufValue::boolean(v.addEos));
    // llama.cpp's template engine has no list slicing: its converter drops SmolLM3's "[:]".
    const QString chat = a == QLatin1String("smollm3")
                             ? QString(v.chatTemplate).replace(QLatin1String("[:]"), QString())
                             : v.chatTemplate;
    if (!chat.isEmpty())
        key(QStringLiteral("tokenizer.chat_template"), GgufValue::string(chat));
    return meta;
}

Status writeOllamaModelfile(const QString& out, const GgufVocab& v) {
    QStringList stops;
    auto stop = [&](const QByteArray& token) {
        const QString t = QString::fromUtf8(token);
        if (!t.isEmpty() && !stops.contains(t))
            stops << t;
    };
    if (v.eos >= 0 && size_t(v.eos) < v.tokens.size())
        stop(v.tokens[size_t(v.eos)]);
    // The end-of-turn tokens (formats/endofturn.h) the vocabulary holds as control tokens.
    for (const QString& t : endOfTurnSpellings())
        for (size_t i = 0; i < v.tokens.size(); ++i)
            if (v.types[i] == 3 && v.tokens[i] == t.toUtf8() && v.chatTemplate.contains(t))
                stop(v.tokens[i]);
    const QFileInfo file(out);
    const QString path =
        file.absoluteDir().filePath(file.completeBaseName() + QStringLiteral(".Modelfile"));
    QString text = QStringLiteral("# ollama create %1 -f %2\nFROM ./%3\n")
                       .arg(file.completeBaseName(), QFileInfo(path).fileName(), file.fileName());
    for (const QString& s : stops)
        text += QStringLiteral("PARAMETER stop \"%1\"\n").arg(s);
    return writeFileAtomically(path, text.toUtf8());
}

} // namespace tandem
