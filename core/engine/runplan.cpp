#include "engine/runplan.h"

#include <QDir>
#include <QFileInfo>

namespace tandem {

QString RunPlan::newRunFolder(const QString& parent, const QString& model, const QDateTime& when) {
    // A Hugging Face folder by its own name, whole ("Qwen2.5-0.5B", not "Qwen2").
    const ModelSource source = ModelSource::parse(model);
    const QString name = source.isHf() ? QFileInfo(QDir::cleanPath(source.path)).fileName()
                                       : QFileInfo(source.path).completeBaseName();
    const QString base = QDir(parent).filePath(when.toString(QStringLiteral("yyyyMMdd-HHmmss")) +
                                               QLatin1Char('-') + name);
    QString folder = base;
    for (int i = 2; QFileInfo::exists(folder); ++i)
        folder = base + QStringLiteral("~%1").arg(i);
    return folder;
}

Expected<RunConfig> RunPlan::resumeConfig(const QString& checkpoint) {
    auto c = checkpointConfig(checkpoint);
    if (!c)
        return c.error();
    RunConfig cfg = *c;
    cfg.maxSteps = 0;
    cfg.outDir = QFileInfo(checkpoint).absolutePath();
    return cfg;
}

void RunPlan::forgetMachines(RunConfig& config) {
    const RunConfig defaults;
    config.listen = defaults.listen;
    config.workers = defaults.workers;
    config.invites = defaults.invites;
    config.localWorker = defaults.localWorker;
    config.shard = defaults.shard;
    config.device = defaults.device;
}

QStringList RunPlan::fixedOnResume() {
    return {QStringLiteral("model"), QStringLiteral("data"),
            QStringLiteral("seed"),  QStringLiteral("batch"),
            QStringLiteral("lora"),  QStringLiteral("checkpoint-activations")};
}

} // namespace tandem
