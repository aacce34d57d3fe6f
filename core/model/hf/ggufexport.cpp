// A Hugging Face folder as one GGUF file (ggufexport.h). The facts it writes are llama.cpp's:
// the architecture names and hyperparameter keys of gguf-py's constants.py and llama-arch.cpp,
// the tensor names of its tensor map, and what convert_hf_to_gguf.py does to each tensor on the
// way (Llama-layout q/k rows permuted from Hugging Face's rotate-half order to llama.cpp's
// interleaved one, GPT-2's Conv1D weights transposed, Llama 3's frequency scaling written as the
// rope_freqs tensor of per-frequency divisors). The weights are read from the mapped safetensors
// one tensor at a time, so exporting never holds the model twice.
#include "model/ggufexport.h"

#include "common/files.h"
#include "formats/gguf.h"
#include "model/hf/config.h"
#include "model/hf/family.h"
#include "model/hf/ggufvocab.h"
#include "model/hf/weights.h"

#include <QDir>
#include <QFileInfo>

#include <cmath>
#include <map>

namespace tandem {

namespace {

// The families llama.cpp reads, under its architecture names; `permuteQk`: its converter
// reorders the q and k rows (LlamaModel and those built on it); `gemma`: Gemma 3's layout, whose
// norms are written as 1 + w and whose sliding window llama.cpp reads (it ignores the others').
struct Arch {
    const char* modelType;
    const char* name;
    bool permuteQk;
    bool gemma;
};
constexpr Arch kArchs[] = {
    {"gpt2", "gpt2", false, false},        {"llama", "llama", true, false},
    {"mistral", "llama", true, false},     {"qwen2", "qwen2", false, false},
    {"qwen3", "qwen3", false, false},      {"smollm3", "smollm3", true, false},
    {"gemma3_text", "gemma3", false, true}};

// llama.cpp's name for the tensor playing each role (blk.N. goes before the per-block ones).
const char* ggufName(Role r) {
    switch (r) {
    case Role::Embed:
        return "token_embd";
    case Role::Positions:
        return "position_embd";
    case Role::FinalNorm:
        return "output_norm";
    case Role::LmHead:
        return "output";
    case Role::AttnNorm:
        return "attn_norm";
    case Role::Q:
        return "attn_q";
    case Role::K:
        return "attn_k";
    case Role::V:
        return "attn_v";
    case Role::Qkv:
        return "attn_qkv";
    case Role::O:
        return "attn_output";
    case Role::QNorm:
        return "attn_q_norm";
    case Role::KNorm:
        return "attn_k_norm";
    case Role::PostAttnNorm:
        return "post_attention_norm";
    case Role::MlpNorm:
        return "ffn_norm";
    case Role::Gate:
        return "ffn_gate";
    case Role::Up:
    case Role::GateUp:
        return "ffn_up";
    case Role::Down:
        return "ffn_down";
    case Role::PostMlpNorm:
        return "post_ffw_norm";
    case Role::Count:
        break;
    }
    return "";
}

constexpr Role kBlockRoles[] = {Role::AttnNorm,     Role::Q,       Role::K,          Role::V,
                                Role::Qkv,          Role::O,       Role::QNorm,      Role::KNorm,
                                Role::PostAttnNorm, Role::MlpNorm, Role::Gate,       Role::Up,
                                Role::GateUp,       Role::Down,    Role::PostMlpNorm};

struct Entry {
    GgufTensor info;
    at::Tensor source;
    bool transpose = false;
    int64_t permuteHeads = 0; // reorder the rows of this many heads
    int64_t layer = 0;        // its block
    bool output = false;      // the tensor the logits come from
    float shift = 0;          // added to every value (Gemma's norms: llama.cpp's weight is 1 + w)
};

struct Plan {
    HfConfig config;
    const Arch* arch = nullptr;
    GgufVocab vocab;
    std::vector<Entry> entries;
    QStringList fellBack; // tensors whose rows are no whole number of their type's blocks
    GgufMetadata meta;
};

uint32_t fileType(GgufQuant q) { // llama.h's llama_ftype
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

// llama.cpp's rule for the blocks whose value and down projections get more bits.
bool moreBits(int64_t layer, int64_t layers) {
    return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

// What a two-dimensional tensor is stored as (llama-quant.cpp's choice for each ftype).
// `cols`: its rows' length; `layer`: its block; `output`: the tensor the logits come from.
GgmlType typeFor(GgufQuant q, const QByteArray& name, int64_t cols, int64_t layer, int64_t layers,
                 bool output) {
    switch (q) {
    case GgufQuant::F16:
        return GgmlType::F16;
    case GgufQuant::BF16:
        return GgmlType::BF16;
    case GgufQuant::Q8_0:
        return cols % 32 == 0 ? GgmlType::Q8_0 : GgmlType::F16;
    case GgufQuant::Q4_K_M:
        break;
    }
    if (name == "position_embd.weight") // llama.cpp does not quantize positions
        return GgmlType::F16;
    GgmlType t = GgmlType::Q4_K;
    if (output)
        t = cols % 256 != 0 ? GgmlType::Q8_0 : GgmlType::Q6_K;
    else if ((name.endsWith(".attn_v.weight") || name.endsWith(".ffn_down.weight")) &&
             moreBits(layer, layers))
        t = GgmlType::Q6_K;
    else if (name.endsWith(".attn_qkv.weight"))
        t = GgmlType::Q5_K;
    if (cols % ggmlBlockElements(t) == 0)
        return t;
    // llama.cpp's fallback for rows that are no whole number of 256-value blocks.
    t = t == GgmlType::Q4_K   ? GgmlType::Q5_0
        : t == GgmlType::Q5_K ? GgmlType::Q5_1
                              : GgmlType::Q8_0;
    return cols % 32 == 0 ? t : GgmlType::F16;
}

// Hugging Face's rotate-half row order, per head, to llama.cpp's interleaved pairs.
at::Tensor permuteRows(const at::Tensor& t, int64_t heads) {
    std::vector<int64_t> shape{heads, 2, t.size(0) / heads / 2};
    for (int64_t d = 1; d < t.dim(); ++d)
        shape.push_back(t.size(d));
    return t.reshape(shape).transpose(1, 2).reshape(t.sizes());
}

// Llama 3's frequency scaling as the divisor of each rotary frequency (the rope_freqs tensor).
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
QString unsupportedFeature(const HfConfig& c, const Arch& arch) {
    if (arch.gemma)
        return unsupportedGemma3(c);
    if (c.rope.type == Rope::Type::LongRope)
        return QStringLiteral("LongRoPE scaling");
    // llama.cpp's smollm3 leaves rotary positions out of every fourth block, and no other.
    for (int64_t i = 0; i < c.layers; ++i)
        if (!c.hasRope(i) != (c.modelType == QLatin1String("smollm3") && (i + 1) % 4 == 0))
            return QStringLiteral("rotary positions left out of other blocks than every fourth");
    if (c.rotaryDims > 0 && c.rotaryDims != c.headDim)
        return QStringLiteral("partial rotary embeddings");
    if (c.attnSoftcap > 0 || c.finalSoftcap > 0)
        return QStringLiteral("soft-capped logits");
    if (c.embedScale != 1.0 || c.residualScale != 1.0 || c.logitsDivisor != 1.0 || c.attnScale != 0)
        return QStringLiteral("scaled embeddings, residuals or attention");
    return {};
}

// The end-of-turn tokens of the chat formats Tandem's families use: generation stops at each of
// them that the vocabulary holds as a control token, besides the EOS.
constexpr const char* kEndOfTurn[] = {"<|im_end|>",    "<|eot_id|>",    "<|end|>",
                                      "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>"};

// OUT's Ollama Modelfile, beside it (OUT's name with .Modelfile): the file, and the tokens that
// end an answer. The chat template travels in the GGUF, where Ollama reads it.
Status writeModelfile(const QString& out, const GgufVocab& v) {
    QStringList stops;
    auto stop = [&](const QByteArray& token) {
        const QString t = QString::fromUtf8(token);
        if (!t.isEmpty() && !stops.contains(t))
            stops << t;
    };
    if (v.eos >= 0 && size_t(v.eos) < v.tokens.size())
        stop(v.tokens[size_t(v.eos)]);
    for (const char* t : kEndOfTurn)
        for (size_t i = 0; i < v.tokens.size(); ++i)
            if (v.types[i] == 3 && v.tokens[i] == t && v.chatTemplate.contains(QLatin1String(t)))
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

std::vector<int64_t> reversed(at::IntArrayRef sizes) {
    return std::vector<int64_t>(sizes.rbegin(), sizes.rend());
}

// The llama.cpp architecture a folder's family is, or why the folder cannot be written as it.
Expected<const Arch*> archFor(const HfConfig& c, const QString& dir) {
    const Arch* arch = nullptr;
    for (const Arch& a : kArchs)
        if (c.modelType == QLatin1String(a.modelType))
            arch = &a;
    if (!arch)
        return makeError(ErrorCode::Unsupported,
                         QStringLiteral("%1 is a %2 model; Tandem writes GGUF for GPT-2, Llama, "
                                        "Mistral, Qwen2, Qwen3, SmolLM3 and Gemma 3 so far. Export "
                                        "it as "
                                        "hf and convert that folder with llama.cpp's "
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
        c.rope.type != Rope::Type::Llama3)
        return makeError(
            ErrorCode::Unsupported,
            QStringLiteral("%1's RoPE scaling is not one GGUF export writes").arg(dir));
    return arch;
}

// The tensors under llama.cpp's names, each with its type and what to do to it on the way.
void addTensors(Plan& p, const NamedTensors& weights, const GgufOptions& o) {
    const HfConfig& c = p.config;
    const Arch* arch = p.arch;
    std::map<std::string, at::Tensor> byName;
    const std::string prefix = c.family->basePrefix;
    for (const auto& [name, t] : weights) {
        byName[name] = t;
        if (name.rfind(prefix, 0) != 0 && name != "lm_head.weight")
            byName[prefix + name] = t;
    }
    auto find = [&](const std::string& name) {
        auto it = byName.find(name);
        return it == byName.end() ? at::Tensor() : it->second;
    };
    std::vector<Entry>& entries = p.entries;
    QStringList& fellBack = p.fellBack; // rows that are no whole number of their type's blocks
    int64_t layer = 0;
    // `linear`: a linear layer's weight, which Conv1D families store [in, out].
    auto add = [&](const std::string& hfName, const QByteArray& name, bool linear, int64_t heads) {
        at::Tensor t = find(hfName);
        if (!t.defined())
            return;
        Entry e;
        e.source = t;
        e.transpose = linear && c.family->conv1d && t.dim() == 2;
        e.permuteHeads = heads;
        e.info.name = name;
        e.info.ne = reversed(e.transpose ? t.t().sizes() : t.sizes());
        const bool output =
            name == "output.weight" || (name == "token_embd.weight" && c.tieEmbeddings);
        e.layer = layer;
        e.output = output;
        // Gemma's RMS norms scale by 1 + w; llama.cpp's converter writes 1 + w, as here.
        if (arch->gemma && name.endsWith("norm.weight"))
            e.shift = 1;
        e.info.type = t.dim() >= 2 ? typeFor(o.quant, name, e.info.ne[0], layer, c.layers, output)
                                   : GgmlType::F32;
        const GgmlType plain = typeFor(o.quant, name, 1024, layer, c.layers, output);
        if (t.dim() >= 2 && e.info.type != plain)
            fellBack << QStringLiteral("%1 (%2)").arg(QString::fromUtf8(name),
                                                      ggmlTypeName(e.info.type));
        entries.push_back(std::move(e));
    };
    auto role = [&](Role r, int64_t index, const QByteArray& name) {
        if (!c.family->has(r))
            return;
        std::string m = c.family->name(r);
        if (const size_t at = m.find("%1"); at != std::string::npos)
            m.replace(at, 2, std::to_string(index));
        const bool whole = r == Role::Embed || r == Role::Positions || r == Role::LmHead;
        int64_t heads = 0;
        if (arch->permuteQk && (r == Role::Q || r == Role::K))
            heads = r == Role::Q ? c.heads : c.kvHeads;
        add(whole ? m : m + ".weight", name + ".weight", !whole, heads);
        if (!whole)
            add(m + ".bias", name + ".bias", false, heads);
    };
    role(Role::Embed, 0, "token_embd");
    role(Role::Positions, 0, "position_embd");
    for (layer = 0; layer < c.layers; ++layer)
        for (Role r : kBlockRoles)
            role(r, layer, QByteArray("blk.") + QByteArray::number(layer) + '.' + ggufName(r));
    role(Role::FinalNorm, 0, "output_norm");
    if (!c.tieEmbeddings)
        role(Role::LmHead, 0, "output");
    if (c.rope.type == Rope::Type::Llama3) {
        const std::vector<float> f = llama3Factors(c.rope, c.headDim);
        Entry e;
        e.source = at::tensor(at::ArrayRef<float>(f));
        e.info.name = "rope_freqs.weight";
        e.info.ne = {int64_t(f.size())};
        entries.push_back(std::move(e));
    }
}

// The metadata, each key in the type llama.cpp's loader asks for.
void addMetadata(Plan& p, const QString& dir, const GgufOptions& o) {
    const HfConfig& c = p.config;
    const Arch* arch = p.arch;
    const QString a = QLatin1String(arch->name);
    GgufMetadata& meta = p.meta;
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
    key(QStringLiteral("general.file_type"), GgufValue::u32(fileType(o.quant)));
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
        if (arch->gemma)
            archKey("attention.sliding_window", GgufValue::u32(uint32_t(c.slidingWindow)));
    }
    archKey("vocab_size", GgufValue::u32(uint32_t(c.vocab)));
    const GgufVocab& v = p.vocab;
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
}

// Everything of an export but its bytes: the tensors with their types, and the metadata.
Expected<Plan> planExport(const QString& dir, const GgufOptions& o) {
    Plan p;
    auto config = readHfConfig(dir);
    if (!config)
        return config.error();
    p.config = std::move(*config);
    auto arch = archFor(p.config, dir);
    if (!arch)
        return arch.error();
    p.arch = *arch;
    auto vocab = ggufVocabOf(dir, p.config.vocab);
    if (!vocab)
        return vocab.error();
    p.vocab = std::move(*vocab);
    auto weights = mapHfWeights(dir);
    if (!weights)
        return weights.error();
    addTensors(p, *weights, o);
    addMetadata(p, dir, o);
    return p;
}

} // namespace

QString ggufQuantName(GgufQuant q) {
    switch (q) {
    case GgufQuant::F16:
        return QStringLiteral("f16");
    case GgufQuant::BF16:
        return QStringLiteral("bf16");
    case GgufQuant::Q8_0:
        return QStringLiteral("q8_0");
    case GgufQuant::Q4_K_M:
        return QStringLiteral("q4_k_m");
    }
    return {};
}

bool ggufQuantFromName(const QString& name, GgufQuant* out) {
    for (GgufQuant q : {GgufQuant::F16, GgufQuant::BF16, GgufQuant::Q8_0, GgufQuant::Q4_K_M})
        if (name.compare(ggufQuantName(q), Qt::CaseInsensitive) == 0) {
            *out = q;
            return true;
        }
    return false;
}

QStringList ggufQuantNames() {
    return {ggufQuantName(GgufQuant::F16), ggufQuantName(GgufQuant::BF16),
            ggufQuantName(GgufQuant::Q8_0), ggufQuantName(GgufQuant::Q4_K_M)};
}

Status exportGgufFromFolder(const QString& dir, const QString& out, const GgufOptions& o) {
    auto plan = planExport(dir, o);
    if (!plan)
        return plan.error();
    const Plan& p = *plan;
    const HfConfig& c = p.config;
    const std::vector<Entry>& entries = p.entries;
    const QStringList& fellBack = p.fellBack;
    const Arch* arch = p.arch;
    if (!fellBack.isEmpty() && o.log)
        o.log(QStringLiteral("%1 tensor(s) have rows that are no whole number of their type's "
                             "blocks and fall back as llama.cpp's quantizer does: %2%3")
                  .arg(fellBack.size())
                  .arg(fellBack.mid(0, 4).join(QStringLiteral(", ")),
                       fellBack.size() > 4 ? QStringLiteral(", …") : QString()));
    if (c.slidingWindow > 0 && o.log && !arch->gemma)
        o.log(QStringLiteral("llama.cpp's %1 architecture attends over the whole context: past "
                             "the sliding window of %2 tokens its answers differ from Tandem's")
                  .arg(QLatin1String(arch->name))
                  .arg(c.slidingWindow));

    std::vector<GgufTensor> infos;
    for (const Entry& e : entries)
        infos.push_back(e.info);
    int lastTenth = -1;
    auto progress = [&](int64_t done, int64_t total) {
        const int tenth = int(done * 10 / std::max<int64_t>(total, 1));
        if (o.log && tenth != lastTenth && total > (64 << 20)) {
            lastTenth = tenth;
            o.log(QStringLiteral("writing %1: %2 of %3 MB")
                      .arg(out)
                      .arg(done / 1000000)
                      .arg(total / 1000000));
        }
    };
    auto written = writeGguf(
        out, p.meta, std::move(infos),
        [&](size_t i) -> Expected<QByteArray> {
            const Entry& e = entries[i];
            try {
                at::Tensor t = e.source;
                if (e.transpose)
                    t = t.t();
                if (e.permuteHeads > 0)
                    t = permuteRows(t, e.permuteHeads);
                t = t.to(at::kFloat).contiguous();
                if (e.shift != 0)
                    t = t + e.shift;
                QByteArray bytes = ggmlQuantize(e.info.type, t.data_ptr<float>(), t.numel());
                // Read once: its pages leave memory, so that exporting a model holds one tensor
                // of it at a time, not the whole file.
                dropMappedPages(e.source);
                return bytes;
            } catch (const std::exception& ex) {
                return torchError(
                    QStringLiteral("converting %1 for GGUF").arg(QString::fromUtf8(e.info.name)),
                    ex);
            }
        },
        progress);
    if (!written)
        return written;
    return writeModelfile(out, p.vocab);
}

Expected<std::vector<int64_t>> ggufExportBytes(const QString& dir,
                                               const std::vector<GgufQuant>& quants) {
    auto plan = planExport(dir, {});
    if (!plan)
        return plan.error();
    std::vector<int64_t> sizes;
    for (GgufQuant q : quants) {
        GgufMetadata meta = plan->meta;
        for (auto& [key, value] : meta)
            if (key == "general.file_type")
                value = GgufValue::u32(fileType(q));
        std::vector<GgufTensor> infos;
        for (const Entry& e : plan->entries) {
            infos.push_back(e.info);
            if (e.info.ne.size() >= 2)
                infos.back().type =
                    typeFor(q, e.info.name, e.info.ne[0], e.layer, plan->config.layers, e.output);
        }
        sizes.push_back(ggufFileBytes(meta, std::move(infos)));
    }
    return sizes;
}

} // namespace tandem
