#include "common/files.h"
#include "engine/hf/hfmodel.h"
#include "engine/hf/transformer.h"
#include "engine/runcheckpoint.h"
#include "engine/scriptmodel.h"
#include "engine/training.h"

#include <QDir>

namespace tandem {

namespace {

Status exportHf(const HfTransformer* model, ExportFormat format, const QString& out,
                const QString& sourceDir) {
    const bool folderFormat = format == ExportFormat::Hf || format == ExportFormat::Peft ||
                              format == ExportFormat::Merged;
    if (!model && folderFormat)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("hf, peft and merged export a Hugging Face model "
                                        "(--model hf:DIR); this run's model exports as "
                                        "torchscript or safetensors"));
    if (model && format == ExportFormat::TorchScript)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("a Hugging Face model is built natively, not as "
                                        "TorchScript: export it as hf, merged, peft (its "
                                        "adapters) or safetensors"));
    if (format == ExportFormat::Peft && !model->lora())
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("this run trained every weight, without adapters: "
                                        "export it as hf"));
    if (!QDir().mkpath(out))
        return makeError(ErrorCode::Io, QStringLiteral("cannot create the folder %1").arg(out));
    if (format == ExportFormat::Peft)
        return model->saveLoraAdapter(out);
    if (auto st = model->saveHfModel(out); !st)
        return st;
    return copyCompanionFiles(sourceDir, out);
}

} // namespace

Status exportCheckpoint(const QString& checkpoint, ExportFormat format, const QString& out) {
    auto c = loadRunCheckpoint(checkpoint);
    if (!c)
        return c.error();
    if (format == ExportFormat::Safetensors)
        return writeSafetensors(out, stateDictRecords(c->module),
                                {{QStringLiteral("format"), QStringLiteral("pt")},
                                 {QStringLiteral("tandem_model"), c->state.config.model}});
    if (c->module.transformer() || format != ExportFormat::TorchScript)
        return exportHf(c->module.transformer(), format, out, hfFolderOf(c->state.config.model));
    QByteArray bytes;
    try {
        c->module.eval();
        bytes = c->module.archive();
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("exporting TorchScript failed: %1")
                             .arg(QString::fromUtf8(e.what()).section(QLatin1Char('\n'), 0, 0)));
    }
    return writeFileAtomically(out, bytes);
}

} // namespace tandem
