#pragma once

// The engine's public face: plain structs in, plain structs out. Nothing here includes
// LibTorch, so the command line, the UI and the network layer build without it.

#include "common/expected.h"
#include "common/runenums.h"
#include "engine/devices.h"
#include "model/ggufexport.h"
#include "model/modelsource.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

#include <array>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>

namespace tandem {

// The base precision a --lora spec names ("nf4", "int8"; empty for the folder's own dtype),
// and in `rest` the spec without it.
QString loraBase(const QString& spec, QString* rest = nullptr);
// `spec` holding base=`base` (no base for an empty one); empty for an empty spec.
QString withLoraBase(const QString& spec, const QString& base);

struct RunConfig {
    QString model = QStringLiteral("mnist-cnn"); // a zoo name, hf:DIR or a TorchScript file
    // hf: models. Low-rank adapters ("r=8,alpha=16,dropout=0.05,targets=q_proj,v_proj"): only
    // they train, the base weights stay frozen in their own dtype, or in 4 or 8 bits with
    // base=nf4 or base=int8. Empty: every weight trains.
    QString lora;
    // hf: models: each transformer block keeps only its input and recomputes its activations
    // in the backward pass, trading time for memory.
    bool checkpointActivations = false;
    // hf: models: at the end, also the model for llama.cpp, Ollama and LM Studio, as
    // RunFiles::gguf() in this quantization (ggufQuantNames(): "q4_k_m"); empty: none. The
    // family is checked before training starts, so a model GGUF cannot hold is refused then.
    QString gguf;
    QString data = QStringLiteral("fashion-mnist");
    int epochs = 1;
    int batch = 64; // the global batch: what one optimizer step sees, across all workers
    // What a step minimises; auto picks from the model's output and the data's targets before
    // the run starts, and the run (its checkpoint, its workers) carries the loss it picked.
    LossKind loss = LossKind::Auto;
    // Preference tuning's strength, as TRL names it for both: DPO's beta (how far the policy
    // may move from the reference) and ORPO's lambda (the odds-ratio term's weight).
    double beta = 0.1;
    OptimizerKind optimizer = OptimizerKind::Adam;
    double lr = 0.001;
    double momentum = 0.9;   // sgd
    double weightDecay = -1; // < 0: the optimizer's default (0, or 0.01 for adamw)
    Schedule schedule = Schedule::Constant;
    int warmupSteps = 0;
    uint64_t seed = 0;
    int threads = 0;        // LibTorch intra-op threads; 0: one per core
    int64_t limitTrain = 0; // use only the first N training samples (0: all)
    int64_t limitTest = 0;
    int64_t maxSteps = 0;    // stop (with a checkpoint) after this many steps in total
    int checkpointEvery = 0; // steps between periodic checkpoints (0: epoch ends only)
    int evalBatch = 1000;
    QString outDir;
    // auto: sync on one machine; with workers, sync, streaming local-SGD or this machine alone,
    // from the links, one timed step and the run's length (coordinator/modechoice.h).
    TrainMode mode = TrainMode::Auto;
    WireDtype wire = WireDtype::Fp32; // how tensors travel
    // What workers compute the forward pass in: fp32, or bf16/fp16 autocast where the device
    // has it (weights, gradients and the optimizer stay fp32). A device without it says so and
    // computes in fp32.
    Precision precision = Precision::Fp32;
    int staleness = 4;   // async: gradients staler than this many steps are dropped
    int localSteps = 32; // local-sgd: inner steps per round (H)
    // local-sgd: F > 1 streams the exchange: the parameters are cut into F fragments, one is
    // synchronised every H/F steps, and workers train on while it is in flight.
    int fragments = 1;
    bool streams() const { return mode == TrainMode::LocalSgd && fragments > 1; }
    double outerLr = 0.7; // local-sgd: the outer Nesterov optimizer (DiLoCo's defaults)
    double outerMomentum = 0.9;
    // local-sgd: how weights and parameter deltas travel; int8 and int4 carry what they round
    // away into the next round (error feedback).
    OuterWire outerWire = OuterWire::Fp32;
    // local-sgd: workers' inner learning rate is lr times the workers sharing a round (weighted
    // by their shares), so a round moves the model about as far as one machine's H steps over
    // the same samples; None keeps lr as given.
    LrScaling innerLrScaling = LrScaling::Workers;

    // Where and how this run meets its workers; not part of what a checkpoint resumes.
    QString listen;          // HOST:PORT; empty: this machine only
    int workers = 0;         // remote workers to wait for before training starts
    bool localWorker = true; // this machine trains too
    // Sync only: the fp32 masters, the optimizer's state and the gradients' sum are split across
    // this machine and the workers, each holding a range (engine/shard/), instead of all here.
    bool shard = false;
    // A sharded run's coordinator logs what each step adds to every range, so that the run goes
    // on without a machine it loses (engine/shard/shardlog.h): the owners send it their sums, in
    // fp32, a step. Off: a lost machine stops the run at its last checkpoint.
    bool shardLog = true;
    QString device; // the device this machine trains on: "cuda:1", "mps", "cpu"; empty: the best
    int workerTimeoutS = 30; // a worker silent this long is dropped
    // How long to wait for `workers` before training with those that came (0: as long as it
    // takes). The app waits a bounded time for the machines it invited.
    int joinTimeoutS = 0;
    QString home; // this node's identity and trust store
    QString name; // how workers see this machine; empty: the host name
    // The run is listed in the node's History (RunHistory); a sweep's trials are not.
    bool listInHistory = true;
    // Count what crosses between the host and the device, and every wait on the device, and
    // say it per step in the log and the summary (model/trafficledger.h). Not saved with the
    // run: it slows every operator a little.
    bool trafficLedger = false;
    // Time each sync step's phases (the local worker's pass, the wire, waiting for the others,
    // the optimizer), waiting for the device at each phase's end, and say them per step in the
    // log and the summary. Not saved with the run: the waits cost the device a little idle time.
    bool stepSplit = false;
    QStringList invites; // paired nodes running `tandem serve` to ask to join (HOST[:PORT])

    QJsonObject toJson() const;
    static Expected<RunConfig> fromJson(const QJsonObject& o);
    // A run description file (JSON, at most 1 MB); errors name the file.
    static Expected<RunConfig> readFile(const QString& path);
    Status validate() const;
    double effectiveWeightDecay() const;
};

// The numeric fields of a run description and the values each accepts. The command line
// (--worker-timeout), the JSON run description ("worker_timeout") and validate() all read
// this one table, so a value refused on one path is refused on the others with the same words.
struct RunField {
    const char* key;    // in the run description
    const char* option; // on the command line, without "--"
    double lo;
    double hi;
    bool loOpen = false; // lo itself is not allowed (a learning rate must be above 0)
    // The field; exactly one is set. Integer fields take whole numbers only.
    int RunConfig::*i32 = nullptr;
    int64_t RunConfig::*i64 = nullptr;
    double RunConfig::*f64 = nullptr;

    bool integer() const { return f64 == nullptr; }
    double get(const RunConfig& c) const;
    // Checks `v` against the range; the error names the field as `name`.
    Status check(double v, const QString& name) const;
    // Checks `v` and stores it.
    Status set(RunConfig& c, double v, const QString& name) const;
};
const QList<RunField>& runFields();

// The fields that take one name of a set (optimizer, schedule, mode, wire, outer_wire,
// precision), by the key they have in the run description (on the command line, with '-'
// for '_'); setRunChoice parses the name into the field's enum or says what is allowed.
const QStringList& runChoiceKeys();
Status setRunChoice(RunConfig& c, const QString& key, const QString& value);

struct WorkerStepStats {
    QString name;
    int64_t samples = 0;
    double computeMs = 0;
    double waitMs = 0; // the coordinator's wait for this worker beyond its compute
    // A sharded run: the machine's range ("shard 2 of 3"; 0: none), what it keeps for it, and
    // the bytes its links sent and received in the step.
    int shard = 0;
    int shards = 0;
    int64_t shardBytes = 0;
    double linkBytes = 0;
};

// Preference tuning's figures as TRL names them, summed over pairs: rewards/chosen,
// rewards/rejected, rewards/margins, logps/chosen and logps/rejected (engine/step/preference.h).
// No pairs for any other objective.
struct PairFigures {
    static constexpr int kCount = 5;
    // TRL's names of the five, in the order of `sums`.
    static constexpr std::array<const char*, kCount> kNames = {
        "rewards/chosen", "rewards/rejected", "rewards/margins", "logps/chosen", "logps/rejected"};
    std::array<double, kCount> sums{};
    int64_t pairs = 0;
    void add(const PairFigures& o);
    // Each as a mean over the pairs, under TRL's name after `prefix`, into `o`; nothing without
    // pairs.
    void writeTo(QJsonObject& o, const QString& prefix) const;
    // What writeTo wrote, as one pair of those means; no pairs where there are none.
    static PairFigures readFrom(const QJsonObject& o, const QString& prefix);
};

struct StepMetrics {
    int64_t step = 0;          // 1-based count of optimizer steps so far
    int epoch = 0;             // 0-based
    int64_t epochStep = 0;     // 1-based within the epoch
    int64_t stepsPerEpoch = 0; // this epoch's: it can take more steps than planned
    int64_t totalSteps = 0;
    int epochs = 0; // the run's
    double loss = 0;
    double accuracy = 0; // on this step's training batch
    double lr = 0;
    int64_t samples = 0;
    double stepMs = 0;
    double samplesPerS = 0; // training samples / training-loop wall time, so far
    double elapsedS = 0;    // training-loop wall time so far
    QList<WorkerStepStats> workers;
    PairFigures pairs; // preference tuning's, on this step's batch
    QJsonObject toJson() const;
    // A step's line of metrics.jsonl, as toJson wrote it (what it holds of it).
    static StepMetrics fromJson(const QJsonObject& o);
};

// The test split's figures after an evaluation. Which ones are defined follows the run's task
// (runenums.h): accuracy for classification (top-1), sequences (next token) and multi-label
// (per label); perplexity (exp of the mean token loss) for sequences; R² and the mean absolute
// error for regression. The others are NaN, and null in JSON.
struct TestMetrics {
    bool evaluated = false;
    double loss = std::numeric_limits<double>::quiet_NaN();
    double accuracy = std::numeric_limits<double>::quiet_NaN();
    double perplexity = std::numeric_limits<double>::quiet_NaN();
    double r2 = std::numeric_limits<double>::quiet_NaN();
    double mae = std::numeric_limits<double>::quiet_NaN();
    PairFigures pairs; // preference tuning's, on the held-out pairs

    bool hasAccuracy() const { return evaluated && !std::isnan(accuracy); }
    // "test_loss", "test_accuracy", "test_perplexity", "test_r2", "test_mae" into `o`: a number
    // where defined, else null.
    void writeTo(QJsonObject& o) const;
    static TestMetrics readFrom(const QJsonObject& o);
    // The figure a sweep ranks by ("test_accuracy", …); NaN when not defined.
    double byName(const QString& key) const;
};

struct EpochMetrics {
    int epoch = 0;
    double trainLoss = 0;
    double trainAccuracy = 0; // NaN where the task has no accuracy
    TestMetrics test;
    QJsonObject toJson() const;
    static EpochMetrics fromJson(const QJsonObject& o);
};

struct WorkerSummary {
    // How the worker ended the run: still taking part, left out by the balancer (its
    // communication cost more than its compute added), or dropped (it left, failed or went
    // silent). `reason` says why for the last two.
    enum class Status { Active, LeftOut, Dropped };
    static QString statusName(Status s);

    QString name;
    QString device;
    Status status = Status::Active;
    QString reason;
    int64_t bytes = 0;    // sent and received on the wire
    bool leftOut = false; // the balancer stopped giving it work (communication too costly)
    int64_t samples = 0;
    double samplesPerS = 0;
    double computeS = 0;
    double communicateS = 0;
    double waitS = 0;
    // Gradient bytes a remote worker sent while its backward pass was still computing the rest.
    int64_t overlappedBytes = 0;
};

// What the memory plan counts on for one worker's replica (bytes; 0: no figure): the model with
// its gradients, optimizer state and the mode's records, each sample's activations, and the
// samples it computes at once (0: no limit).
struct MemoryPlanFigures {
    int64_t fixedBytes = 0;
    int64_t perSampleBytes = 0;
    int64_t samplesAtOnce = 0;

    // {"fixed_bytes", "per_sample_bytes", "samples_at_once"}: the run summary's and a worker's
    // joined event's "memory_plan".
    QJsonObject toJson() const;
};

struct RunSummary {
    QString model;
    TrainMode mode = TrainMode::Sync; // what it trained in, after auto has chosen
    QString data;
    QString datasetHash;
    QString outDir;
    QString checkpoint;
    bool finished = false; // false when stopped early (maxSteps, stop request)
    int epochs = 0;        // completed epochs
    int64_t steps = 0;
    int64_t samples = 0;
    LossKind loss = LossKind::CrossEntropy; // as the run resolved it
    Task task = Task::Classification;
    double trainLoss = 0; // mean over the last epoch's steps (or the steps run)
    double trainAccuracy = 0;
    TestMetrics test; // the last evaluation's
    double samplesPerS = 0;
    double tokensPerS = 0; // sequences: samples/s times the tokens a sample predicts
    double trainSeconds = 0;
    int64_t trainableParameters = 0;
    int64_t frozenParameters = 0; // requires_grad=False in the model: never sent or changed
    double wireBytesPerStep = 0;  // per remote worker, both directions
    // With RunConfig::trafficLedger: this process's traffic per step after the first, in
    // words, and as figures by purpose ("model", "data", ...; empty without the ledger).
    QString trafficPerStep;
    QJsonObject traffic;
    // With RunConfig::stepSplit: each phase's milliseconds per step after the first
    // ("local_pass_ms", "wire_ms", "waiting_ms", "optimizer_ms", "step_ms", "steps").
    QJsonObject stepSplit;
    int64_t staleDropped = 0; // async: gradients dropped for staleness
    // What the memory plan expected of this machine's own worker (0: no local worker or no
    // figure).
    MemoryPlanFigures memoryPlan;
    QList<WorkerSummary> workers;
    // A sharded run (RunConfig::shard): each machine's range of the trainable values, what it
    // kept for it (fp32 masters, the optimizer's state, the gradients' sum), and the bytes its
    // links to the coordinator and to the other machines carried a step, after the first.
    struct Shard {
        QString machine;  // the worker's name in the run
        QString deviceId; // its device ID
        int64_t begin = 0, end = 0;
        int64_t heldBytes = 0;
        int64_t stepsMeasured = 0; // 0: too few steps to say
        double sentPerStep = 0, receivedPerStep = 0;
        // The same over the steps in which every machine computed: what sharding moves a step,
        // against all-reduce's optimum (the balancer may leave a machine out of others).
        int64_t fullSteps = 0;
        double sentPerFullStep = 0, receivedPerFullStep = 0;
    };
    QList<Shard> shards;
    QJsonObject toJson() const;
};

struct RunInfo {
    QString model;
    LossKind loss = LossKind::CrossEntropy;
    Task task = Task::Classification;
    QString datasetDescription;
    int64_t trainSamples = 0;
    int64_t testSamples = 0;
    int64_t parameters = 0; // trainable
    int64_t frozenParameters = 0;
    int64_t stepsPerEpoch = 0;
    int64_t totalSteps = 0;
    int64_t startStep = 0;
    // Sequences: the positions a sample predicts, so that samples/s reads as tokens/s (0
    // otherwise).
    int64_t tokensPerSample = 0;
    QList<DeviceInfo> devices;
};

// What happened to the run, typed, so that a UI words each kind in its own language. The log
// line for the same event comes through RunObserver::onMessage.
struct RunEvent {
    enum class Kind {
        WorkerJoined,  // worker: took its place in the run
        WorkerDropped, // worker left, failed or went silent; reason says which
        WorkerLeftOut, // the balancer gives worker no samples; reason says why
        WorkerBack,    // a worker left out takes part again
        Paused,
        Resumed,
        InviteDeclined,    // worker: the invited node (HOST:PORT); reason: its answer
        WorkersGone,       // every worker left; the run waits a while for one to join
        CheckpointWritten, // at step
        ModeChosen,        // reason: what automatic mode chose, and why
    };
    Kind kind = Kind::WorkerJoined;
    QString worker;
    QString reason;
    int64_t step = 0; // optimizer steps so far
    // WorkerLeftOut: what a step costs the worker before its first sample (moving the weights,
    // its compute's fixed part), and what the step takes without it; 0 where unknown.
    double costMs = 0, stepMs = 0;
    // WorkerLeftOut for what the run's own steps showed: their mean with the worker (stepMs:
    // without it); 0 where it was left out on the balancer's model.
    double withMs = 0;
    // WorkerDropped: the worker said it was leaving (its owner stopped lending it), no fault.
    bool leaving = false;

    // {"event": "worker_joined", "worker": …, "reason": …, "step": …}: the line `tandem train
    // --events` writes, and what a reader of those lines parses back.
    QJsonObject toJson() const;
    static QString kindName(Kind k);
    static std::optional<Kind> kindFromName(const QString& name);
};

// Called on the training thread; implementations must be quick or hand off to their own
// thread (the UI uses queued signals).
class RunObserver {
public:
    virtual ~RunObserver() = default;
    virtual void onStart(const RunInfo&) {}
    virtual void onStep(const StepMetrics&) {}
    virtual void onEpoch(const EpochMetrics&) {}
    virtual void onMessage(const QString&) {}
    virtual void onEvent(const RunEvent&) {}
    // The test split's evaluation at an epoch's end: `done` of `total` samples, 0 as it begins.
    // The evaluation may run on the thread that computes, while the training thread waits.
    virtual void onEvaluating(int64_t /*done*/, int64_t /*total*/) {}
    // Called now and then while the run waits (for workers); a chance to request a stop.
    virtual void onWaiting() {}
};

// Thread-safe pause, resume and stop, shared between a run and whoever controls it.
class RunControl {
public:
    void pause();
    void resume();
    void stop();
    bool stopRequested() const { return m_stop.load(); }
    bool paused() const;
    // Blocks while paused; returns false when stop was requested.
    bool waitWhilePaused();

private:
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_paused = false;
    std::atomic<bool> m_stop{false};
};

// Trains on this machine's best device. `resumeFrom` is a run checkpoint, or empty. The
// output folder receives model.pt, model.safetensors, checkpoint.tandem and metrics.jsonl.
Expected<RunSummary> runTraining(const RunConfig& config, const QString& resumeFrom,
                                 RunObserver* observer = nullptr, RunControl* control = nullptr);

// What Start would check before training: the dataset reads, the model loads and returns
// class scores for the dataset's inputs. Returns a line describing both, or the reader's or
// the model's error. Reads the whole dataset, so call it off the UI thread.
struct RunCheck {
    QString summary; // the model and the data, in a line
    // A language-model run of too few steps to learn: why, and the batch that makes enough
    // (0 where none does: more data is the answer). Empty and 0 otherwise.
    QString warning;
    int proposedBatch = 0;
    // Preference pairs: the first one as the model reads it (its prompt and both answers).
    QString preview;
};
Expected<RunCheck> checkRunInputs(const RunConfig& config);

// Reads a run checkpoint's stored configuration.
Expected<RunConfig> checkpointConfig(const QString& checkpoint);

// Writes a run checkpoint's model as `format` (model/modelsource.h): TorchScript and
// safetensors write one file; a Hugging Face model's formats write a folder, made when missing,
// except GGUF, one file written as `gguf` says.
// A format the model does not export as is refused, naming those it does.
Status exportCheckpoint(const QString& checkpoint, ExportFormat format, const QString& out,
                        const GgufOptions& gguf = {});

// Sets LibTorch's intra-op thread count (it defaults to one on some builds); 0 means one per
// core. Returns the count in force; `warning` receives threadsFor's, if any.
int setTorchThreads(int threads, QString* warning = nullptr);

// The LibTorch thread count to use for `requested` (0: one per core) on a machine with `cores`
// cores. More than kMaxThreadsPerCore threads per core only makes the threads fight (1024 on
// two cores ran 90 times slower): such a request is capped at one per core and `warning` says
// so.
constexpr int kMaxThreadsPerCore = 4;
int threadsFor(int requested, int cores, QString* warning);

} // namespace tandem
