#include "engine/record/recorder.h"

#include "common/failpoint.h"
#include "common/files.h"
#include "engine/runhistory.h"
#include "engine/step/modelcheck.h"
#include "model/ggufexport.h"
#include "model/model.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>

namespace tandem {

Recorder::Recorder(const RunConfig& config)
    : m_outDir(config.outDir)
    , m_model(config.model)
    , m_gguf(config.gguf) {}

Status Recorder::checkExports() const {
    return checkRunExports(m_model, m_gguf);
}

Status Recorder::open(bool resuming, int64_t savedStep) {
    m_savedStep = savedStep;
    if (!QDir().mkpath(m_outDir))
        return makeError(ErrorCode::Io,
                         QStringLiteral("cannot create the output folder %1").arg(m_outDir));
#if TANDEM_FAILPOINTS_BUILD
    if (const QString ledger = qEnvironmentVariable("TANDEM_SAMPLE_LEDGER"); !ledger.isEmpty()) {
        m_ledger.setFileName(ledger);
        if (!m_ledger.open(QIODevice::WriteOnly | QIODevice::Append))
            return makeError(ErrorCode::Io, QStringLiteral("cannot open the sample ledger %1: %2")
                                                .arg(ledger, m_ledger.errorString()));
        m_ledger.write(
            QJsonDocument(QJsonObject{{QStringLiteral("from"), qint64(resuming ? savedStep : 0)}})
                .toJson(QJsonDocument::Compact) +
            '\n');
        m_ledger.flush();
    }
#endif
    m_log.setFileName(QDir(m_outDir).filePath(RunFiles::metrics()));
    if (!m_log.open(QIODevice::WriteOnly | QIODevice::Text |
                    (resuming ? QIODevice::Append : QIODevice::Truncate)))
        return makeError(ErrorCode::Io,
                         QStringLiteral("cannot write metrics.jsonl in %1").arg(m_outDir));
    return success();
}

QString Recorder::checkpointPath() const {
    return QDir(m_outDir).filePath(RunFiles::checkpoint());
}

Status Recorder::checkpoint(const Model& module, const Optimizer& optimizer,
                            const RunState& state) {
    return written(writeRunCheckpoint(checkpointPath(), module, optimizer, state), state.step);
}

Status Recorder::checkpoint(const Model& module, const QList<LazyTensor>& optimizerState,
                            int64_t optimizerSteps, const RunState& state) {
    return written(
        writeRunCheckpoint(checkpointPath(), module, optimizerState, optimizerSteps, state),
        state.step);
}

Status Recorder::written(const Status& st, int64_t step) {
    if (!st)
        return makeError(st.error().code,
                         m_savedStep >= 0
                             ? QStringLiteral("%1. The checkpoint of step %2 in %3 is kept; "
                                              "resume from it with --resume")
                                   .arg(st.error().message)
                                   .arg(m_savedStep)
                                   .arg(checkpointPath())
                             : QStringLiteral("%1. No checkpoint of this run was written yet")
                                   .arg(st.error().message));
    m_savedStep = step;
    return success();
}

void Recorder::samples(int64_t step, int epoch, const std::vector<int64_t>& indices) {
    if (!m_ledger.isOpen() || indices.empty())
        return;
    QJsonArray a;
    for (int64_t i : indices)
        a.append(qint64(i));
    m_ledger.write(QJsonDocument(QJsonObject{{QStringLiteral("step"), qint64(step)},
                                             {QStringLiteral("epoch"), epoch},
                                             {QStringLiteral("samples"), a}})
                       .toJson(QJsonDocument::Compact) +
                   '\n');
    m_ledger.flush();
}

void Recorder::write(const QJsonObject& o) {
    if (!m_log.isOpen() || m_logFailed)
        return;
    const QByteArray line = QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
    if (m_log.write(line) != line.size() || !m_log.flush()) {
        m_logFailed = true;
        m_logError = writeError(m_log.fileName(), line.size(), m_log.errorString()).message;
    }
}

QString Recorder::step(const StepMetrics& m) {
    write(m.toJson());
    QString e;
    e.swap(m_logError);
    return e;
}

void Recorder::epoch(const EpochMetrics& m) {
    write(m.toJson());
}

void Recorder::summary(const RunSummary& s) {
    QJsonObject o = s.toJson();
    o.insert(QStringLiteral("type"), QStringLiteral("summary"));
    write(o);
}

Status Recorder::exportModel(const Model& module, const std::function<void(const QString&)>& log) {
    ExportContext context{ModelSource::parse(m_model), {}};
    for (const auto& [format, name] : RunFiles::exportsOf(module.kind(), module.hasAdapters()))
        if (auto st = module.exportAs(format, QDir(m_outDir).filePath(name), context); !st)
            return st;
    if (m_gguf.isEmpty() || !ggufQuantFromName(m_gguf, &context.gguf.quant))
        return success();
    context.gguf.name = QFileInfo(m_outDir).fileName();
    context.gguf.log = log;
    const QString out = QDir(m_outDir).filePath(RunFiles::gguf());
    if (auto st = module.exportAs(ExportFormat::Gguf, out, context); !st)
        return makeError(
            st.error().code,
            QStringLiteral("the GGUF export (--gguf %1): %2").arg(m_gguf, st.error().message));
    if (log)
        log(QStringLiteral("wrote %1 (%2, %3 MB) for llama.cpp and LM Studio; in Ollama: "
                           "ollama create %4 -f %5")
                .arg(QDir::toNativeSeparators(out), ggufQuantName(context.gguf.quant).toUpper())
                .arg(double(QFileInfo(out).size()) / 1e6, 0, 'f', 1)
                .arg(context.gguf.name.toLower(),
                     QDir::toNativeSeparators(QDir(m_outDir).filePath(
                         QFileInfo(out).completeBaseName() + QStringLiteral(".Modelfile")))));
    return success();
}

} // namespace tandem
