#include "common/files.h"
#include "engine/runcheckpoint.h"
#include "engine/scriptmodel.h"
#include "engine/training.h"

namespace tandem {

Status exportCheckpoint(const QString& checkpoint, ExportFormat format, const QString& out) {
    auto c = loadRunCheckpoint(checkpoint);
    if (!c)
        return c.error();
    if (format == ExportFormat::Safetensors)
        return writeSafetensors(out, stateDictRecords(c->module),
                                {{QStringLiteral("format"), QStringLiteral("pt")},
                                 {QStringLiteral("tandem_model"), c->state.config.model}});
    QByteArray bytes;
    try {
        c->module.eval();
        bytes = saveScriptModule(c->module);
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("exporting TorchScript failed: %1")
                             .arg(QString::fromUtf8(e.what()).section(QLatin1Char('\n'), 0, 0)));
    }
    return writeFileAtomically(out, bytes);
}

} // namespace tandem
