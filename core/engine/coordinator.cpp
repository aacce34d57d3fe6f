// The training loop: the coordinator's side. It owns the master weights, the optimizer, the
// sampler and the metrics, and drives workers through WorkerLink. With one local worker this
// is the whole of a one-machine run; the distributed run reuses it with remote links.

#include "balancer.h"
#include "files.h"
#include "hub.h"
#include "optimizer.h"
#include "runcheckpoint.h"
#include "sampler.h"
#include "scriptmodel.h"
#include "training.h"
#include "wiretensors.h"
#include "worker.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSaveFile>
#include <QThread>

#include <ATen/Parallel.h>

#include <cmath>
#include <deque>

Q_LOGGING_CATEGORY(lcTrain, "tandem.train")

namespace tandem {

int setTorchThreads(int threads, QString* warning) {
    at::set_num_threads(threadsFor(threads, QThread::idealThreadCount(), warning));
    return at::get_num_threads();
}

Expected<RunConfig> checkpointConfig(const QString& checkpoint) {
    auto f = readCheckpoint(checkpoint);
    if (!f)
        return f.error();
    if (f->meta.value(QStringLiteral("kind")).toString() != QLatin1String("tandem-run"))
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1 is not a Tandem run checkpoint").arg(checkpoint));
    return RunConfig::fromJson(f->meta.value(QStringLiteral("config")).toObject());
}

namespace {

QString firstLine(const std::exception& e) {
    QString m = QString::fromUtf8(e.what());
    const qsizetype nl = m.indexOf(QLatin1Char('\n'));
    return nl > 0 ? m.left(nl) : m;
}

QString shapeText(at::IntArrayRef s) {
    QStringList parts;
    for (int64_t d : s)
        parts << QString::number(d);
    return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

// Runs the model once on two samples before any training, so a model that does not fit the
// data fails with a sentence instead of on the first step of a worker.
Status checkModelFits(torch::jit::Module& module, const DatasetSplits& data,
                      const QString& modelName) {
    const int64_t n = std::min<int64_t>(2, data.train.count());
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < n; ++i)
        idx.push_back(i);
    at::Tensor x = gatherInputs(data.train, idx);
    try {
        at::NoGradGuard noGrad;
        module.eval();
        c10::IValue out = module.forward({x});
        module.train();
        if (!out.isTensor())
            return makeError(
                ErrorCode::Incompatible,
                QStringLiteral("model %1 must return one tensor of class scores").arg(modelName));
        const at::Tensor y = out.toTensor();
        if (y.dim() != 2 || y.size(0) != n || y.size(1) < data.numClasses)
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("model %1 returns shape %2 for inputs of shape %3; "
                                            "it must return [batch, %4] class scores for %5")
                                 .arg(modelName, shapeText(y.sizes()), shapeText(x.sizes()))
                                 .arg(data.numClasses)
                                 .arg(data.description));
    } catch (const std::exception& e) {
        module.train();
        return makeError(ErrorCode::Incompatible,
                         QStringLiteral("model %1 cannot take inputs of shape %2 from %3: %4")
                             .arg(modelName, shapeText(x.sizes()), data.description, firstLine(e)));
    }
    return success();
}

struct Accum {
    double lossSum = 0;
    int64_t correct = 0;
    int64_t samples = 0;
    int64_t steps = 0;
    double loss() const { return samples ? lossSum / double(samples) : 0; }
    double accuracy() const { return samples ? double(correct) / double(samples) : 0; }
};

std::pair<double, double> evaluate(torch::jit::Module& module, const Dataset& test, int batch) {
    at::NoGradGuard noGrad;
    module.eval();
    double lossSum = 0;
    int64_t correct = 0;
    std::vector<int64_t> idx;
    for (int64_t start = 0; start < test.count(); start += batch) {
        idx.clear();
        for (int64_t i = start; i < std::min(test.count(), start + batch); ++i)
            idx.push_back(i);
        at::Tensor x = gatherInputs(test, idx);
        at::Tensor y = gatherLabels(test, idx);
        at::Tensor logits = module.forward({x}).toTensor();
        lossSum +=
            at::nll_loss(at::log_softmax(logits, 1), y, {}, at::Reduction::Sum).item<double>();
        correct += logits.argmax(1).eq(y).sum().item<int64_t>();
    }
    module.train();
    const double n = double(std::max<int64_t>(1, test.count()));
    return {lossSum / n, double(correct) / n};
}

// Cuts `indices` into consecutive slices of the given sizes.
std::vector<std::vector<int64_t>> sliceBatch(const std::vector<int64_t>& indices,
                                             const std::vector<int64_t>& counts) {
    std::vector<std::vector<int64_t>> out(counts.size());
    size_t pos = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
        const size_t n = std::min(size_t(std::max<int64_t>(0, counts[i])), indices.size() - pos);
        out[i].assign(indices.begin() + long(pos), indices.begin() + long(pos + n));
        pos += n;
    }
    return out;
}

// A worker taking part in the run, with what the summary reports about it.
struct Member {
    std::shared_ptr<WorkerLink> link;
    RemoteWorker* remote = nullptr; // null for the in-process worker
    WorkerSummary stats;
    bool alive = true;
    bool leftOut = false; // the balancer gives it no samples
    int64_t leftOutSince = 0;
    // The most samples its device fit at once after it ran out of memory (0: it never did).
    // The balancer never gives it more, so the share that failed is never tried again.
    int64_t memoryCap = 0;

    // The most samples this worker may take in one step (0: no limit). Both limits are per
    // forward pass; a local-SGD round makes `passes` of them.
    int64_t cap(int64_t passes) const {
        const int64_t asked = remote ? remote->maxBatch() : 0;
        const int64_t perPass =
            asked > 0 && memoryCap > 0 ? std::min(asked, memoryCap) : std::max(asked, memoryCap);
        return perPass * passes;
    }
};

// Steps between re-measurements of a worker the balancer left out.
constexpr int64_t kProbeEvery = 50;

// metrics.jsonl: each line reaches the file as it is written (it is small), so a run that is
// killed keeps its log up to the last step. A failed write is reported once, with the reason;
// training goes on, since the checkpoint, not the log, is what a resume needs.
class MetricsLog {
public:
    bool open(const QString& path, bool append) {
        m_file.setFileName(path);
        return m_file.open(QIODevice::WriteOnly | QIODevice::Text |
                           (append ? QIODevice::Append : QIODevice::Truncate));
    }
    void write(const QJsonObject& o) {
        if (!m_file.isOpen() || m_failed)
            return;
        const QByteArray line = QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
        if (m_file.write(line) != line.size() || !m_file.flush()) {
            m_failed = true;
            m_error = writeError(m_file.fileName(), line.size(), m_file.errorString()).message;
        }
    }
    // The first write error, once; empty when there is none to report.
    QString takeError() {
        QString e;
        e.swap(m_error);
        return e;
    }

private:
    QFile m_file;
    bool m_failed = false;
    QString m_error;
};

} // namespace

Expected<QString> checkRunInputs(const RunConfig& cfg) {
    auto data = loadDataset(cfg.data);
    if (!data)
        return data.error();
    auto m =
        isZooModel(cfg.model) ? buildZooModel(cfg.model, cfg.seed) : loadScriptModule(cfg.model);
    if (!m)
        return m.error();
    if (auto st = checkModelFits(*m, *data, cfg.model); !st)
        return st.error();
    int64_t parameters = 0;
    for (const at::Tensor& p : modelTensors(*m).params)
        parameters += p.numel();
    return QStringLiteral("%1: %2 parameters; %3: %4 training and %5 test samples, %6 classes")
        .arg(QFileInfo(cfg.model).fileName())
        .arg(parameters)
        .arg(data->description)
        .arg(data->train.count())
        .arg(data->test.count())
        .arg(data->numClasses);
}

Expected<RunSummary> runTraining(const RunConfig& cfg, const QString& resumeFrom,
                                 RunObserver* observer, RunControl* control) {
    RunObserver nullObserver;
    RunObserver& obs = observer ? *observer : nullObserver;
    if (auto st = cfg.validate(); !st)
        return st.error();
    if (cfg.outDir.isEmpty())
        return makeError(ErrorCode::InvalidArgument, QStringLiteral("no output folder given"));
    QString threadWarning;
    const int threads = setTorchThreads(cfg.threads, &threadWarning);
    if (!threadWarning.isEmpty())
        obs.onMessage(threadWarning);

    auto loaded = loadDataset(cfg.data);
    if (!loaded)
        return loaded.error();
    auto data = std::make_shared<DatasetSplits>(std::move(*loaded));
    data->limitTrain(cfg.limitTrain);
    data->limitTest(cfg.limitTest);
    auto train = std::shared_ptr<const Dataset>(data, &data->train);

    // The model and, when resuming, the state to continue from.
    torch::jit::Module module;
    std::optional<LoadedCheckpoint> ckpt;
    if (!resumeFrom.isEmpty()) {
        auto c = loadRunCheckpoint(resumeFrom);
        if (!c)
            return c.error();
        if (c->state.datasetHash != QString::fromLatin1(data->contentHash))
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("%1 was trained on different data than %2 (content "
                                            "hash %3 against %4); resume with the same dataset")
                                 .arg(resumeFrom, cfg.data, c->state.datasetHash.left(12),
                                      QString::fromLatin1(data->contentHash.left(12))));
        module = c->module;
        ckpt = std::move(*c);
    } else {
        auto m = isZooModel(cfg.model) ? buildZooModel(cfg.model, cfg.seed)
                                       : loadScriptModule(cfg.model);
        if (!m)
            return m.error();
        module = *m;
    }
    if (auto st = checkModelFits(module, *data, cfg.model); !st)
        return st.error();

    ModelTensors master = modelTensors(module);
    int64_t parameterCount = 0;
    for (const at::Tensor& p : master.params)
        parameterCount += p.numel();
    auto kind = optimizerKindFromName(cfg.optimizer);
    if (!kind)
        return kind.error();
    OptimizerConfig ocfg;
    ocfg.kind = *kind;
    ocfg.momentum = cfg.momentum;
    ocfg.weightDecay = cfg.effectiveWeightDecay();
    const bool localSgd = cfg.mode == QLatin1String("local-sgd");
    const bool async = cfg.mode == QLatin1String("async");
    // In local-SGD the run's optimizer runs on the workers (inner steps); the coordinator
    // applies the averaged parameter delta with Nesterov momentum (the outer optimizer).
    OptimizerConfig outer;
    outer.kind = OptimizerConfig::Kind::Sgd;
    outer.momentum = cfg.outerMomentum;
    outer.nesterov = true;
    Optimizer optimizer(localSgd ? outer : ocfg, master.params);
    // Samples one step (a round, in local-SGD) consumes.
    const int64_t perStep = localSgd ? int64_t(cfg.batch) * cfg.localSteps : cfg.batch;

    EpochSampler sampler(data->train.count(), cfg.seed);
    RunState state;
    state.config = cfg;
    state.datasetHash = QString::fromLatin1(data->contentHash);
    state.schemaHash = QString::fromLatin1(schemaHash(master));
    Accum epochAcc;
    if (ckpt) {
        const RunState& s = ckpt->state;
        if (!sampler.seek(s.epoch, s.position))
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1: sampler position %2 is outside the dataset")
                                 .arg(resumeFrom)
                                 .arg(s.position));
        if (auto st = optimizer.restore(ckpt->optimizerSteps, ckpt->optimizerState); !st)
            return makeError(st.error().code,
                             QStringLiteral("%1: %2").arg(resumeFrom, st.error().message));
        state.step = s.step;
        state.completedEpochs = s.completedEpochs;
        state.lastTestAccuracy = s.lastTestAccuracy;
        state.lastTestLoss = s.lastTestLoss;
        epochAcc = Accum{s.epochLossSum, s.epochCorrect, s.epochSamples, s.epochSteps};
    }

    if (!QDir().mkpath(cfg.outDir))
        return makeError(ErrorCode::Io,
                         QStringLiteral("cannot create the output folder %1").arg(cfg.outDir));
    const QString ckptPath = QDir(cfg.outDir).filePath(QStringLiteral("checkpoint.tandem"));
    MetricsLog log;
    if (!log.open(QDir(cfg.outDir).filePath(QStringLiteral("metrics.jsonl")), ckpt.has_value()))
        return makeError(ErrorCode::Io,
                         QStringLiteral("cannot write metrics.jsonl in %1").arg(cfg.outDir));
    // Workers: this machine's best device, or the one the run names, and the remote workers
    // that join through the hub. Both are WorkerLinks; the loop below does not tell them apart.
    const QList<DeviceInfo> devices = detectDevices();
    std::vector<Member> members;
    if (cfg.localWorker) {
        auto device = chooseDevice(devices, cfg.device);
        if (!device)
            return device.error();
        try {
            ReplicaOptions ro;
            ro.innerOptimizer = ocfg;
            ro.precision = precisionFromName(cfg.precision).value_or(Precision::Fp32);
            auto local =
                std::make_shared<LocalWorker>(QStringLiteral("local"), *device, module, train, ro);
            if (!local->replica().precisionNote().isEmpty())
                obs.onMessage(local->replica().precisionNote());
            else if (ro.precision != Precision::Fp32)
                obs.onMessage(QStringLiteral("computing in %1 autocast on %2, with fp32 weights")
                                  .arg(cfg.precision, device->name));
            Member m;
            m.link = std::move(local);
            m.stats.name = m.link->name();
            m.stats.device = device->name;
            members.push_back(std::move(m));
        } catch (const std::exception& e) {
            return makeError(
                ErrorCode::Runtime,
                QStringLiteral("cannot start a worker on %1: %2").arg(device->name, firstLine(e)));
        }
    }
    // What a worker's result says beyond its gradient: its log lines, and a lower memory cap.
    const auto noteResult = [&](Member& m, const WorkResult& r) {
        for (const QString& n : r.notes)
            obs.onMessage(QStringLiteral("%1: %2").arg(m.stats.name, n));
        if (r.memoryCap > 0 && (m.memoryCap == 0 || r.memoryCap < m.memoryCap)) {
            m.memoryCap = r.memoryCap;
            if (r.notes.isEmpty()) // a remote worker: its own log has the details
                obs.onMessage(QStringLiteral("%1 ran out of memory and retried in smaller parts; "
                                             "it takes at most %2 samples at once from now on")
                                  .arg(m.stats.name)
                                  .arg(m.memoryCap));
        }
    };
    auto wire = wireDtypeFromName(cfg.wire);
    if (!wire)
        return wire.error();
    const ModelLayout layout =
        ModelLayout::of(master.paramNames, master.params, master.bufferNames, master.buffers);
    std::unique_ptr<CoordinatorHub> hub;
    auto forwardHubMessages = [&] {
        if (hub)
            for (const QString& m : hub->takeMessages())
                obs.onMessage(m);
    };
    auto admitJoined = [&] {
        if (!hub)
            return;
        for (auto& w : hub->takeJoined()) {
            Member m;
            m.remote = w.get();
            m.link = w;
            m.stats.name = w->name();
            m.stats.device = w->device().name;
            members.push_back(std::move(m));
        }
    };
    if (!cfg.listen.isEmpty()) {
        auto hp = parseHostPort(cfg.listen);
        if (!hp)
            return hp.error();
        HubConfig hc;
        hc.home = nodeHome(cfg.home);
        const QString host = hp->first;
        // "::" means both IPv6 and IPv4, as for `serve`: invited peers connect back over
        // whichever kind of address they know this machine by.
        hc.address = host == QLatin1String("localhost") ? QHostAddress(QHostAddress::LocalHost)
                     : host == QLatin1String("::")      ? QHostAddress(QHostAddress::Any)
                                                        : QHostAddress(host);
        if (hc.address.isNull())
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("--listen: \"%1\" is not an IP address").arg(host));
        hc.port = hp->second;
        hc.workerTimeoutMs = cfg.workerTimeoutS * 1000;
        hc.runId = QString::fromLatin1(state.schemaHash.left(8).toLatin1()) + QStringLiteral("-") +
                   QString::number(QDateTime::currentMSecsSinceEpoch());
        hc.configJson = QJsonDocument(cfg.toJson()).toJson(QJsonDocument::Compact);
        try {
            hc.modelArchive = saveScriptModule(module);
        } catch (const std::exception& e) {
            return makeError(
                ErrorCode::Runtime,
                QStringLiteral("cannot serialise the model for workers: %1").arg(firstLine(e)));
        }
        hc.schemaHash = state.schemaHash;
        hc.datasetSpec = cfg.data;
        hc.datasetHash = state.datasetHash;
        hc.data = data;
        hc.mode = cfg.mode;
        hc.wire = *wire;
        hc.layout = layout;
        hc.trainSamples = data->train.count();
        hub = std::make_unique<CoordinatorHub>(hc);
        auto port = hub->start();
        if (!port)
            return port.error();
        for (const QString& inv : cfg.invites) {
            auto ihp = parseHostPort(
                inv.contains(QLatin1Char(':')) ? inv : inv + QStringLiteral(":47301"));
            if (!ihp) {
                hub->finish(QStringLiteral("bad invitation"));
                return ihp.error();
            }
            hub->invite(ihp->first, ihp->second);
        }
        obs.onMessage(QStringLiteral("listening on %1:%2 for %3 worker(s)")
                          .arg(hc.address.toString())
                          .arg(*port)
                          .arg(cfg.workers));
        QElapsedTimer joinClock;
        joinClock.start();
        int joined = 0;
        while ((joined = hub->waitForJoined(cfg.workers, 500, {})) < cfg.workers) {
            forwardHubMessages();
            obs.onWaiting();
            if (cfg.joinTimeoutS > 0 && joinClock.elapsed() > qint64(cfg.joinTimeoutS) * 1000 &&
                (joined > 0 || cfg.localWorker)) {
                obs.onMessage(QStringLiteral("%1 of %2 invited worker(s) joined within %3 s; "
                                             "training with them (late ones join as they come)")
                                  .arg(joined)
                                  .arg(cfg.workers)
                                  .arg(cfg.joinTimeoutS));
                break;
            }
            if (control && control->stopRequested()) {
                hub->finish(QStringLiteral("the run was stopped before it started"));
                return makeError(ErrorCode::Cancelled,
                                 QStringLiteral("stopped while waiting for workers"));
            }
        }
        forwardHubMessages();
        admitJoined();
    }

    const int64_t stepsPerEpoch = sampler.stepsPerEpoch(perStep);
    const int64_t totalSteps = stepsPerEpoch * cfg.epochs;
    RunInfo info;
    info.model = cfg.model;
    info.datasetDescription = data->description;
    info.trainSamples = data->train.count();
    info.testSamples = data->test.count();
    info.parameters = parameterCount;
    info.stepsPerEpoch = stepsPerEpoch;
    info.totalSteps = totalSteps;
    info.startStep = state.step;
    info.devices = devices;
    obs.onStart(info);
    obs.onMessage(QStringLiteral("training %1 (%2 parameters) on %3: %4 training and %5 test "
                                 "samples, %6 thread(s), %7 worker(s)")
                      .arg(cfg.model)
                      .arg(parameterCount)
                      .arg(data->description)
                      .arg(data->train.count())
                      .arg(data->test.count())
                      .arg(threads)
                      .arg(members.size()));

    auto saveCheckpointNow = [&]() -> Status {
        state.epoch = sampler.epoch();
        state.position = sampler.position();
        state.epochLossSum = epochAcc.lossSum;
        state.epochCorrect = epochAcc.correct;
        state.epochSamples = epochAcc.samples;
        state.epochSteps = epochAcc.steps;
        return writeRunCheckpoint(ckptPath, module, optimizer, state);
    };
    // The step of the newest checkpoint on disk. A checkpoint that cannot be written (a full
    // disk) never replaces it: QSaveFile renames only a complete file.
    int64_t savedStep = ckpt ? ckpt->state.step : -1;
    auto saveCheckpoint = [&]() -> Status {
        if (auto st = saveCheckpointNow(); !st)
            return makeError(st.error().code,
                             savedStep >= 0
                                 ? QStringLiteral("%1. The checkpoint of step %2 in %3 is kept; "
                                                  "resume from it with --resume")
                                       .arg(st.error().message)
                                       .arg(savedStep)
                                       .arg(ckptPath)
                                 : QStringLiteral("%1. No checkpoint of this run was written "
                                                  "yet")
                                       .arg(st.error().message));
        savedStep = state.step;
        return success();
    };
    auto shutdown = [&](const QString& reason) {
        if (hub)
            hub->finish(reason);
        forwardHubMessages();
    };

    // When every worker has left: wait a while for one to join rather than lose the run;
    // failing that, keep what was trained and say how to continue.
    auto waitForAnyWorker = [&]() -> Status {
        obs.onMessage(QStringLiteral("no worker is left; waiting up to %1 s for one to join")
                          .arg(cfg.workerTimeoutS * 4));
        if (hub && hub->waitForJoined(1, cfg.workerTimeoutS * 4000,
                                      [&] { return control && control->stopRequested(); }) >= 1)
            return success();
        (void)saveCheckpoint();
        shutdown(QStringLiteral("no workers left"));
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("every worker left at step %1; progress is saved in %2, "
                                        "resume with --resume")
                             .arg(state.step)
                             .arg(ckptPath));
    };

    // Every applied step, in any mode: refuse a diverged loss (with a checkpoint of the last
    // good state), log it, tell the observer, and checkpoint when due.
    auto publishStep = [&](const StepMetrics& sm) -> Status {
        if (!std::isfinite(sm.loss)) {
            (void)saveCheckpoint();
            shutdown(QStringLiteral("the run failed"));
            return makeError(ErrorCode::Runtime,
                             QStringLiteral("the loss became %1 at step %2; lower the "
                                            "learning rate (now %3) and start again")
                                 .arg(sm.loss)
                                 .arg(state.step)
                                 .arg(cfg.lr));
        }
        log.write(sm.toJson());
        if (const QString e = log.takeError(); !e.isEmpty())
            obs.onMessage(QStringLiteral("%1; training goes on, but metrics.jsonl misses the "
                                         "steps from %2 on")
                              .arg(e)
                              .arg(state.step));
        obs.onStep(sm);
        if (cfg.checkpointEvery > 0 && state.step % cfg.checkpointEvery == 0) {
            if (auto st = saveCheckpoint(); !st) {
                shutdown(QStringLiteral("the run failed"));
                return st.error();
            }
        }
        return success();
    };

    ThroughputBalancer balancer;
    double trainSeconds = 0; // wall time of training steps in this process
    int64_t samplesThisRun = 0;
    int64_t stepsThisRun = 0;
    Accum lastEpoch = epochAcc;
    bool stopped = false;
    bool paused = false;
    const bool cosine = cfg.schedule == QLatin1String("cosine");

    // Async: every worker takes batches of B on its own and its gradient is applied the
    // moment it arrives, unless the weights moved on by more than the staleness bound since
    // the worker read them; such gradients are dropped and counted. A worker that leaves
    // hands its outstanding samples back, so none is skipped.
    int64_t staleDropped = 0;
    std::mutex readyMutex;
    std::condition_variable readyCv;
    auto watch = [&](Member& m) {
        m.link->setReadyCallback([&] {
            { std::lock_guard<std::mutex> lock(readyMutex); }
            readyCv.notify_all();
        });
    };
    for (Member& m : members)
        watch(m);
    struct Outstanding {
        std::vector<int64_t> indices;
        int64_t version = 0;
        qint64 submittedNs = 0;
        std::shared_ptr<std::vector<at::Tensor>> params, buffers; // the snapshot it reads
    };
    auto runAsyncEpoch = [&]() -> Expected<bool> {
        std::vector<std::optional<Outstanding>> out(members.size());
        std::deque<std::vector<int64_t>> returned;
        QElapsedTimer wall;
        wall.start();
        qint64 lastApplied = 0;
        bool stop = false;
        for (;;) {
            if (!stop && control &&
                (control->stopRequested() || (cfg.maxSteps > 0 && state.step >= cfg.maxSteps)))
                stop = true;
            if (!stop && control && control->paused()) {
                obs.onMessage(QStringLiteral("paused at step %1").arg(state.step));
                if (hub)
                    hub->broadcast(wire::Control::Action::Pause);
                const qint64 before = wall.nsecsElapsed();
                stop = !control->waitWhilePaused();
                lastApplied += wall.nsecsElapsed() - before;
                if (hub)
                    hub->broadcast(wire::Control::Action::Resume);
            }
            if (!stop && cfg.maxSteps > 0 && state.step >= cfg.maxSteps)
                stop = true;
            size_t before = members.size();
            admitJoined();
            for (size_t w = before; w < members.size(); ++w)
                watch(members[w]);
            out.resize(members.size());
            forwardHubMessages();
            bool anyOut = false;
            for (size_t w = 0; w < members.size(); ++w) {
                Member& m = members[w];
                if (!m.alive || out[w] || stop)
                    continue;
                std::vector<int64_t> idx;
                if (!returned.empty()) {
                    idx = std::move(returned.front());
                    returned.pop_front();
                } else if (sampler.remaining() > 0) {
                    idx = sampler.next(cfg.batch);
                } else {
                    continue;
                }
                Outstanding o;
                o.indices = idx;
                o.version = state.step;
                o.submittedNs = wall.nsecsElapsed();
                WorkRequest req;
                req.step = state.step;
                req.indices = std::move(idx);
                uint64_t seed = cfg.seed ^ (uint64_t(state.step) << 8) ^ w;
                req.seed = splitmix64(seed);
                req.weightsVersion = state.step;
                if (m.remote) {
                    req.packedWeights = std::make_shared<const QByteArray>(
                        packBundle(master.params, master.buffers, *wire));
                } else {
                    // The optimizer changes the master weights while this worker reads them:
                    // it gets a copy of its own.
                    at::NoGradGuard g;
                    o.params = std::make_shared<std::vector<at::Tensor>>();
                    o.buffers = std::make_shared<std::vector<at::Tensor>>();
                    for (const at::Tensor& p : master.params)
                        o.params->push_back(p.detach().clone());
                    for (const at::Tensor& b : master.buffers)
                        o.buffers->push_back(b.detach().clone());
                    req.params = o.params.get();
                    req.buffers = o.buffers.get();
                }
                m.link->submit(std::move(req));
                out[w] = std::move(o);
            }
            for (const auto& o : out)
                anyOut = anyOut || o.has_value();
            if (!anyOut) {
                if (stop || (sampler.remaining() == 0 && returned.empty()))
                    break;
                if (std::none_of(members.begin(), members.end(),
                                 [](const Member& m) { return m.alive; })) {
                    if (auto st = waitForAnyWorker(); !st)
                        return st.error();
                }
                continue;
            }
            {
                std::unique_lock<std::mutex> lock(readyMutex);
                readyCv.wait_for(lock, std::chrono::milliseconds(200), [&] {
                    for (size_t w = 0; w < members.size(); ++w)
                        if (out[w] && members[w].link->ready())
                            return true;
                    return false;
                });
            }
            for (size_t w = 0; w < members.size(); ++w) {
                Member& m = members[w];
                if (!out[w] || !m.link->ready())
                    continue;
                Outstanding o = std::move(*out[w]);
                out[w].reset();
                auto r = m.link->wait();
                if (!r) {
                    m.alive = false;
                    m.stats.status = WorkerSummary::Status::Dropped;
                    m.stats.reason = r.error().message;
                    obs.onMessage(QStringLiteral("dropped %1: %2; its samples go to the others")
                                      .arg(m.stats.name, r.error().message));
                    returned.push_back(std::move(o.indices));
                    continue;
                }
                noteResult(m, *r);
                const double rtt = double(wall.nsecsElapsed() - o.submittedNs) / 1e6;
                m.stats.samples += r->samples;
                m.stats.computeS += r->computeMs / 1e3;
                m.stats.communicateS += std::max(0.0, rtt - r->computeMs) / 1e3;
                if (m.remote)
                    m.stats.bytes = m.remote->bytesSent() + m.remote->bytesReceived();
                const int64_t staleness = state.step - o.version;
                if (stop)
                    continue; // the run is ending: finished work is not applied
                if (staleness > cfg.staleness) {
                    ++staleDropped;
                    continue;
                }
                const double lr =
                    scheduledLr(cfg.lr, state.step, cfg.warmupSteps, totalSteps, cosine);
                {
                    at::NoGradGuard g;
                    for (size_t b = 0; b < master.buffers.size(); ++b)
                        master.buffers[b].copy_(r->buffers[b]);
                }
                optimizer.step(r->grads, lr);
                ++state.step;
                ++stepsThisRun;
                samplesThisRun += r->samples;
                epochAcc.lossSum += r->lossSum;
                epochAcc.correct += r->correct;
                epochAcc.samples += r->samples;
                ++epochAcc.steps;
                const qint64 now = wall.nsecsElapsed();
                StepMetrics sm;
                sm.step = state.step;
                sm.epoch = sampler.epoch();
                sm.epochStep = epochAcc.steps;
                sm.stepsPerEpoch = stepsPerEpoch;
                sm.totalSteps = totalSteps;
                sm.loss = r->samples ? r->lossSum / double(r->samples) : 0;
                sm.accuracy = r->samples ? double(r->correct) / double(r->samples) : 0;
                sm.lr = lr;
                sm.samples = r->samples;
                sm.stepMs = double(now - lastApplied) / 1e6;
                lastApplied = now;
                sm.elapsedS = trainSeconds + double(now) / 1e9;
                sm.samplesPerS = sm.elapsedS > 0 ? double(samplesThisRun) / sm.elapsedS : 0;
                WorkerStepStats ws;
                ws.name = m.stats.name;
                ws.samples = r->samples;
                ws.computeMs = r->computeMs;
                sm.workers << ws;
                if (auto st = publishStep(sm); !st)
                    return st.error();
            }
        }
        trainSeconds += double(wall.nsecsElapsed()) / 1e9;
        return stop;
    };

    while (sampler.epoch() < cfg.epochs && !stopped) {
        if (async) {
            auto st = runAsyncEpoch();
            if (!st)
                return st.error();
            stopped = *st;
        }
        while (!async && sampler.remaining() > 0) {
            if (control && control->paused() && !paused) {
                paused = true;
                if (hub)
                    hub->broadcast(wire::Control::Action::Pause);
                obs.onMessage(QStringLiteral("paused at step %1").arg(state.step));
            }
            if (control && !control->waitWhilePaused()) {
                stopped = true;
                break;
            }
            if (paused) {
                paused = false;
                if (hub)
                    hub->broadcast(wire::Control::Action::Resume);
                obs.onMessage(QStringLiteral("resumed at step %1").arg(state.step));
            }
            if (cfg.maxSteps > 0 && state.step >= cfg.maxSteps) {
                stopped = true;
                break;
            }
            // Workers that joined since the last step take part from this one on.
            admitJoined();
            forwardHubMessages();

            QElapsedTimer stepTimer;
            stepTimer.start();
            const std::vector<int64_t> indices = sampler.next(perStep);
            const double lr = scheduledLr(cfg.lr, state.step, cfg.warmupSteps, totalSteps, cosine);
            std::shared_ptr<const QByteArray> packed;
            auto packedWeights = [&] {
                if (!packed)
                    packed = std::make_shared<const QByteArray>(
                        packBundle(master.params, master.buffers, *wire));
                return packed;
            };

            // Hand out the step's samples; whatever a worker that fails was holding goes to
            // the others, so no sample of the step is lost and none is used twice.
            std::vector<WorkResult> results;
            std::vector<double> rttMs(members.size(), 0);
            std::vector<int64_t> took(members.size(), 0);
            std::vector<int64_t> pending = indices;
            uint64_t round = 0;
            while (!pending.empty()) {
                std::vector<size_t> live;
                std::vector<QString> names;
                std::vector<int64_t> caps;
                for (size_t w = 0; w < members.size(); ++w)
                    if (members[w].alive) {
                        live.push_back(w);
                        names.push_back(members[w].stats.name);
                        caps.push_back(members[w].cap(localSgd ? cfg.localSteps : 1));
                    }
                if (live.empty()) {
                    if (auto st = waitForAnyWorker(); !st)
                        return st.error();
                    admitJoined();
                    forwardHubMessages();
                    continue;
                }
                std::vector<int64_t> counts = balancer.split(int64_t(pending.size()), names, caps);
                // A worker left out is measured again now and then with a small slice: links and
                // loads change, and one noisy early step must not exclude a device for good.
                for (size_t j = 0; j < live.size() && round == 0; ++j) {
                    Member& m = members[live[j]];
                    if (counts[j] > 0 || !m.leftOut || state.step - m.leftOutSince < kProbeEvery)
                        continue;
                    const auto donor =
                        size_t(std::max_element(counts.begin(), counts.end()) - counts.begin());
                    const int64_t probe = std::min(
                        counts[donor] - 1, std::max<int64_t>(1, int64_t(pending.size()) / 8));
                    if (probe > 0) {
                        counts[donor] -= probe;
                        counts[j] = probe;
                        m.leftOutSince = state.step;
                    }
                }
                // Say so when the balancer leaves a worker out (its communication costs more
                // than its compute adds) or takes it back.
                for (size_t j = 0; j < live.size() && round == 0; ++j) {
                    Member& m = members[live[j]];
                    const bool out = counts[j] == 0;
                    if (out && !m.leftOut)
                        m.leftOutSince = state.step;
                    if (out != m.leftOut && !(m.leftOut && state.step == m.leftOutSince)) {
                        m.leftOut = out;
                        obs.onMessage(
                            out ? QStringLiteral(
                                      "leaving %1 out: moving the weights costs it %2 ms a step, "
                                      "more than its share of the compute; training without it is "
                                      "faster for this model (local-sgd, or a faster link, would "
                                      "let it help)")
                                      .arg(m.stats.name)
                                      .arg(balancer.overheadMs(m.stats.name), 0, 'f', 0)
                                : QStringLiteral("%1 takes part again").arg(m.stats.name));
                    }
                }
                const auto slices = sliceBatch(pending, counts);
                std::vector<qint64> submittedAt(live.size());
                for (size_t j = 0; j < live.size(); ++j) {
                    if (slices[j].empty())
                        continue;
                    Member& m = members[live[j]];
                    WorkRequest req;
                    req.step = state.step;
                    req.indices = slices[j];
                    req.params = &master.params;
                    req.buffers = &master.buffers;
                    uint64_t s = cfg.seed ^ (uint64_t(state.step) << 8) ^ (live[j] + (round << 16));
                    req.seed = splitmix64(s);
                    req.weightsVersion = state.step;
                    if (localSgd) {
                        req.innerSteps = cfg.localSteps;
                        req.innerLr = lr;
                    }
                    if (m.remote)
                        req.packedWeights = packedWeights();
                    submittedAt[j] = stepTimer.nsecsElapsed();
                    m.link->submit(std::move(req));
                }
                std::vector<int64_t> leftover;
                for (size_t j = 0; j < live.size(); ++j) {
                    if (slices[j].empty())
                        continue;
                    Member& m = members[live[j]];
                    auto r = m.link->wait();
                    if (!r) {
                        m.alive = false;
                        m.stats.status = WorkerSummary::Status::Dropped;
                        m.stats.reason = r.error().message;
                        balancer.forget(m.stats.name);
                        obs.onMessage(
                            QStringLiteral(
                                "dropped %1: %2; its %3 sample(s) of step %4 go to the others")
                                .arg(m.stats.name, r.error().message)
                                .arg(slices[j].size())
                                .arg(state.step + 1));
                        leftover.insert(leftover.end(), slices[j].begin(), slices[j].end());
                        continue;
                    }
                    noteResult(m, *r);
                    const double rtt = double(stepTimer.nsecsElapsed() - submittedAt[j]) / 1e6;
                    rttMs[live[j]] += rtt;
                    took[live[j]] += r->samples;
                    balancer.record(m.stats.name, r->samples, r->computeMs, rtt - r->computeMs);
                    m.stats.computeS += r->computeMs / 1e3;
                    m.stats.communicateS += std::max(0.0, rtt - r->computeMs) / 1e3;
                    results.push_back(std::move(*r));
                }
                pending = std::move(leftover);
                ++round;
            }

            // Combine: sum over workers of (b_i / B) * g_i, where g_i is worker i's mean
            // gradient over its b_i samples; that is the mean gradient over the global batch.
            const auto B = static_cast<double>(indices.size());
            std::vector<at::Tensor> grads;
            {
                at::NoGradGuard noGrad;
                if (results.size() == 1) {
                    grads = std::move(results[0].grads);
                    for (size_t b = 0; b < master.buffers.size(); ++b)
                        master.buffers[b].copy_(results[0].buffers[b]);
                } else {
                    grads.resize(master.params.size());
                    for (const WorkResult& r : results) {
                        const double wgt = double(r.samples) / B;
                        for (size_t p = 0; p < grads.size(); ++p) {
                            if (!r.grads[p].defined())
                                continue;
                            if (!grads[p].defined())
                                grads[p] = r.grads[p].mul(wgt);
                            else
                                grads[p].add_(r.grads[p], wgt);
                        }
                    }
                    // Buffers: running statistics average by share; counters are the same on
                    // every worker and are taken from the first.
                    for (size_t b = 0; b < master.buffers.size(); ++b) {
                        if (!master.buffers[b].is_floating_point()) {
                            master.buffers[b].copy_(results[0].buffers[b]);
                            continue;
                        }
                        at::Tensor acc = at::zeros_like(master.buffers[b]);
                        for (const WorkResult& r : results)
                            acc.add_(r.buffers[b], double(r.samples) / B);
                        master.buffers[b].copy_(acc);
                    }
                }
            }
            optimizer.step(grads, localSgd ? cfg.outerLr : lr);
            ++state.step;
            ++stepsThisRun;

            const double stepS = double(stepTimer.nsecsElapsed()) / 1e9;
            trainSeconds += stepS;
            samplesThisRun += int64_t(indices.size());
            StepMetrics sm;
            double lossSum = 0;
            int64_t correct = 0;
            for (const WorkResult& r : results) {
                lossSum += r.lossSum;
                correct += r.correct;
            }
            for (size_t w = 0; w < members.size(); ++w) {
                Member& m = members[w];
                if (took[w] == 0 && !m.alive)
                    continue;
                WorkerStepStats ws;
                ws.name = m.stats.name;
                ws.samples = took[w];
                ws.waitMs = std::max(0.0, stepS * 1e3 - rttMs[w]);
                m.stats.samples += took[w];
                m.stats.waitS += ws.waitMs / 1e3;
                if (m.remote)
                    m.stats.bytes = m.remote->bytesSent() + m.remote->bytesReceived();
                sm.workers << ws;
            }
            for (const WorkResult& r : results)
                for (WorkerStepStats& ws : sm.workers)
                    if (ws.samples > 0 && ws.computeMs == 0) {
                        ws.computeMs = r.computeMs;
                        break;
                    }
            epochAcc.lossSum += lossSum;
            epochAcc.correct += correct;
            epochAcc.samples += int64_t(indices.size());
            ++epochAcc.steps;

            sm.step = state.step;
            sm.epoch = sampler.epoch();
            sm.epochStep = epochAcc.steps;
            sm.stepsPerEpoch = stepsPerEpoch;
            sm.totalSteps = totalSteps;
            sm.loss = lossSum / B;
            sm.accuracy = double(correct) / B;
            sm.lr = lr;
            sm.samples = int64_t(indices.size());
            sm.stepMs = stepS * 1e3;
            sm.elapsedS = trainSeconds;
            sm.samplesPerS = trainSeconds > 0 ? double(samplesThisRun) / trainSeconds : 0;
            if (auto st = publishStep(sm); !st)
                return st.error();
        }
        if (stopped)
            break;

        // End of an epoch: evaluate on the test split (not counted as training time).
        EpochMetrics em;
        em.epoch = sampler.epoch();
        em.trainLoss = epochAcc.loss();
        em.trainAccuracy = epochAcc.accuracy();
        try {
            std::tie(em.testLoss, em.testAccuracy) = evaluate(module, data->test, cfg.evalBatch);
        } catch (const std::exception& e) {
            shutdown(QStringLiteral("the run failed"));
            return makeError(ErrorCode::Runtime,
                             QStringLiteral("evaluation failed: %1").arg(firstLine(e)));
        }
        state.lastTestAccuracy = em.testAccuracy;
        state.lastTestLoss = em.testLoss;
        log.write(em.toJson());
        obs.onEpoch(em);
        lastEpoch = epochAcc;
        epochAcc = Accum{};
        ++state.completedEpochs;
        sampler.nextEpoch();
        if (auto st = saveCheckpoint(); !st) {
            shutdown(QStringLiteral("the run failed"));
            return st.error();
        }
    }
    shutdown(stopped ? QStringLiteral("the run was stopped") : QStringLiteral("the run finished"));
    for (Member& m : members)
        if (m.remote)
            m.stats.bytes = m.remote->bytesSent() + m.remote->bytesReceived();

    if (stopped || state.completedEpochs == 0) {
        if (auto st = saveCheckpoint(); !st)
            return st.error();
    }
    // Exports: TorchScript in eval mode (what inference wants) and safetensors.
    try {
        module.eval();
        QSaveFile pt(QDir(cfg.outDir).filePath(QStringLiteral("model.pt")));
        const QByteArray archive = saveScriptModule(module);
        if (!pt.open(QIODevice::WriteOnly) || pt.write(archive) != archive.size() || !pt.commit())
            return writeError(pt.fileName(), archive.size(), pt.errorString());
        module.train();
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("exporting TorchScript failed: %1").arg(firstLine(e)));
    }
    if (auto st = writeSafetensors(QDir(cfg.outDir).filePath(QStringLiteral("model.safetensors")),
                                   stateDictRecords(module),
                                   {{QStringLiteral("format"), QStringLiteral("pt")},
                                    {QStringLiteral("tandem_model"), cfg.model}});
        !st)
        return st.error();

    RunSummary sum;
    sum.model = cfg.model;
    sum.data = cfg.data;
    sum.datasetHash = QString::fromLatin1(data->contentHash);
    sum.outDir = QDir(cfg.outDir).absolutePath();
    sum.checkpoint = QFileInfo(ckptPath).absoluteFilePath();
    sum.finished = !stopped;
    sum.epochs = state.completedEpochs;
    sum.steps = state.step;
    sum.samples = samplesThisRun;
    const Accum& reported = epochAcc.steps > 0 ? epochAcc : lastEpoch;
    sum.trainLoss = reported.loss();
    sum.trainAccuracy = reported.accuracy();
    sum.testAccuracy = state.lastTestAccuracy;
    sum.testLoss = state.lastTestLoss;
    sum.trainSeconds = trainSeconds;
    sum.samplesPerS = trainSeconds > 0 ? double(samplesThisRun) / trainSeconds : 0;
    int remotes = 0;
    int64_t remoteBytes = 0;
    for (Member& m : members) {
        WorkerSummary& w = m.stats;
        const double busy = w.computeS + w.communicateS + w.waitS;
        // A worker's own rate: samples over the time it computed. The run's rate is above.
        w.samplesPerS = w.computeS > 0 ? double(w.samples) / w.computeS : 0;
        w.leftOut = m.leftOut;
        if (m.alive && m.leftOut) {
            w.status = WorkerSummary::Status::LeftOut;
            w.reason = QStringLiteral("moving the weights cost it %1 ms a step, more than its "
                                      "share of the compute")
                           .arg(balancer.overheadMs(w.name), 0, 'f', 0);
        }
        (void)busy;
        if (m.remote) {
            ++remotes;
            remoteBytes += w.bytes;
        }
        sum.workers << w;
    }
    sum.staleDropped = staleDropped;
    sum.wireBytesPerStep =
        remotes > 0 && stepsThisRun > 0 ? double(remoteBytes) / remotes / stepsThisRun : 0;
    QJsonObject final = sum.toJson();
    final.insert(QStringLiteral("type"), QStringLiteral("summary"));
    log.write(final);
    return sum;
}

} // namespace tandem
