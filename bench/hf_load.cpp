// What loading a Hugging Face folder costs in memory and time, as `tandem train --model hf:DIR`
// opens it (openModel), then after one forward pass over a few tokens, which reads every weight:
//
//   bench_hf_load DIR [--lora SPEC] [--tokens N]
//
// Prints one JSON line: the weights' bytes on disk, the seconds to open the model and to run the
// pass, and this process's resident memory (VmRSS) before opening, after it and after the pass,
// with its peak (VmHWM) after each, in MiB. Without --lora every weight trains (fp32 masters).
#include "model/modelsource.h"
#include "model/openmodel.h"
#include "model/torchcompat.h"

#include <ATen/ATen.h>

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>

using namespace tandem;

namespace {

// A field of /proc/self/status ("VmRSS", "VmHWM"), in MiB.
double statusMiB(const char* field) {
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray key = QByteArray(field) + ':';
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith(key))
            return line.mid(key.size()).trimmed().split(' ').value(0).toDouble() / 1024.0;
    return -1;
}

qint64 weightBytes(const QString& dir) {
    qint64 total = 0;
    for (const QFileInfo& fi : QDir(dir).entryInfoList({QStringLiteral("*.safetensors")}))
        total += fi.size();
    return total;
}

} // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (args.size() < 2) {
        std::fprintf(stderr, "usage: bench_hf_load DIR [--lora SPEC] [--tokens N]\n");
        return 2;
    }
    const QString dir = args[1];
    ModelOptions options;
    int64_t tokens = 8;
    for (int i = 2; i + 1 < args.size(); i += 2) {
        if (args[i] == QLatin1String("--lora"))
            options.lora = args[i + 1];
        else if (args[i] == QLatin1String("--tokens"))
            tokens = args[i + 1].toLongLong();
    }
    initTorchRuntime();
    QJsonObject out{{QStringLiteral("folder"), QFileInfo(dir).fileName()},
                    {QStringLiteral("weights_mib"), double(weightBytes(dir)) / (1 << 20)},
                    {QStringLiteral("lora"), options.lora},
                    {QStringLiteral("rss_before_mib"), statusMiB("VmRSS")}};
    QElapsedTimer t;
    t.start();
    auto model = openModel(ModelSource::parse(QStringLiteral("hf:") + dir), options);
    if (!model) {
        std::fprintf(stderr, "%s\n", qPrintable(model.error().message));
        return 1;
    }
    out.insert(QStringLiteral("open_s"), double(t.nsecsElapsed()) / 1e9);
    out.insert(QStringLiteral("rss_open_mib"), statusMiB("VmRSS"));
    out.insert(QStringLiteral("peak_open_mib"), statusMiB("VmHWM"));
    t.restart();
    {
        at::NoGradGuard noGrad;
        model->eval();
        const at::Tensor ids = at::arange(tokens, at::kLong).remainder(100).unsqueeze(0);
        const at::Tensor logits = model->forward(ids);
        out.insert(QStringLiteral("logits_finite"), bool(logits.isfinite().all().item<bool>()));
    }
    out.insert(QStringLiteral("forward_s"), double(t.nsecsElapsed()) / 1e9);
    out.insert(QStringLiteral("rss_forward_mib"), statusMiB("VmRSS"));
    out.insert(QStringLiteral("peak_forward_mib"), statusMiB("VmHWM"));
    std::printf("%s\n", QJsonDocument(out).toJson(QJsonDocument::Compact).constData());
    return 0;
}
