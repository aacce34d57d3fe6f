// A Hugging Face folder as one GGUF file (ggufexport.h). The facts it writes are llama.cpp's:
// the architecture and its keys (ggufarch.cpp), the tensor names of its tensor map, and what
// convert_hf_to_gguf.py does to each tensor on the way (Llama-layout q/k rows permuted from Hugging
// Face's rotate-half order to llama.cpp's interleaved one, GPT-2's Conv1D weights transposed, Llama
// 3's frequency scaling written as the rope_freqs tensor of per-frequency divisors). The weights
// are read from the mapped safetensors one tensor at a time, so exporting never holds the model
// twice.
#include "model/ggufexport.h"

#include "common/files.h"
#include "formats/gguf.h"
#include "model/hf/config.h"
#include "model/hf/family.h"
#include "model/hf/ggufarch.h"
#include "model/hf/ggufvocab.h"
#include "model/hf/weights.h"

#include <QDir>
#include <QFileInfo>

#include <cmath>
#include <map>

namespace tandem {

namespace {

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
    const GgufArch* arch = nullptr;
    GgufVocab vocab;
    std::vector<Entry> entries;
    QStringList fellBack; // tensors whose rows are no whole number of their type's blocks
    GgufMetadata meta;
};

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
    case GgufQuant::Q4_K_M:
        break;
    }
    if (name == "position_embd.weight") // llama.cpp's quantizer leaves positions as they are
        return GgmlType::F16;
    if (q == GgufQuant::Q8_0)
        return cols % 32 == 0 ? GgmlType::Q8_0 : GgmlType::F16;
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

std::vector<int64_t> reversed(at::IntArrayRef sizes) {
    return std::vector<int64_t>(sizes.rbegin(), sizes.rend());
}

// The tensors under llama.cpp's names, each with its type and what to do to it on the way.
void addTensors(Plan& p, const NamedTensors& weights, const GgufOptions& o) {
    const HfConfig& c = p.config;
    const GgufArch* arch = p.arch;
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
    // OLMo 2's loader requires an output layer: a model that ties it to the embedding has the
    // embedding written twice.
    const bool separateOutput = !c.tieEmbeddings || arch->layout == GgufArch::Layout::Olmo2;
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
        const bool output = name == "output.weight" ||
                            (name == "token_embd.weight" && c.tieEmbeddings && !separateOutput);
        e.layer = layer;
        e.output = output;
        // Gemma's RMS norms scale by 1 + w; llama.cpp's converter writes 1 + w, as here.
        if (arch->layout == GgufArch::Layout::Gemma3 && name.endsWith("norm.weight"))
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
    else if (separateOutput)
        role(Role::Embed, 0, "output");
    if (c.rope.type == Rope::Type::Llama3) {
        const std::vector<float> f = llama3Factors(c.rope, c.headDim);
        Entry e;
        e.source = at::tensor(at::ArrayRef<float>(f));
        e.info.name = "rope_freqs.weight";
        e.info.ne = {int64_t(f.size())};
        entries.push_back(std::move(e));
    }
    // LongRoPE's divisors of the rotary frequencies, short and long, as Phi-3's loader reads
    // them (one of each for every block).
    if (c.rope.type == Rope::Type::LongRope)
        for (const auto& [name, factors] :
             {std::pair{"rope_factors_long.weight", &c.rope.longFactors},
              std::pair{"rope_factors_short.weight", &c.rope.shortFactors}}) {
            const std::vector<float> f(factors->begin(), factors->end());
            Entry e;
            e.source = at::tensor(at::ArrayRef<float>(f));
            e.info.name = name;
            e.info.ne = {int64_t(f.size())};
            entries.push_back(std::move(e));
        }
}

// Everything of an export but its bytes: the tensors with their types, and the metadata.
Expected<Plan> planExport(const QString& dir, const GgufOptions& o) {
    Plan p;
    auto config = readHfConfig(dir);
    if (!config)
        return config.error();
    p.config = std::move(*config);
    auto arch = ggufArchFor(p.config, dir);
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
    p.meta = ggufMetadata(p.config, *p.arch, p.vocab, dir, o);
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
    const GgufArch* arch = p.arch;
    if (!fellBack.isEmpty() && o.log)
        o.log(QStringLiteral("%1 tensor(s) have rows that are no whole number of their type's "
                             "blocks and fall back as llama.cpp's quantizer does: %2%3")
                  .arg(fellBack.size())
                  .arg(fellBack.mid(0, 4).join(QStringLiteral(", ")),
                       fellBack.size() > 4 ? QStringLiteral(", …") : QString()));
    if (c.slidingWindow > 0 && o.log && arch->layout != GgufArch::Layout::Gemma3)
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
    return writeOllamaModelfile(out, p.vocab);
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
                value = GgufValue::u32(ggufFileType(q));
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
