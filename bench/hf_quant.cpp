// What holding a base in nf4 or int8 does to a model's predictions: the folder opened as it is
// and with its base quantized (--lora r=4,base=…: the adapters start at zero, so the model is
// the base), the same windows of tokens through each, in fp32 arithmetic:
//
//   bench_hf_quant DIR TOKENS [--windows N] [--context T]
//
// TOKENS is a little-endian uint32 token file. Prints one JSON line per base: the mean KL
// divergence of its next-token distributions from the unquantized base's, the mean
// cross-entropy on the windows' next tokens beside the unquantized base's, and the weights'
// bytes.
#include "model/modelsource.h"
#include "model/openmodel.h"
#include "model/torchcompat.h"

#include <ATen/ATen.h>

#include <QCoreApplication>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>

using namespace tandem;

namespace {

struct Result {
    at::Tensor logProbs; // [windows, context, vocab]
    double loss = 0;
    int64_t bytes = 0;
};

Expected<Result> run(const QString& dir, const QString& lora, const at::Tensor& ids) {
    auto model = openModel(ModelSource::parse(QStringLiteral("hf:") + dir), {lora, false, 1});
    if (!model)
        return model.error();
    Result r;
    for (const auto& [name, t] : model->parameters())
        r.bytes += t.numel() * int64_t(t.element_size());
    model->widenFrozenBase(); // fp32 arithmetic on a CPU, for every base alike
    model->eval();
    at::NoGradGuard noGrad;
    const at::Tensor x = ids.narrow(1, 0, ids.size(1) - 1), y = ids.narrow(1, 1, ids.size(1) - 1);
    r.logProbs = at::log_softmax(model->forward(x).to(at::kFloat), -1);
    r.loss =
        at::nll_loss(r.logProbs.reshape({-1, r.logProbs.size(-1)}), y.reshape({-1})).item<double>();
    return r;
}

} // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (args.size() < 3) {
        std::fprintf(stderr, "usage: bench_hf_quant DIR TOKENS [--windows N] [--context T]\n");
        return 2;
    }
    int64_t windows = 2, context = 128;
    for (int i = 3; i + 1 < args.size(); i += 2) {
        if (args[i] == QLatin1String("--windows"))
            windows = args[i + 1].toLongLong();
        else if (args[i] == QLatin1String("--context"))
            context = args[i + 1].toLongLong();
    }
    initTorchRuntime();
    QFile f(args[2]);
    if (!f.open(QIODevice::ReadOnly) || f.size() < 4 * windows * (context + 1)) {
        std::fprintf(stderr, "%s holds too few tokens\n", qPrintable(args[2]));
        return 1;
    }
    const QByteArray raw = f.read(4 * windows * (context + 1));
    const at::Tensor ids =
        at::from_blob(const_cast<char*>(raw.constData()), {windows, context + 1}, at::kInt)
            .to(at::kLong);
    auto reference = run(args[1], QStringLiteral("r=4"), ids);
    if (!reference) {
        std::fprintf(stderr, "%s\n", qPrintable(reference.error().message));
        return 1;
    }
    for (const char* base : {"bf16", "int8", "nf4"}) {
        auto q = QLatin1String(base) == QLatin1String("bf16")
                     ? Expected<Result>(*reference)
                     : run(args[1], QStringLiteral("r=4,base=") + QLatin1String(base), ids);
        if (!q) {
            std::fprintf(stderr, "%s\n", qPrintable(q.error().message));
            return 1;
        }
        // KL(reference || quantized), per position, averaged.
        const double kl = (reference->logProbs.exp() * (reference->logProbs - q->logProbs))
                              .sum(-1)
                              .mean()
                              .item<double>();
        const QJsonObject out{{QStringLiteral("base"), QLatin1String(base)},
                              {QStringLiteral("weights_mib"), double(q->bytes) / (1 << 20)},
                              {QStringLiteral("kl"), kl},
                              {QStringLiteral("loss"), q->loss},
                              {QStringLiteral("loss_bf16"), reference->loss},
                              {QStringLiteral("tokens"), qint64(windows * context)}};
        std::printf("%s\n", QJsonDocument(out).toJson(QJsonDocument::Compact).constData());
        std::fflush(stdout);
    }
    return 0;
}
