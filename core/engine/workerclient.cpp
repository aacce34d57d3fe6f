#include "engine/workerclient.h"

#include "common/failpoint.h"
#include "common/threadname.h"
#include "common/version.h"
#include "net/trustwatcher.h"

#include "engine/devices.h"
#include "engine/hub.h"
#include "engine/outerwire.h"
#include "engine/scriptmodel.h"
#include "engine/training.h"
#include "engine/wiretensors.h"
#include "engine/worker.h"
#include "formats/dataset.h"
#include "formats/datasetcache.h"
#include "net/connection.h"
#include "net/truststore.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QHostInfo>
#include <QPointer>
#include <QTimer>

#include <cstdlib>
#include <deque>
#include <limits>
#include <thread>

namespace tandem {

namespace {

// One worker's life: connect, Hello, load the run, then compute whatever is assigned. The
// computing happens on a thread of its own so that this (event-loop) thread keeps answering
// the coordinator's pings during a long step.
class WorkerClient : public QObject {
public:
    enum class State { Connecting, AwaitHello, AwaitRun, AwaitData, Working, Done };

    WorkerClient(const WorkerOptions& o, DeviceInfo device, const Identity& id,
                 std::function<void(const QString&)> log, std::function<void()> onDone)
        : m_opt(o)
        , m_device(std::move(device))
        , m_identity(id)
        , m_log(std::move(log))
        , m_onDone(std::move(onDone)) {
        m_retry.setSingleShot(true);
        connect(&m_retry, &QTimer::timeout, this, [this] { connectNow(); });
        // Unpairing the coordinator here ends the session at once.
        connect(&m_trust, &TrustWatcher::revoked, this, [this](const QString& id) {
            if (m_state != State::Done)
                finish(1, QStringLiteral("the coordinator (device %1) was unpaired from this "
                                         "machine")
                              .arg(id));
        });
    }

    ~WorkerClient() override {
        if (m_compute.joinable())
            m_compute.join();
    }

    void start() {
        m_sinceLost.start();
        connectNow();
    }

    int exitCode() const { return m_exit; }

private:
    void connectNow() {
        m_state = State::Connecting;
        m_conn = Connection::connectTo(m_opt.host, m_opt.port, m_identity, this);
        m_conn->setIdleTimeout(m_opt.idleTimeoutSeconds * 1000);
        m_conn->setBlobCap(wire::BlobKind::Model, qint64(4) << 30);
        connect(m_conn, &Connection::secured, this, [this](const QString& peerId) {
            if (!TrustStore(m_opt.home).contains(peerId)) {
                finish(1, QStringLiteral("the coordinator at %1:%2 (device %3) is not paired with "
                                         "this machine; pair them, or run 'tandem trust add %3'")
                              .arg(m_opt.host)
                              .arg(m_opt.port)
                              .arg(peerId));
                return;
            }
            m_state = State::AwaitHello;
            wire::Hello hello = makeHello(QStringLiteral("worker"), m_identity.deviceId());
            if (!m_opt.name.isEmpty())
                hello.displayName = m_opt.name;
            m_conn->send(hello);
            m_coordinatorId = peerId;
            m_trust.watch(peerId);
        });
        connect(m_conn, &Connection::received, this,
                [this](const wire::Message& m) { onMessage(m); });
        connect(m_conn, &Connection::closed, this,
                [this](const QString& reason) { onClosed(reason); });
    }

    void onClosed(const QString& reason) {
        if (m_state == State::Done)
            return;
        Connection* old = m_conn;
        m_conn = nullptr;
        if (old) {
            old->disconnect(this);
            old->deleteWhenFlushed();
        }
        if (m_state != State::Connecting) {
            m_log(QStringLiteral("lost the coordinator: %1; trying to reconnect for %2 s")
                      .arg(reason)
                      .arg(m_opt.reconnectSeconds));
            m_sinceLost.restart();
        }
        if (m_sinceLost.elapsed() > qint64(m_opt.reconnectSeconds) * 1000) {
            finish(1, QStringLiteral("cannot reach the coordinator at %1:%2: %3")
                          .arg(m_opt.host)
                          .arg(m_opt.port)
                          .arg(reason));
            return;
        }
        m_state = State::Connecting;
        m_retry.start(500);
    }

    void finish(int code, const QString& why) {
        if (m_state == State::Done)
            return;
        m_state = State::Done;
        m_exit = code;
        if (m_roundsQueued + m_roundsWaited > 0)
            m_log(QStringLiteral("%1 of %2 round(s) began without waiting for the coordinator")
                      .arg(QString::number(m_roundsQueued),
                           QString::number(m_roundsQueued + m_roundsWaited)));
        if (!why.isEmpty())
            m_log(why);
        if (m_conn)
            m_conn->close(why);
        QTimer::singleShot(100, this, [this] { m_onDone(); });
    }

    void onMessage(const wire::Message& m) {
        if (const auto* r = std::get_if<wire::Reject>(&m)) {
            finish(1, QStringLiteral("the coordinator refused this worker: %1").arg(r->message));
            return;
        }
        if (const auto* b = std::get_if<wire::Bye>(&m)) {
            finish(0, QStringLiteral("the coordinator ended the run: %1").arg(b->reason));
            return;
        }
        if (const auto* c = std::get_if<wire::Control>(&m)) {
            switch (c->action) {
            case wire::Control::Action::Pause:
                m_log(QStringLiteral("the run is paused"));
                break;
            case wire::Control::Action::Resume:
                m_log(QStringLiteral("the run continues"));
                break;
            case wire::Control::Action::Stop:
                finish(0, QStringLiteral("the coordinator stopped the run"));
                break;
            case wire::Control::Action::None:
                break;
            }
            return;
        }
        switch (m_state) {
        case State::AwaitHello:
            if (const auto* h = std::get_if<wire::Hello>(&m)) {
                if (const QString why =
                        wire::incompatibility(appVersion(), h->protocolVersion, h->appVersion,
                                              QStringLiteral("coordinator"));
                    !why.isEmpty()) {
                    m_conn->send(wire::Reject{wire::RejectCode::Version, why});
                    finish(1, why);
                    return;
                }
                m_log(QStringLiteral("connected to coordinator %1 (Tandem %2, LibTorch %3)")
                          .arg(h->displayName, h->appVersion, h->torchVersion));
                m_state = State::AwaitRun;
            }
            return;
        case State::AwaitRun:
            if (const auto* spec = std::get_if<wire::RunSpec>(&m))
                loadRun(*spec);
            return;
        case State::AwaitData:
            if (const auto* offer = std::get_if<wire::DataOffer>(&m))
                onDataOffer(*offer);
            return;
        case State::Working:
            if (const auto* a = std::get_if<wire::Assign>(&m))
                onAssign(*a);
            return;
        case State::Connecting:
        case State::Done:
            return;
        }
    }

    DatasetCache datasetCache() const { return DatasetCache::of(m_opt.cacheDir, m_opt.home); }

    void onDataOffer(const wire::DataOffer& offer) {
        std::optional<QByteArray> blob = m_conn->takeBlob(offer.blob);
        // A split's token blob arrived as a file; "" for a split without one.
        auto file = [&](uint64_t id) { return id ? m_conn->takeBlobFile(id) : QString(); };
        const std::optional<QString> train = file(offer.trainTokensBlob),
                                     test = file(offer.testTokensBlob);
        if (!blob || !train || !test) {
            DatasetCache::discard({train.value_or(QString()), test.value_or(QString())});
            finish(1, QStringLiteral("the coordinator's dataset did not arrive whole"));
            return;
        }
        if (TANDEM_FAILPOINT("dataset.transfer"))
            blob->truncate(blob->size() / 2);
        // Checking the data against its hash reads all of it (a token file of gigabytes: tens of
        // seconds), so the idle compute thread does it, and this one goes on answering pings.
        if (m_compute.joinable())
            m_compute.join();
        m_compute = std::thread([this, cache = datasetCache(), hash = m_spec.datasetHash,
                                 blob = std::move(*blob), train = *train, test = *test] {
            nameThisThread("tandem-data");
            auto got = cache.accept(hash, blob, train, test);
            QMetaObject::invokeMethod(
                this, [this, hash, got = std::move(got)]() mutable { onDataChecked(hash, got); },
                Qt::QueuedConnection);
        });
    }

    void onDataChecked(const QString& hash, Expected<DatasetCache::Received>& got) {
        if (m_state != State::AwaitData || hash != m_spec.datasetHash)
            return; // the session started again meanwhile
        if (!got)
            return finish(1, got.error().message);
        if (!got->cachedAt.isEmpty())
            m_log(QStringLiteral("cached the dataset in %1").arg(got->cachedAt));
        m_data = std::make_shared<DatasetSplits>(std::move(got->data));
        becomeReady();
    }

    void loadRun(const wire::RunSpec& spec) {
        // A step of the last session may still be computing (the coordinator came back while
        // it ran): it reads the layout and fills the result bundle replaced below.
        if (m_compute.joinable())
            m_compute.join();
        m_computing = false;
        m_queue.clear();
        m_spec = spec;
        auto wire = wireDtypeFromName(spec.wireDtype);
        auto layout = ModelLayout::fromWire(spec.params, spec.buffers);
        auto options = replicaOptions(spec.configJson);
        if (!wire || !layout || !options) {
            finish(1, options ? QStringLiteral("the coordinator's run description is malformed")
                              : options.error().message);
            return;
        }
        m_options = *options;
        m_wire = *wire;
        m_layout = *layout;
        // Local-SGD: weights after the first come as differences, deltas leave, in the outer wire.
        m_outer.reset();
        if (spec.mode == nameOf(TrainMode::LocalSgd)) {
            const std::optional<OuterWire> w = parse<OuterWire>(spec.outerWire);
            if (!w) {
                finish(1, QStringLiteral("the coordinator's run description names an unknown "
                                         "outer-wire format \"%1\"")
                              .arg(spec.outerWire));
                return;
            }
            m_outer.emplace(*w);
        }
        // The worker's gradient bundles and the coordinator's weight bundles have this exact
        // size; the dataset is bounded by what a desktop can hold, token files (written to disk
        // as they arrive) by its free space.
        m_conn->setBlobCap(wire::BlobKind::Tensors,
                           std::max(m_layout.bundleBytes(m_wire),
                                    m_outer ? outerBundleBytes(m_layout, m_outer->wire()) : 0));
        m_grads = std::make_unique<GradientBundle>(m_layout, m_wire);
        m_conn->setBlobCap(wire::BlobKind::Dataset, qint64(8) << 30);
        m_conn->setBlobCap(wire::BlobKind::Tokens, std::numeric_limits<qint64>::max());
        m_conn->setBlobSpill(wire::BlobKind::Tokens, datasetCache().dir());
        std::optional<QByteArray> archive = m_conn->takeBlob(spec.modelBlob);
        if (!archive) {
            finish(1, QStringLiteral("the coordinator's model did not arrive whole"));
            return;
        }
        // TorchScript runs code: this comes from a paired coordinator, the one place besides a
        // file the user chose that Tandem loads models from.
        auto module = loadScriptModule(*archive, QStringLiteral("the coordinator's model"));
        if (!module) {
            finish(1, module.error().message);
            return;
        }
        m_module = *module;
        const QString mySchema = QString::fromLatin1(schemaHash(modelTensors(m_module)));
        if (mySchema != spec.schemaHash) {
            const QString why =
                QStringLiteral("the model's schema here is %1 but the coordinator says %2")
                    .arg(mySchema.left(16), spec.schemaHash.left(16));
            m_conn->send(wire::Reject{wire::RejectCode::Schema, why});
            finish(1, why);
            return;
        }
        // The dataset: the cached copy, or the same spec read here, when the hash matches.
        m_data.reset();
        if (auto d = datasetCache().find(spec.datasetHash, spec.trainSamples))
            m_data = std::make_shared<DatasetSplits>(std::move(*d));
        if (!m_data) {
            auto d = loadDataset(spec.datasetSpec);
            if (d && QString::fromLatin1(d->contentHash) == spec.datasetHash)
                m_data = std::make_shared<DatasetSplits>(std::move(*d));
        }
        if (!m_data) {
            m_log(QStringLiteral("%1 is not here; receiving it from the coordinator")
                      .arg(spec.datasetSpec));
            m_state = State::AwaitData;
            m_conn->send(wire::DataRequest{spec.datasetHash});
            return;
        }
        becomeReady();
    }

    void becomeReady() {
        if (m_compute.joinable())
            m_compute.join();
        try {
            m_replica = std::make_unique<ModelReplica>(
                m_device, m_module, std::shared_ptr<const Dataset>(m_data, &m_data->train),
                m_options);
        } catch (const std::exception& e) {
            finish(1, QStringLiteral("cannot start on %1: %2")
                          .arg(m_device.name,
                               QString::fromUtf8(e.what()).section(QLatin1Char('\n'), 0, 0)));
            return;
        }
        m_state = State::Working;
        wire::Ready r;
        r.schemaHash = m_spec.schemaHash;
        r.device = m_device;
        r.maxBatch = m_opt.maxBatch;
        r.precision = nameOf(m_replica->precision());
        r.precisionNote = m_replica->precisionNote();
        m_conn->send(r);
        if (!r.precisionNote.isEmpty())
            m_log(r.precisionNote);
        m_log(QStringLiteral("ready on %1%2; %3 training samples")
                  .arg(m_device.name, r.precision == QLatin1String("fp32")
                                          ? QString()
                                          : QStringLiteral(" (%1 autocast)").arg(r.precision))
                  .arg(m_data->train.count()));
    }

    void onAssign(const wire::Assign& a) {
        for (int64_t i : a.indices)
            if (i < 0 || i >= m_data->train.count()) {
                const QString why =
                    QStringLiteral("assigned sample %1, outside the dataset").arg(i);
                m_conn->send(wire::WorkError{a.step, why});
                finish(1, why);
                return;
            }
        std::optional<QByteArray> weights;
        if (a.weightsBlob != 0) {
            weights = m_conn->takeBlob(a.weightsBlob);
            if (!weights) {
                finish(1, QStringLiteral("an assignment arrived without its weights"));
                return;
            }
        }
        m_queue.emplace_back(a, std::move(weights));
        startNext();
    }

    void startNext() {
        if (m_computing || m_queue.empty() || !m_conn || m_state != State::Working)
            return;
        auto [a, weights] = std::move(m_queue.front());
        m_queue.pop_front();
        if (m_compute.joinable())
            m_compute.join();
        m_computing = true;
        // The event loop stays free while this runs; the result comes back as queued calls.
        m_compute = std::thread([this, a = std::move(a), weights = std::move(weights)] {
            nameThisThread("tandem-compute");
            compute(a, weights);
        });
    }

    // The compute thread's side of a step. The result bundle is sent as the backward pass fills
    // it: its blob opens before the step starts, and each gradient completing its front lets
    // that much go while the rest is computed. The Result message follows the last byte; the
    // coordinator applies nothing before it.
    void compute(const wire::Assign& a, const std::optional<QByteArray>& weights) {
        QString error;
        QStringList notes;
        wire::Result res;
        res.step = a.step;
        res.weightsVersion = a.weightsVersion;
        const bool streaming = a.fragments > 1 && m_outer;
        if (weights && !(streaming && a.weightsDelta)) {
            if (auto st = takeWeights(*weights, a.weightsDelta); !st)
                error = st.error().message;
        }
        QByteArray bundle;
        if (error.isEmpty() && m_outer) {
            WorkResult r;
            auto b = streaming ? streamingRound(*m_replica, *m_outer, m_layout, a,
                                                weights && a.weightsDelta ? &*weights : nullptr,
                                                weights && !a.weightsDelta, &r)
                               : outerRound(*m_replica, *m_outer, a, &r);
            if (!b) {
                error = b.error().message;
            } else {
                describeResult(r, res);
                notes = r.notes;
                QMetaObject::invokeMethod(
                    this, [this, bundle = *b] { openResult(bundle); }, Qt::QueuedConnection);
            }
        } else if (error.isEmpty()) {
            bundle = m_grads->begin();
            QMetaObject::invokeMethod(
                this, [this, bundle] { openResult(bundle); }, Qt::QueuedConnection);
            WorkRequest req = requestFrom(a);
            // When each part of the bundle became ready, to tell what really left while the
            // backward pass still ran.
            std::vector<std::pair<qint64, qint64>> released; // (ns into the step, bytes ready)
            QElapsedTimer clock;
            clock.start();
            req.onGradient = [this, &released, &clock, step = a.step](size_t i,
                                                                      const at::Tensor& g) {
                const qint64 ready = m_grads->add(i, g);
                if (ready < 0)
                    return;
                released.emplace_back(clock.nsecsElapsed(), ready);
                QMetaObject::invokeMethod(
                    this, [this, ready, step] { growResult(ready, step); }, Qt::QueuedConnection);
            };
            auto r = m_replica->compute(req, QStringLiteral("this worker"));
            if (!r) {
                error = r.error().message;
            } else {
                describeResult(*r, res);
                notes = r->notes;
                if (r->streamed || released.empty()) {
                    res.earlyBytes =
                        r->streamed ? bytesReleasedEarly(released, clock.nsecsElapsed()) : 0;
                    m_grads->finish(r->grads, r->buffers);
                } else {
                    // The step was computed again after part of it left: the bytes already
                    // sent are not this result's. That blob is completed and left unused
                    // (the coordinator drops it when the next arrives), and the result goes
                    // in a blob of its own.
                    QMetaObject::invokeMethod(
                        this, [this] { growResult(std::numeric_limits<qint64>::max(), -1); },
                        Qt::QueuedConnection);
                    bundle = m_grads->begin();
                    QMetaObject::invokeMethod(
                        this, [this, bundle] { openResult(bundle); }, Qt::QueuedConnection);
                    m_grads->finish(r->grads, r->buffers);
                }
            }
        }
        QMetaObject::invokeMethod(
            this,
            [this, res, error, notes, streaming]() mutable {
                m_computing = false;
                for (const QString& n : notes)
                    m_log(n);
                if (!m_conn || m_state != State::Working)
                    return;
                if (streaming)
                    (m_queue.empty() ? m_roundsWaited : m_roundsQueued) += 1;
                if (!error.isEmpty()) {
                    m_conn->send(wire::WorkError{res.step, error});
                    finish(1, error);
                    return;
                }
                if (m_conn != m_resultConn)
                    return; // the connection the result went out on is gone
                m_conn->growBlob(m_resultBlob, std::numeric_limits<qint64>::max());
                res.tensorsBlob = m_resultBlob;
                m_conn->send(res);
                startNext();
            },
            Qt::QueuedConnection);
    }

    Status takeWeights(const QByteArray& weights, bool delta) {
        if (delta)
            return m_outer ? m_outer->applyDifference(weights, m_layout, m_replica->params(),
                                                      m_replica->buffers())
                           : makeError(ErrorCode::Corrupt,
                                       QStringLiteral("a weight update outside local-SGD"));
        if (auto st =
                unpackInto(weights, m_layout, m_wire, m_replica->params(), m_replica->buffers());
            !st)
            return st;
        if (m_outer)
            m_outer->tookWhole(m_replica->params());
        return success();
    }

    void openResult(const QByteArray& bundle) {
        m_resultConn = m_conn;
        if (m_conn && m_state == State::Working)
            m_resultBlob = m_conn->openBlob(wire::BlobKind::Tensors, bundle);
    }

    void growResult(qint64 ready, int64_t step) {
        if (!m_conn || m_conn != m_resultConn || m_state != State::Working)
            return;
        m_conn->growBlob(m_resultBlob, ready);
        if (ready < m_grads->size() && TANDEM_FAILPOINT_DUE("worker.upload")) {
            m_conn->flush(); // part of the result on the wire, then the failpoint's action
            if (TANDEM_FAILPOINT_ACT("worker.upload"))
                finish(1, QStringLiteral("failpoint worker.upload at step %1").arg(step + 1));
        }
    }

    WorkerOptions m_opt;
    DeviceInfo m_device;
    Identity m_identity;
    std::function<void(const QString&)> m_log;
    std::function<void()> m_onDone;
    State m_state = State::Connecting;
    Connection* m_conn = nullptr;
    QTimer m_retry;
    TrustWatcher m_trust{m_opt.home};
    QString m_coordinatorId;
    QElapsedTimer m_sinceLost;
    int m_exit = 0;

    wire::RunSpec m_spec;
    ReplicaOptions m_options; // the run's settings, as the worker reads them
    DType m_wire = DType::F32;
    std::unique_ptr<GradientBundle> m_grads; // compute thread: the result being filled
    QPointer<Connection> m_resultConn;       // where the result's blob was opened
    uint64_t m_resultBlob = 0;
    ModelLayout m_layout;
    std::optional<OuterWorkerSide> m_outer; // local-SGD only
    torch::jit::Module m_module;
    std::shared_ptr<DatasetSplits> m_data;
    std::unique_ptr<ModelReplica> m_replica;
    std::thread m_compute;
    bool m_computing = false;
    // Streaming local-SGD's next round, given before the current one ends, waits here.
    std::deque<std::pair<wire::Assign, std::optional<QByteArray>>> m_queue;
    int64_t m_roundsQueued = 0, m_roundsWaited = 0; // streaming: next round in hand or not
};

} // namespace

int runWorker(const WorkerOptions& options, const std::function<void(const QString&)>& log) {
    QString threadWarning;
    setTorchThreads(options.threads, &threadWarning);
    if (!threadWarning.isEmpty())
        log(threadWarning);
    const QList<DeviceInfo> found = detectDevices();
    auto devices = options.devices.trimmed().isEmpty()
                       ? Expected<QList<DeviceInfo>>(QList<DeviceInfo>{found.first()})
                       : chooseDevices(found, options.devices);
    if (!devices) {
        log(devices.error().message);
        return 2;
    }
    auto identity = Identity::loadOrCreate(options.home);
    if (!identity) {
        log(identity.error().message);
        return 1;
    }
    // One worker per device, each with its own connection: the coordinator's balancer sees
    // each as a worker of its own and sizes its share to that device.
    const bool several = devices->size() > 1;
    std::vector<std::unique_ptr<WorkerClient>> clients;
    int running = int(devices->size());
    for (const DeviceInfo& d : *devices) {
        WorkerOptions o = options;
        const QString tag = d.torchDevice();
        if (several)
            o.name = QStringLiteral("%1 %2").arg(
                options.name.isEmpty() ? QHostInfo::localHostName() : options.name, tag);
        auto prefixed = [log, several, tag](const QString& line) {
            log(several ? QStringLiteral("[%1] %2").arg(tag, line) : line);
        };
        clients.push_back(std::make_unique<WorkerClient>(o, d, *identity, prefixed, [&running] {
            if (--running == 0)
                QCoreApplication::exit(0);
        }));
    }
    for (auto& c : clients)
        c->start();
    QCoreApplication::exec();
    int code = 0;
    for (const auto& c : clients)
        code = code != 0 ? code : c->exitCode();
    return code;
}

} // namespace tandem
