#pragma once

// Small Hugging Face model folders written here, with no Python: config.json and
// model.safetensors holding random weights by their Hugging Face names, in F32 or BF16.

#include "formats/tensorfile.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

namespace hffolder {

struct Spec {
    // "gpt2", or the Llama family: "llama", "qwen2" (q/k/v biases), "mistral" (a sliding window
    // longer than any context the tests use), "qwen3" (q/k norms, heads of headDim)
    QString family = QStringLiteral("llama");
    bool tied = true; // the Llama family: the output layer is the token embedding
    int vocab = 64, hidden = 32, layers = 2, heads = 4, kvHeads = 2, intermediate = 48;
    int positions = 64;
    int headDim = 0; // qwen3: the heads' width (0: hidden / heads)
    bool bf16 = false;
    quint32 seed = 1;
    // Embeddings (and an untied output layer) wider than Hugging Face's N(0, 0.02), so that a
    // frozen output layer can still make sharp predictions; the other weights N(0, 0.02).
    double embeddingStd = 0.2;
    // GPT-2's learned positions; below zero, embeddingStd's.
    double positionStd = -1;
};

inline void put(QByteArray& out, float f, bool bf16) {
    quint32 bits;
    std::memcpy(&bits, &f, 4);
    if (!bf16) {
        out.append(reinterpret_cast<const char*>(&bits), 4);
        return;
    }
    // Rounded to nearest, ties to even, as torch converts.
    bits += 0x7fff + ((bits >> 16) & 1);
    const quint16 half = quint16(bits >> 16);
    out.append(reinterpret_cast<const char*>(&half), 2);
}

// Every tensor the family's config calls for: norms at one, embeddings N(0, embeddingStd), the
// rest N(0, 0.02) as Hugging Face initialises them.
inline QList<tandem::TensorRecord> weights(const Spec& s) {
    using Shape = std::vector<int64_t>;
    std::vector<std::pair<QString, Shape>> names;
    const int64_t h = s.hidden, f = s.intermediate,
                  hd = s.headDim > 0 ? s.headDim : s.hidden / s.heads;
    if (s.family == QLatin1String("gpt2")) {
        names = {{QStringLiteral("transformer.wte.weight"), {s.vocab, h}},
                 {QStringLiteral("transformer.wpe.weight"), {s.positions, h}}};
        for (int i = 0; i < s.layers; ++i) {
            const QString b = QStringLiteral("transformer.h.%1.").arg(i);
            for (const auto& [n, shape] :
                 std::vector<std::pair<const char*, Shape>>{{"ln_1.weight", {h}},
                                                            {"ln_1.bias", {h}},
                                                            {"attn.c_attn.weight", {h, 3 * h}},
                                                            {"attn.c_attn.bias", {3 * h}},
                                                            {"attn.c_proj.weight", {h, h}},
                                                            {"attn.c_proj.bias", {h}},
                                                            {"ln_2.weight", {h}},
                                                            {"ln_2.bias", {h}},
                                                            {"mlp.c_fc.weight", {h, f}},
                                                            {"mlp.c_fc.bias", {f}},
                                                            {"mlp.c_proj.weight", {f, h}},
                                                            {"mlp.c_proj.bias", {h}}})
                names.emplace_back(b + QLatin1String(n), shape);
        }
        names.emplace_back(QStringLiteral("transformer.ln_f.weight"), Shape{h});
        names.emplace_back(QStringLiteral("transformer.ln_f.bias"), Shape{h});
    } else {
        const int64_t q = s.heads * hd, kv = s.kvHeads * hd;
        names = {{QStringLiteral("model.embed_tokens.weight"), {s.vocab, h}}};
        for (int i = 0; i < s.layers; ++i) {
            const QString b = QStringLiteral("model.layers.%1.").arg(i);
            for (const auto& [n, shape] : std::vector<std::pair<const char*, Shape>>{
                     {"input_layernorm.weight", {h}},
                     {"self_attn.q_proj.weight", {q, h}},
                     {"self_attn.k_proj.weight", {kv, h}},
                     {"self_attn.v_proj.weight", {kv, h}},
                     {"self_attn.q_proj.bias", {q}},
                     {"self_attn.k_proj.bias", {kv}},
                     {"self_attn.v_proj.bias", {kv}},
                     {"self_attn.o_proj.weight", {h, q}},
                     {"self_attn.q_norm.weight", {hd}},
                     {"self_attn.k_norm.weight", {hd}},
                     {"post_attention_layernorm.weight", {h}},
                     {"mlp.gate_proj.weight", {f, h}},
                     {"mlp.up_proj.weight", {f, h}},
                     {"mlp.down_proj.weight", {h, f}}})
                if ((s.family == QLatin1String("qwen2") || !QByteArray(n).endsWith(".bias")) &&
                    (s.family == QLatin1String("qwen3") || !QByteArray(n).contains("_norm.")))
                    names.emplace_back(b + QLatin1String(n), shape);
        }
        names.emplace_back(QStringLiteral("model.norm.weight"), Shape{h});
        if (!s.tied)
            names.emplace_back(QStringLiteral("lm_head.weight"), Shape{s.vocab, h});
    }
    QRandomGenerator rng(s.seed);
    QList<tandem::TensorRecord> out;
    for (const auto& [name, shape] : names) {
        tandem::TensorRecord r;
        r.name = name;
        r.dtype = s.bf16 ? tandem::DType::BF16 : tandem::DType::F32;
        r.shape = shape;
        const bool norm =
            name.contains(QLatin1String("norm")) || name.contains(QLatin1String("ln_"));
        const bool bias = name.endsWith(QLatin1String(".bias"));
        // Embeddings and an untied output layer alike: what turns hidden states into logits.
        const bool position = name.contains(QLatin1String(".wpe."));
        const bool embedding = position || name.contains(QLatin1String("embed")) ||
                               name.contains(QLatin1String(".wte.")) ||
                               name.startsWith(QLatin1String("lm_head"));
        const double std = position && s.positionStd >= 0 ? s.positionStd
                           : embedding                    ? s.embeddingStd
                                                          : 0.02;
        for (int64_t i = 0; i < r.numel(); ++i) {
            // Box-Muller from two uniforms.
            const double u1 = std::max(rng.generateDouble(), 1e-12), u2 = rng.generateDouble();
            const double normal = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
            put(r.data, norm ? (bias ? 0.0f : 1.0f) : float(std * normal), s.bf16);
        }
        out << r;
    }
    return out;
}

inline QJsonObject config(const Spec& s) {
    QJsonObject c{{QStringLiteral("vocab_size"), s.vocab},
                  {QStringLiteral("torch_dtype"),
                   s.bf16 ? QStringLiteral("bfloat16") : QStringLiteral("float32")}};
    if (s.family == QLatin1String("gpt2")) {
        c.insert(QStringLiteral("model_type"), QStringLiteral("gpt2"));
        c.insert(QStringLiteral("architectures"), QJsonArray{QStringLiteral("GPT2LMHeadModel")});
        c.insert(QStringLiteral("n_embd"), s.hidden);
        c.insert(QStringLiteral("n_layer"), s.layers);
        c.insert(QStringLiteral("n_head"), s.heads);
        c.insert(QStringLiteral("n_inner"), s.intermediate);
        c.insert(QStringLiteral("n_positions"), s.positions);
    } else {
        const QString arch =
            s.family == QLatin1String("qwen2")     ? QStringLiteral("Qwen2ForCausalLM")
            : s.family == QLatin1String("qwen3")   ? QStringLiteral("Qwen3ForCausalLM")
            : s.family == QLatin1String("mistral") ? QStringLiteral("MistralForCausalLM")
                                                   : QStringLiteral("LlamaForCausalLM");
        c.insert(QStringLiteral("model_type"), s.family);
        c.insert(QStringLiteral("architectures"), QJsonArray{arch});
        if (s.family == QLatin1String("mistral"))
            c.insert(QStringLiteral("sliding_window"), 4096);
        c.insert(QStringLiteral("hidden_size"), s.hidden);
        c.insert(QStringLiteral("num_hidden_layers"), s.layers);
        c.insert(QStringLiteral("num_attention_heads"), s.heads);
        c.insert(QStringLiteral("num_key_value_heads"), s.kvHeads);
        c.insert(QStringLiteral("intermediate_size"), s.intermediate);
        c.insert(QStringLiteral("max_position_embeddings"), s.positions);
        c.insert(QStringLiteral("tie_word_embeddings"), s.tied);
        c.insert(QStringLiteral("head_dim"), s.headDim > 0 ? s.headDim : s.hidden / s.heads);
    }
    return c;
}

// A safetensors file's tensors, or none when it cannot be read.
inline QList<tandem::TensorRecord> readSafetensors(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    auto t = tandem::parseSafetensors(f.readAll(), path);
    return t ? *t : QList<tandem::TensorRecord>{};
}

// Writes DIR/config.json and DIR/model.safetensors; false if either cannot be written.
inline bool write(const QString& dir, const Spec& s) {
    if (!QDir().mkpath(dir))
        return false;
    QFile cfg(QDir(dir).filePath(QStringLiteral("config.json")));
    if (!cfg.open(QIODevice::WriteOnly) || cfg.write(QJsonDocument(config(s)).toJson()) <= 0)
        return false;
    cfg.close();
    return bool(tandem::writeSafetensors(QDir(dir).filePath(QStringLiteral("model.safetensors")),
                                         weights(s),
                                         {{QStringLiteral("format"), QStringLiteral("pt")}}));
}

// A token stream (little-endian uint16) a model can learn: mostly the first 8 tokens of the
// vocabulary, each followed by the next of them half the time, and one token in 20 drawn from
// all of it. A model that learned nothing pays ln(vocab) a token; one that learned the 8 pays
// about ln(8).
inline QByteArray learnableTokens(int count, int vocab, quint32 seed = 3) {
    QRandomGenerator rng(seed);
    QByteArray out;
    quint16 t = 0;
    for (int i = 0; i < count; ++i) {
        out.append(reinterpret_cast<const char*>(&t), 2);
        const int r = rng.bounded(20);
        t = r == 0   ? quint16(rng.bounded(vocab))
            : r < 11 ? quint16((t + 1) % 8)
                     : quint16(rng.bounded(8));
    }
    return out;
}

// Writes DIR/tokenizer.json and DIR/tokenizer_config.json for a vocabulary of 64: one token a
// character of " ", a-z, A-Z, ".,?!:", a newline and "0123", then "</s>" (id 63, the EOS), and
// a plain chat template ("role: content" lines, "assistant:" to answer).
inline bool writeTokenizer(const QString& dir) {
    const QString chars =
        QStringLiteral(" abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.,?!:\n0123");
    QJsonObject vocab;
    for (qsizetype i = 0; i < chars.size(); ++i)
        vocab.insert(QString(chars[i]), int(i));
    vocab.insert(QStringLiteral("</s>"), 63);
    const QJsonObject tokenizer{
        {QStringLiteral("added_tokens"),
         QJsonArray{QJsonObject{{QStringLiteral("id"), 63},
                                {QStringLiteral("content"), QStringLiteral("</s>")},
                                {QStringLiteral("special"), true}}}},
        {QStringLiteral("decoder"), QJsonObject{{QStringLiteral("type"), QStringLiteral("Fuse")}}},
        {QStringLiteral("model"), QJsonObject{{QStringLiteral("type"), QStringLiteral("BPE")},
                                              {QStringLiteral("vocab"), vocab},
                                              {QStringLiteral("merges"), QJsonArray{}}}}};
    const QJsonObject config{
        {QStringLiteral("eos_token"), QStringLiteral("</s>")},
        {QStringLiteral("chat_template"),
         QStringLiteral("{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}{% if "
                        "add_generation_prompt %}assistant:{% endif %}")}};
    QFile t(QDir(dir).filePath(QStringLiteral("tokenizer.json")));
    QFile c(QDir(dir).filePath(QStringLiteral("tokenizer_config.json")));
    return t.open(QIODevice::WriteOnly) && t.write(QJsonDocument(tokenizer).toJson()) > 0 &&
           c.open(QIODevice::WriteOnly) && c.write(QJsonDocument(config).toJson()) > 0;
}

// The same 63 characters as a GPT-2-style byte-level tokenizer (its ByteLevel pre-tokenizer and
// decoder, space as "Ġ" and newline as "Ċ"), the form a GGUF export writes for llama.cpp.
inline bool writeByteLevelTokenizer(const QString& dir) {
    const QString chars =
        QStringLiteral(" abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.,?!:\n0123");
    QJsonObject vocab;
    for (qsizetype i = 0; i < chars.size(); ++i) {
        const QChar c = chars[i];
        vocab.insert(c == QLatin1Char(' ')    ? QString(QChar(0x120))
                     : c == QLatin1Char('\n') ? QString(QChar(0x10A))
                                              : QString(c),
                     int(i));
    }
    vocab.insert(QStringLiteral("</s>"), 63);
    const QJsonObject byteLevel{{QStringLiteral("type"), QStringLiteral("ByteLevel")},
                                {QStringLiteral("add_prefix_space"), false},
                                {QStringLiteral("trim_offsets"), true},
                                {QStringLiteral("use_regex"), true}};
    const QJsonObject tokenizer{
        {QStringLiteral("added_tokens"),
         QJsonArray{QJsonObject{{QStringLiteral("id"), 63},
                                {QStringLiteral("content"), QStringLiteral("</s>")},
                                {QStringLiteral("special"), true}}}},
        {QStringLiteral("pre_tokenizer"), byteLevel},
        {QStringLiteral("decoder"), byteLevel},
        {QStringLiteral("model"), QJsonObject{{QStringLiteral("type"), QStringLiteral("BPE")},
                                              {QStringLiteral("vocab"), vocab},
                                              {QStringLiteral("merges"), QJsonArray{}}}}};
    const QJsonObject config{{QStringLiteral("eos_token"), QStringLiteral("</s>")}};
    QFile t(QDir(dir).filePath(QStringLiteral("tokenizer.json")));
    QFile c(QDir(dir).filePath(QStringLiteral("tokenizer_config.json")));
    return t.open(QIODevice::WriteOnly) && t.write(QJsonDocument(tokenizer).toJson()) > 0 &&
           c.open(QIODevice::WriteOnly) && c.write(QJsonDocument(config).toJson()) > 0;
}

} // namespace hffolder
