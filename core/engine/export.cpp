#include "engine/runcheckpoint.h"
#include "engine/training.h"
#include "model/model.h"

#include <QDir>
#include <QFileInfo>

namespace tandem {

Status exportCheckpoint(const QString& checkpoint, ExportFormat format, const QString& out,
                        const GgufOptions& gguf) {
    auto c = loadRunCheckpoint(checkpoint);
    if (!c)
        return c.error();
    // A folder that does not exist yet is made; a file's folder must exist.
    const bool folder = format == ExportFormat::Hf || format == ExportFormat::Peft ||
                        format == ExportFormat::Merged;
    if (folder && !QDir().mkpath(out))
        return makeError(ErrorCode::Io, QStringLiteral("cannot create the folder %1").arg(out));
    if (!folder && !QFileInfo(out).absoluteDir().exists())
        return makeError(ErrorCode::NotFound,
                         QStringLiteral("the folder of %1 does not exist").arg(out));
    return c->module.exportAs(format, out, {ModelSource::parse(c->state.config.model), gguf});
}

} // namespace tandem
