#include "model/openmodel.h"

#include "model/hf/hfmodel.h"
#include "model/scriptmodel.h"

namespace tandem {

Expected<Model> openModel(const ModelSource& source, const ModelOptions& options) {
    switch (source.kind) {
    case ModelSource::Kind::HfFolder:
        return openHfModel(source.path, options);
    case ModelSource::Kind::Checkpoint:
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("%1 is a run checkpoint: resume it (--resume) or export "
                                        "it (tandem export) instead of training it as a model")
                             .arg(source.path));
    case ModelSource::Kind::BuiltIn:
    case ModelSource::Kind::TorchScript:
        break;
    }
    if (!options.lora.isEmpty() || options.checkpointActivations)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("adapters (--lora) and recomputed activations "
                                        "(--checkpoint-activations) are for a Hugging Face model "
                                        "(--model hf:DIR); %1 is not one")
                             .arg(source.text()));
    return openScriptModel(source, options.seed);
}

Expected<Model> modelFromArchive(const QByteArray& archive, const QString& name,
                                 const NamedTensors* base, int64_t maxBytes) {
    if (isTandemCheckpoint(archive))
        return hfModelFromArchive(archive, name, base, maxBytes);
    if (base && !base->empty())
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1: a TorchScript model has no separate base").arg(name));
    return scriptModelFromArchive(archive, name);
}

Expected<Model> openFolderLikeArchive(const QString& dir, const QByteArray& archive) {
    if (!isHfArchive(archive))
        return makeError(ErrorCode::NotFound,
                         QStringLiteral("the run's model is not a Hugging Face model"));
    return openHfFolderAs(dir, archive);
}

} // namespace tandem
