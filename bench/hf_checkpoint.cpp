// Gradient checkpointing's cost and saving on one training step of a Llama-shaped model built
// natively (core/engine/hf): random weights of the given shape, a batch of random tokens, one
// forward and backward pass, timed after a warm-up. Run once per setting, each in a process of
// its own, so that the peak resident memory (ru_maxrss) is that setting's.
//
//   bench_hf_checkpoint plain|checkpoint [HIDDEN LAYERS CONTEXT BATCH]
#include "engine/hf/config.h"
#include "engine/hf/transformer.h"
#include "engine/scriptmodel.h"

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

int main(int argc, char** argv) {
    if (argc < 2 ||
        (std::strcmp(argv[1], "plain") != 0 && std::strcmp(argv[1], "checkpoint") != 0)) {
        std::fprintf(stderr,
                     "usage: bench_hf_checkpoint plain|checkpoint [HIDDEN LAYERS CONTEXT BATCH]\n");
        return 2;
    }
    const bool checkpoint = std::strcmp(argv[1], "checkpoint") == 0;
    const int64_t hidden = argc > 2 ? std::atoll(argv[2]) : 512;
    const int64_t layers = argc > 3 ? std::atoll(argv[3]) : 8;
    const int64_t context = argc > 4 ? std::atoll(argv[4]) : 512;
    const int64_t batch = argc > 5 ? std::atoll(argv[5]) : 4;
    at::set_num_threads(2);
    QJsonObject o{
        {QStringLiteral("model_type"), QStringLiteral("llama")},
        {QStringLiteral("vocab_size"), 4096},
        {QStringLiteral("hidden_size"), qint64(hidden)},
        {QStringLiteral("intermediate_size"), qint64(hidden * 8 / 3)},
        {QStringLiteral("num_hidden_layers"), qint64(layers)},
        {QStringLiteral("num_attention_heads"), qint64(hidden / 64)},
        {QStringLiteral("num_key_value_heads"), qint64(std::max<int64_t>(hidden / 256, 1))},
        {QStringLiteral("max_position_embeddings"), qint64(context)}};
    auto config = parseHfConfig(QJsonDocument(o).toJson(), QStringLiteral("bench"));
    if (!config) {
        std::fprintf(stderr, "%s\n", qPrintable(config.error().message));
        return 1;
    }
    HfTransformer model(*config);
    QList<TensorRecord> weights;
    at::manual_seed(1);
    for (const auto& [name, shape] : model.expectedTensors())
        weights.append(toRecord(name, at::randn(shape) * 0.02));
    if (!model.load(weights))
        return 1;
    weights.clear();
    model.setTraining(true);
    model.setCheckpointActivations(checkpoint);
    const at::Tensor ids = at::randint(config->vocab, {batch, context}, at::kLong);
    double ms = 0;
    for (int i = 0; i < 3; ++i) { // one warm-up, then two timed steps
        QElapsedTimer clock;
        clock.start();
        const at::Tensor logits = *model.forward(ids);
        at::cross_entropy_loss(logits.reshape({-1, config->vocab}), ids.reshape({-1})).backward();
        for (const auto& [name, t] : model.parameters())
            t.mutable_grad() = at::Tensor();
        if (i > 0)
            ms += double(clock.nsecsElapsed()) / 1e6 / 2;
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("{\"setting\": \"%s\", \"parameters\": %lld, \"hidden\": %lld, \"layers\": %lld, "
                "\"context\": %lld, \"batch\": %lld, \"step_ms\": %.1f, \"peak_rss_mb\": %.1f}\n",
                argv[1], (long long)config->parameterCount(), (long long)hidden, (long long)layers,
                (long long)context, (long long)batch, ms, double(usage.ru_maxrss) / 1024.0);
    return 0;
}
