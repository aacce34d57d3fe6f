// One training step of a model built natively (core/engine/hf), for memory and speed: random
// weights of a GPT-2 or Llama shape, a batch of random tokens, one forward and backward pass,
// timed after a warm-up (the mean of the timed steps). Run once per setting, each in a process
// of its own, so that the peak resident memory (ru_maxrss) is that setting's.
//
//   bench_hf_step FAMILY full|checkpoint|lora [HIDDEN LAYERS CONTEXT BATCH [STEPS]]
//   bench_hf_step FAMILY generate [HIDDEN LAYERS PROMPT 1 TOKENS]
//
// FAMILY: gpt2, llama, or qwen3, gemma3, phi3, smollm3, olmo2, granite (the Llama shape with
// each family's own features, familyShape).
//
// gpt2 defaults to GPT-2 small (768, 12 layers, vocabulary 50257), llama to a 26 M parameter
// shape (512, 8 layers, vocabulary 4096); context 512 and batch 4. lora is r=8 on the
// attention projections (c_attn for GPT-2), the base weights frozen. Prints one JSON line.
#include "model/hf/config.h"
#include "model/hf/lora.h"
#include "model/hf/transformer.h"
#include "model/scriptmodel.h"

#include <ATen/ATen.h>
#include <torch/torch.h>

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace tandem;

namespace {

// The Llama shape with each family's own features at the same width and depth: q/k norms
// (Qwen3, OLMo 2), Gemma 3's four norms, GeGLU, scaled scores and five local layers of 512 to
// each global one, Phi's fused projections and partial rotation, SmolLM3's layers without
// positions, Granite's multipliers.
QJsonObject familyShape(const std::string& family, QJsonObject c) {
    const auto set = [&c](const char* key, const QJsonValue& v) {
        c.insert(QLatin1String(key), v);
    };
    set("tie_word_embeddings", false); // as the Llama shape, so that the sizes match
    if (family == "qwen3") {
        set("model_type", QStringLiteral("qwen3"));
        set("head_dim", 64);
    } else if (family == "gemma3") {
        set("model_type", QStringLiteral("gemma3_text"));
        set("head_dim", 64);
        set("query_pre_attn_scalar", 64);
        set("sliding_window", 512);
        set("sliding_window_pattern", 6);
        set("rope_local_base_freq", 10000.0);
        set("hidden_activation", QStringLiteral("gelu_pytorch_tanh"));
    } else if (family == "phi3") {
        set("model_type", QStringLiteral("phi3"));
        set("partial_rotary_factor", 0.75);
    } else if (family == "smollm3") {
        set("model_type", QStringLiteral("smollm3"));
        set("no_rope_layer_interval", 4);
    } else if (family == "olmo2") {
        set("model_type", QStringLiteral("olmo2"));
    } else if (family == "granite") {
        set("model_type", QStringLiteral("granite"));
        set("embedding_multiplier", 12.0);
        set("attention_multiplier", 0.015625);
        set("residual_multiplier", 0.22);
        set("logits_scaling", 8.0);
    }
    return c;
}

QJsonObject shape(bool gpt2, int64_t hidden, int64_t layers, int64_t context) {
    if (gpt2)
        return QJsonObject{
            {QStringLiteral("model_type"), QStringLiteral("gpt2")},
            {QStringLiteral("vocab_size"), 50257},
            {QStringLiteral("n_positions"), qint64(std::max<int64_t>(context, 1024))},
            {QStringLiteral("n_embd"), qint64(hidden)},
            {QStringLiteral("n_layer"), qint64(layers)},
            {QStringLiteral("n_head"), qint64(hidden / 64)}};
    return QJsonObject{
        {QStringLiteral("model_type"), QStringLiteral("llama")},
        {QStringLiteral("vocab_size"), 4096},
        {QStringLiteral("hidden_size"), qint64(hidden)},
        {QStringLiteral("intermediate_size"), qint64(hidden * 8 / 3)},
        {QStringLiteral("num_hidden_layers"), qint64(layers)},
        {QStringLiteral("num_attention_heads"), qint64(hidden / 64)},
        {QStringLiteral("num_key_value_heads"), qint64(std::max<int64_t>(hidden / 256, 1))},
        {QStringLiteral("max_position_embeddings"), qint64(context)}};
}

// Greedy generation of `count` tokens after a prompt of `prompt` random ids, with the KV cache
// and without it (the whole text again for every token): tokens per second for each.
int generate(const HfTransformer& model, const HfConfig& config, int64_t prompt, int count) {
    at::NoGradGuard noGrad;
    const at::Tensor start = at::randint(config.vocab, {1, prompt}, at::kLong);
    double perSecond[2] = {0, 0};
    std::vector<int64_t> produced[2];
    for (int cached = 0; cached < 2; ++cached) {
        HfTransformer::KvCache cache;
        at::Tensor all = start, next = start;
        QElapsedTimer clock;
        clock.start();
        for (int i = 0; i < count; ++i) {
            const at::Tensor logits =
                cached ? model.logits(next, {false, 0, &cache}) : model.logits(all);
            const int64_t id = logits[0][logits.size(1) - 1].argmax().item<int64_t>();
            produced[cached].push_back(id);
            next = at::full({1, 1}, id, at::kLong);
            all = at::cat({all, next}, 1);
        }
        perSecond[cached] = double(count) / (double(clock.nsecsElapsed()) / 1e9);
    }
    std::printf("{\"setting\": \"generate\", \"parameters\": %lld, \"prompt\": %lld, "
                "\"tokens\": %d, \"tokens_per_s_without_cache\": %.1f, "
                "\"tokens_per_s_with_cache\": %.1f, \"same_tokens\": %s}\n",
                (long long)model.parameterCount(), (long long)prompt, count, perSecond[0],
                perSecond[1], produced[0] == produced[1] ? "true" : "false");
    return produced[0] == produced[1] ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
    const char* usage = "usage: bench_hf_step FAMILY full|checkpoint|lora "
                        "[HIDDEN LAYERS CONTEXT BATCH [STEPS]]\n"
                        "       bench_hf_step FAMILY save DIR [HIDDEN LAYERS CONTEXT]\n"
                        "FAMILY: gpt2 llama qwen3 gemma3 phi3 smollm3 olmo2 granite\n";
    if (argc < 3) {
        std::fputs(usage, stderr);
        return 2;
    }
    const bool gpt2 = std::strcmp(argv[1], "gpt2") == 0;
    const std::string family = argv[1];
    const bool known = gpt2 || family == "llama" || family == "qwen3" || family == "gemma3" ||
                       family == "phi3" || family == "smollm3" || family == "olmo2" ||
                       family == "granite";
    const std::string setting = argv[2];
    // "save DIR": the same random model written as a Hugging Face folder, for `tandem train`.
    const bool save = setting == "save" && argc > 3;
    const int shift = save ? 1 : 0;
    if (!known || (setting != "full" && setting != "checkpoint" && setting != "lora" &&
                   setting != "generate" && !save)) {
        std::fputs(usage, stderr);
        return 2;
    }
    const int64_t hidden = argc > 3 + shift ? std::atoll(argv[3 + shift]) : (gpt2 ? 768 : 512);
    const int64_t layers = argc > 4 + shift ? std::atoll(argv[4 + shift]) : (gpt2 ? 12 : 8);
    const int64_t context = argc > 5 + shift ? std::atoll(argv[5 + shift]) : 512;
    const int64_t batch = argc > 6 ? std::atoll(argv[6]) : 4;
    const int steps = argc > 7 ? std::atoi(argv[7]) : 2;
    at::set_num_threads(2);
    auto config = parseHfConfig(
        QJsonDocument(gpt2 ? shape(true, hidden, layers, context)
                           : familyShape(family, shape(false, hidden, layers, context)))
            .toJson(),
        QStringLiteral("bench"));
    if (!config) {
        std::fprintf(stderr, "%s\n", qPrintable(config.error().message));
        return 1;
    }
    HfTransformer model(*config);
    {
        NamedTensors weights;
        at::manual_seed(1);
        for (const auto& [name, s] : model.expectedTensors())
            weights.emplace_back(name, at::randn(s) * 0.02);
        if (!model.load(weights))
            return 1;
    }
    if (save)
        return model.saveHfModel(QString::fromLocal8Bit(argv[3])) ? 0 : 1;
    if (setting == "generate")
        return generate(model, *config, context, steps);
    if (setting == "lora" &&
        !model.addLora(*parseLoraSpec(QStringLiteral("r=8"), *config->family), 1))
        return 1;
    model.setCheckpointActivations(setting == "checkpoint");
    const at::Tensor ids = at::randint(config->vocab, {batch, context}, at::kLong);
    double ms = 0;
    for (int i = 0; i <= steps; ++i) { // one warm-up, then the timed steps
        QElapsedTimer clock;
        clock.start();
        const at::Tensor logits = *model.forward(ids, {true, 0, nullptr});
        at::cross_entropy_loss(logits.reshape({-1, config->vocab}), ids.reshape({-1})).backward();
        for (const auto& [name, t] : model.parameters())
            t.mutable_grad() = at::Tensor();
        if (i > 0)
            ms += double(clock.nsecsElapsed()) / 1e6 / steps;
    }
    rusage resources{};
    getrusage(RUSAGE_SELF, &resources);
    std::printf("{\"family\": \"%s\", \"setting\": \"%s\", \"parameters\": %lld, \"hidden\": "
                "%lld, \"layers\": %lld, \"context\": %lld, \"batch\": %lld, \"step_ms\": %.1f, "
                "\"tokens_per_s\": %.1f, \"peak_rss_mb\": %.1f}\n",
                argv[1], setting.c_str(), (long long)model.parameterCount(), (long long)hidden,
                (long long)layers, (long long)context, (long long)batch, ms,
                double(batch * context) / (ms / 1000.0), double(resources.ru_maxrss) / 1024.0);
    return 0;
}
