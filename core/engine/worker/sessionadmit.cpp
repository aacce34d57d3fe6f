#include "engine/worker/session.h"

// The worker's admission of a run: its model read and built, its dataset found, its replica
// started. A model of gigabytes takes tens of seconds to read on a busy machine, more than the
// coordinator waits for a peer that does not answer, so the idle compute thread does that work
// and this thread goes on answering pings. Each admission has a number: what comes back from
// one the session has since left (the coordinator came back, a new run began) is dropped.

#include "common/failpoint.h"
#include "engine/shard/shardplan.h"
#include "engine/step/memoryplan.h"
#include "net/connection.h"

#include <limits>

namespace tandem {

namespace {

// "; the memory plan counts on 1.2 GB for the model and 3 MB a sample, 8 at once", for the
// ready line.
QString planText(const MemoryPlanFigures& plan) {
    if (plan.fixedBytes <= 0)
        return {};
    QString text = QStringLiteral("; the memory plan counts on %1 for the model")
                       .arg(bytesText(plan.fixedBytes));
    if (plan.perSampleBytes > 0)
        text += QStringLiteral(" and %1 a sample").arg(bytesText(plan.perSampleBytes));
    if (plan.samplesAtOnce > 0)
        text += QStringLiteral(", %1 at once").arg(plan.samplesAtOnce);
    return text;
}

} // namespace

void WorkerSession::admit(const wire::RunSpec& spec, const QByteArray& archive,
                          const NamedTensors* base) {
    const uint64_t admission = ++m_admission;
    m_state = State::Loading;
    std::optional<NamedTensors> frozen;
    if (base)
        frozen = *base; // the tensors' storage is shared, not copied
    m_loop.runIdle(
        [this, admission, spec, archive, frozen = std::move(frozen), cache = datasetCache()] {
            (void)TANDEM_FAILPOINT("worker.admit"); // a stall stands in for a slow model
            // The archive is built in this machine's memory before the memory plan sizes it for
            // the device: one asking for more than the machine has is refused before it is
            // allocated.
            auto run = std::make_shared<Expected<AdmittedRun>>(
                admitRun(spec, archive, frozen ? &*frozen : nullptr, systemMemoryBytes()));
            std::shared_ptr<DatasetSplits> data;
            if (*run)
                data = localDataset(spec, cache);
            QMetaObject::invokeMethod(
                this, [this, admission, run, data] { onAdmitted(admission, *run, data); },
                Qt::QueuedConnection);
        });
}

void WorkerSession::onAdmitted(uint64_t admission, Expected<AdmittedRun>& run,
                               const std::shared_ptr<DatasetSplits>& data) {
    if (admission != m_admission || m_state != State::Loading)
        return;
    if (!run) // the coordinator's log says why this machine stays out
        return refuse(run.error().subject == ErrorSubject::Model ? wire::RejectCode::Schema
                                                                 : wire::RejectCode::Internal,
                      run.error().message);
    m_run = std::move(*run);
    const wire::RunSpec& spec = m_run->spec;
    // The worker's gradient bundles and the coordinator's weight bundles have this exact size;
    // the dataset is bounded by what a desktop can hold, token files (written to disk as they
    // arrive) by its free space.
    // A sharded run's setup also brings this machine's range of the fp32 weights and, resumed,
    // of the optimizer's state.
    m_conn->setBlobCap(
        wire::BlobKind::Tensors,
        std::max<qint64>(m_run->bundleCap(),
                         spec.sharded ? shardStateCap(m_run->layout.paramCount()) : 0));
    m_conn->setBlobCap(wire::BlobKind::Dataset, qint64(8) << 30);
    m_conn->setBlobCap(wire::BlobKind::Tokens, std::numeric_limits<qint64>::max());
    m_conn->setBlobSpill(wire::BlobKind::Tokens, datasetCache().dir());
    m_data = data;
    if (!m_data) {
        m_log(QStringLiteral("%1 is not here; receiving it from the coordinator")
                  .arg(spec.datasetSpec));
        m_state = State::AwaitData;
        m_conn->send(wire::DataRequest{spec.datasetHash});
        return;
    }
    becomeReady();
}

void WorkerSession::becomeReady() {
    m_shard.reset();
    m_loop.reset();
    const uint64_t admission = ++m_admission;
    m_state = State::Loading;
    // The run moves to the job and comes back with the replica: nothing here reads it meanwhile.
    auto run = std::make_shared<AdmittedRun>(std::move(*m_run));
    m_run.reset();
    m_loop.runIdle([this, admission, run, data = m_data, device = m_device] {
        auto note = std::make_shared<QString>();
        auto plan = std::make_shared<MemoryPlanFigures>();
        auto replica = std::make_shared<Expected<std::unique_ptr<ModelReplica>>>(
            startReplica(device, *run, data, note.get(), plan.get()));
        // The replica has its own copy: the model as it came would stay beside it for the whole
        // run, as much memory again as the model's weights.
        run->module = Model();
        QMetaObject::invokeMethod(
            this,
            [this, admission, run, replica, note, plan] {
                onReplicaStarted(admission, std::move(*run), *replica, *note, *plan);
            },
            Qt::QueuedConnection);
    });
}

void WorkerSession::onReplicaStarted(uint64_t admission, AdmittedRun run,
                                     Expected<std::unique_ptr<ModelReplica>>& replica,
                                     const QString& note, const MemoryPlanFigures& plan) {
    if (admission != m_admission || m_state != State::Loading)
        return;
    if (!note.isEmpty())
        m_log(note);
    if (!replica) {
        // The coordinator's log says why this machine stays out (a model too big for it).
        refuse(wire::RejectCode::Internal, replica.error().message);
        return;
    }
    wire::Ready ready;
    ready.schemaHash = run.spec.schemaHash;
    ready.device = m_device;
    ready.maxBatch = m_opt.maxBatch;
    ready.precision = nameOf((*replica)->precision());
    ready.precisionNote = (*replica)->precisionNote();
    m_events.joined(run.spec.runId, run.spec.mode, m_device.name, run.spec.datasetSpec,
                    m_data.get(), plan);
    const wire::RunSpec spec = run.spec;
    const OptimizerConfig optimizer = run.options.innerOptimizer;
    const DType wireDtype = run.wire;
    m_loop.start(std::move(run), std::move(*replica), m_conn);
    if (spec.sharded) {
        auto port = startShardPart(spec, wireDtype, optimizer, m_loop.replicaParams());
        if (!port)
            return refuse(wire::RejectCode::Protocol, port.error().message);
        ready.shardPort = *port;
    }
    m_state = State::Working;
    m_conn->send(ready);
    if (!ready.precisionNote.isEmpty())
        m_log(ready.precisionNote);
    m_log(QStringLiteral("ready on %1%2; %3 training samples%4")
              .arg(m_device.name, ready.precision == QLatin1String("fp32")
                                      ? QString()
                                      : QStringLiteral(" (%1 autocast)").arg(ready.precision))
              .arg(m_data->train.count())
              .arg(planText(plan)));
}

} // namespace tandem
