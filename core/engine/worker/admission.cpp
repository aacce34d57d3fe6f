#include "engine/worker/admission.h"

#include "engine/scriptmodel.h"
#include "engine/training.h"

namespace tandem {

qint64 AdmittedRun::bundleCap() const {
    return std::max(layout.bundleBytes(wire), outer ? outerBundleBytes(layout, *outer) : 0);
}

Expected<AdmittedRun> admitRun(const wire::RunSpec& spec, const QByteArray& modelArchive) {
    AdmittedRun run;
    run.spec = spec;
    auto wire = wireDtypeFromName(spec.wireDtype);
    auto layout = ModelLayout::fromWire(spec.params, spec.buffers);
    auto options = replicaOptions(spec.configJson);
    if (!options)
        return options.error();
    if (!wire || !layout)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("the coordinator's run description is malformed"));
    run.options = *options;
    run.wire = *wire;
    run.layout = *layout;
    // Local-SGD: weights after the first come as differences, deltas leave, in the outer wire.
    if (spec.mode == nameOf(TrainMode::LocalSgd)) {
        const std::optional<OuterWire> w = parse<OuterWire>(spec.outerWire);
        if (!w)
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("the coordinator's run description names an unknown "
                                            "outer-wire format \"%1\"")
                                 .arg(spec.outerWire));
        run.outer = *w;
    }
    // TorchScript runs code: this comes from a paired coordinator, the one place besides a file
    // the user chose that Tandem loads models from.
    auto module = loadScriptModule(modelArchive, QStringLiteral("the coordinator's model"));
    if (!module)
        return module.error();
    run.module = *module;
    const QString mySchema = QString::fromLatin1(schemaHash(modelTensors(run.module)));
    if (mySchema != spec.schemaHash)
        return makeError(ErrorCode::Incompatible,
                         QStringLiteral("the model's schema here is %1 but the coordinator says %2")
                             .arg(mySchema.left(16), spec.schemaHash.left(16)));
    return run;
}

std::shared_ptr<DatasetSplits> localDataset(const wire::RunSpec& spec, const DatasetCache& cache) {
    if (auto d = cache.find(spec.datasetHash, spec.trainSamples))
        return std::make_shared<DatasetSplits>(std::move(*d));
    auto d = loadDataset(spec.datasetSpec);
    if (d && QString::fromLatin1(d->contentHash) == spec.datasetHash)
        return std::make_shared<DatasetSplits>(std::move(*d));
    return nullptr;
}

Expected<std::unique_ptr<ModelReplica>> startReplica(const DeviceInfo& device,
                                                     const AdmittedRun& run,
                                                     const std::shared_ptr<DatasetSplits>& data) {
    try {
        return std::make_unique<ModelReplica>(
            device, run.module, std::shared_ptr<const Dataset>(data, &data->train), run.options);
    } catch (const std::exception& e) {
        return makeError(
            ErrorCode::Runtime,
            QStringLiteral("cannot start on %1: %2")
                .arg(device.name, QString::fromUtf8(e.what()).section(QLatin1Char('\n'), 0, 0)));
    }
}

} // namespace tandem
