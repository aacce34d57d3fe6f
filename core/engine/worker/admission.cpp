#include "engine/worker/admission.h"

#include "engine/shard/shardplan.h"
#include "engine/step/memoryplan.h"
#include "engine/training.h"
#include "engine/wire/wiretensors.h"
#include "model/model.h"
#include "model/openmodel.h"

namespace tandem {

qint64 AdmittedRun::bundleCap() const {
    return std::max(layout.bundleBytes(wire), outer ? outerBundleBytes(layout, *outer) : 0);
}

Expected<ReplicaOptions> replicaOptions(const wire::WorkerSettings& settings) {
    // The run description's own limits, applied to the values a worker was sent.
    RunConfig c;
    c.optimizer = settings.optimizer;
    c.momentum = settings.momentum;
    c.weightDecay = settings.weightDecay;
    c.precision = settings.precision;
    c.loss = settings.loss;
    c.beta = settings.beta;
    if (Status st = c.validate(); !st)
        return makeError(
            ErrorCode::Incompatible,
            QStringLiteral("the coordinator's run settings cannot be honoured here: %1")
                .arg(st.error().message));
    if (settings.loss == LossKind::Auto)
        return makeError(ErrorCode::Incompatible,
                         QStringLiteral("the coordinator's run settings leave the loss to choose; "
                                        "a worker computes the loss the coordinator chose"));
    ReplicaOptions r;
    r.innerOptimizer.kind = settings.optimizer;
    r.innerOptimizer.momentum = settings.momentum;
    r.innerOptimizer.weightDecay = settings.weightDecay;
    r.precision = settings.precision;
    r.loss = settings.loss;
    r.beta = settings.beta;
    return r;
}

Expected<AdmittedRun> admitRun(const wire::RunSpec& spec, const QByteArray& modelArchive,
                               const NamedTensors* base, int64_t memoryBytes) {
    AdmittedRun run;
    run.spec = spec;
    auto layout = ModelLayout::fromWire(spec.params, spec.buffers);
    auto options = replicaOptions(spec.settings);
    if (!options)
        return options.error();
    if (!layout)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("the coordinator's run description is malformed"));
    run.options = *options;
    run.wire = storageDtype(spec.wire);
    run.layout = *layout;
    // Local-SGD: weights after the first come as differences, deltas leave, in the outer wire.
    if (spec.mode == TrainMode::LocalSgd) {
        if (!spec.outerWire)
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("the coordinator's local-SGD run names no outer-wire "
                                            "format"));
        run.outer = *spec.outerWire;
    }
    // TorchScript runs code: this comes from a paired coordinator, the one place besides a file
    // the user chose that Tandem loads models from.
    auto module = modelFromArchive(modelArchive, QStringLiteral("the coordinator's model"), base,
                                   memoryBytes);
    if (!module)
        return module.error();
    run.module = *module;
    const QString mySchema = QString::fromLatin1(schemaHash(modelTensors(run.module)));
    if (mySchema != spec.schemaHash) {
        Error e = makeError(ErrorCode::Incompatible,
                            QStringLiteral("the model's schema here is %1 but the coordinator "
                                           "says %2")
                                .arg(mySchema.left(16), spec.schemaHash.left(16)));
        e.subject = ErrorSubject::Model;
        return e;
    }
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
                                                     const std::shared_ptr<DatasetSplits>& data,
                                                     QString* note, MemoryPlanFigures* plan) {
    // Sized to this device before the replica takes its memory: refused with the figures when
    // the model cannot fit, and never more samples in one pass than fit.
    RunConfig sized;
    sized.mode = run.spec.mode;
    sized.fragments = run.spec.mode == TrainMode::LocalSgd ? run.spec.fragments : 1;
    sized.optimizer = run.options.innerOptimizer.kind;
    sized.precision = run.options.precision;
    const QString widened =
        widenSlowFrozenBase(run.module, data->train, sized, device, MasterCopy::None);
    if (note)
        *note = widened;
    sized.wire = wireDtypeOf(run.wire);
    // A streaming run's worker is planned for streaming's copies, which its rounds then keep
    // to (roundFrom() refuses a round cut otherwise); one whose coordinator does not say is
    // planned for local-SGD's, the larger. In a sharded run it is planned as the coordinator
    // plans every sharded machine that computes.
    MemoryNeed need = run.spec.sharded
                          ? shardWorkerNeed(run.module, data->train, sized)
                          : memoryNeed(run.module, data->train, sized, MasterCopy::None);
    if (run.outer)
        need.hostBytes +=
            outerWorkerSideBytes(run.module, !run.spec.sharded, *run.outer, sized.fragments);
    // What crosses the wire stays in this machine's memory beside the replica. In a gradient mode:
    // the gradient bundle, kept from step to step, and the next step's weights, held until they
    // are applied. In the local modes: the weights whole once, then each round's difference in
    // the outer wire (the delta a round sends is counted above). A sharded run's exchange is in
    // shardWorkerNeed.
    if (!run.spec.sharded)
        need.hostBytes += run.outer ? run.bundleCap() : 2 * run.layout.bundleBytes(run.wire);
    const bool dataOnDevice = keepDataOnDevice(data->train, device, need);
    auto fits = samplesThatFit(need, device, QStringLiteral("this machine"));
    if (!fits)
        return fits.error();
    if (plan)
        *plan = {need.on(device).fixedBytes(), need.perSampleBytes, *fits};
    try {
        ReplicaOptions options = run.options;
        options.samplesPerPass = *fits;
        options.dataOnDevice = dataOnDevice;
        return std::make_unique<ModelReplica>(
            device, run.module, std::shared_ptr<const Dataset>(data, &data->train), options);
    } catch (const std::exception& e) {
        return makeError(
            ErrorCode::Runtime,
            QStringLiteral("cannot start on %1: %2")
                .arg(device.name, QString::fromUtf8(e.what()).section(QLatin1Char('\n'), 0, 0)));
    }
}

} // namespace tandem
