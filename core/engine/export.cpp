#include "engine/record/runcheckpoint.h"
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
    // A folder that does not exist yet is made, and so is a file's.
    const bool folder = format == ExportFormat::Hf || format == ExportFormat::Peft ||
                        format == ExportFormat::Merged;
    const QString dir = folder ? out : QFileInfo(out).absolutePath();
    if (!QDir().mkpath(dir))
        return makeError(ErrorCode::Io, QStringLiteral("cannot create the folder %1").arg(dir));
    return c->module.exportAs(format, out, {ModelSource::parse(c->state.config.model), gguf});
}

} // namespace tandem
