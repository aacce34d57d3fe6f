// The engine's plain value types: run configuration, metrics and control. No LibTorch here.

#include "engine/training.h"

#include "common/files.h"
#include "model/ggufexport.h"

#include <QJsonArray>

#include <cmath>

namespace tandem {

namespace {

QJsonArray workersJson(const QList<WorkerStepStats>& ws) {
    QJsonArray a;
    for (const WorkerStepStats& w : ws) {
        QJsonObject o{{QStringLiteral("name"), w.name},
                      {QStringLiteral("samples"), static_cast<qint64>(w.samples)},
                      {QStringLiteral("compute_ms"), w.computeMs},
                      {QStringLiteral("wait_ms"), w.waitMs}};
        if (w.shards > 0) {
            o.insert(QStringLiteral("shard"), w.shard);
            o.insert(QStringLiteral("shards"), w.shards);
            o.insert(QStringLiteral("shard_bytes"), qint64(w.shardBytes));
            o.insert(QStringLiteral("link_bytes"), w.linkBytes);
        }
        a.append(o);
    }
    return a;
}

} // namespace

const QList<RunField>& runFields() {
    // The ranges are generous; what they exclude is what would overflow (a timeout in
    // milliseconds must fit an int) or could not be meant (a learning rate of 1e6).
    static const QList<RunField> fields = [] {
        using C = RunConfig;
        QList<RunField> f;
        auto i32 = [&](const char* key, const char* option, double lo, double hi, int C::*m) {
            RunField r{key, option, lo, hi};
            r.i32 = m;
            f << r;
        };
        auto i64 = [&](const char* key, const char* option, double lo, double hi, int64_t C::*m) {
            RunField r{key, option, lo, hi};
            r.i64 = m;
            f << r;
        };
        auto f64 = [&](const char* key, const char* option, double lo, double hi, bool loOpen,
                       double C::*m) {
            RunField r{key, option, lo, hi, loOpen};
            r.f64 = m;
            f << r;
        };
        constexpr double kSteps = 1e12; // far beyond any run, exact in a double
        i32("epochs", "epochs", 1, 100000, &C::epochs);
        i32("batch", "batch", 1, 1 << 20, &C::batch);
        f64("lr", "lr", 0, 100, true, &C::lr);
        f64("momentum", "momentum", 0, 0.999999, false, &C::momentum);
        // -1 stands for "the optimizer's default"; other negative values mean nothing.
        f64("weight_decay", "weight-decay", -1, 1, false, &C::weightDecay);
        f64("beta", "beta", 0, 1000, true, &C::beta);
        i32("warmup_steps", "warmup-steps", 0, 1e9, &C::warmupSteps);
        i32("threads", "threads", 0, 1024, &C::threads);
        i64("limit_train", "limit-train", 0, kSteps, &C::limitTrain);
        i64("limit_test", "limit-test", 0, kSteps, &C::limitTest);
        i64("max_steps", "max-steps", 0, kSteps, &C::maxSteps);
        i32("checkpoint_every", "checkpoint-every", 0, 1e9, &C::checkpointEvery);
        i32("eval_batch", "eval-batch", 1, 1 << 20, &C::evalBatch);
        i32("staleness", "staleness", 0, 1000, &C::staleness);
        i32("local_steps", "local-steps", 1, 10000, &C::localSteps);
        i32("fragments", "fragments", 1, 256, &C::fragments);
        f64("outer_lr", "outer-lr", 0, 10, true, &C::outerLr);
        f64("outer_momentum", "outer-momentum", 0, 0.999, false, &C::outerMomentum);
        i32("workers", "workers", 0, 256, &C::workers);
        // Seconds; a day is longer than any laptop lid stays closed mid-run.
        i32("worker_timeout", "worker-timeout", 1, 86400, &C::workerTimeoutS);
        i32("join_timeout", "join-timeout", 0, 86400, &C::joinTimeoutS);
        return f;
    }();
    return fields;
}

double RunField::get(const RunConfig& c) const {
    return i32 ? double(c.*i32) : i64 ? double(c.*i64) : c.*f64;
}

Status RunField::check(double v, const QString& name) const {
    const bool inRange = std::isfinite(v) && (loOpen ? v > lo : v >= lo) && v <= hi;
    if (!inRange)
        return makeError(
            ErrorCode::InvalidArgument,
            (loOpen ? QStringLiteral("%1 must be above %2 and at most %3 (got %4)")
                    : QStringLiteral("%1 must be between %2 and %3 (got %4)"))
                .arg(name, QString::number(lo), QString::number(hi), QString::number(v, 'g', 17)));
    if (integer() && v != std::floor(v))
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("%1 must be a whole number (got %2)")
                             .arg(name, QString::number(v, 'g', 17)));
    return success();
}

Status RunField::set(RunConfig& c, double v, const QString& name) const {
    if (auto st = check(v, name); !st)
        return st;
    if (i32)
        c.*i32 = int(v);
    else if (i64)
        c.*i64 = int64_t(v);
    else
        c.*f64 = v;
    return success();
}

QJsonObject RunConfig::toJson() const {
    return QJsonObject{
        {QStringLiteral("model"), model},
        {QStringLiteral("lora"), lora},
        {QStringLiteral("checkpoint_activations"), checkpointActivations},
        {QStringLiteral("gguf"), gguf},
        {QStringLiteral("data"), data},
        {QStringLiteral("epochs"), epochs},
        {QStringLiteral("batch"), batch},
        {QStringLiteral("loss"), nameOf(loss)},
        {QStringLiteral("beta"), beta},
        {QStringLiteral("optimizer"), nameOf(optimizer)},
        {QStringLiteral("lr"), lr},
        {QStringLiteral("momentum"), momentum},
        {QStringLiteral("weight_decay"), weightDecay},
        {QStringLiteral("schedule"), nameOf(schedule)},
        {QStringLiteral("warmup_steps"), warmupSteps},
        // 64-bit seeds do not survive a double; they travel as text.
        {QStringLiteral("seed"), QString::number(seed)},
        {QStringLiteral("threads"), threads},
        {QStringLiteral("limit_train"), static_cast<qint64>(limitTrain)},
        {QStringLiteral("limit_test"), static_cast<qint64>(limitTest)},
        {QStringLiteral("max_steps"), static_cast<qint64>(maxSteps)},
        {QStringLiteral("checkpoint_every"), checkpointEvery},
        {QStringLiteral("eval_batch"), evalBatch},
        {QStringLiteral("out"), outDir},
        {QStringLiteral("mode"), nameOf(mode)},
        {QStringLiteral("wire"), nameOf(wire)},
        {QStringLiteral("precision"), nameOf(precision)},
        {QStringLiteral("staleness"), staleness},
        {QStringLiteral("local_steps"), localSteps},
        {QStringLiteral("fragments"), fragments},
        {QStringLiteral("outer_lr"), outerLr},
        {QStringLiteral("outer_momentum"), outerMomentum},
        {QStringLiteral("outer_wire"), nameOf(outerWire)},
        {QStringLiteral("inner_lr_scaling"), nameOf(innerLrScaling)},
        // Which machines take part: the run description the app saves names them too.
        {QStringLiteral("listen"), listen},
        {QStringLiteral("workers"), workers},
        {QStringLiteral("local_worker"), localWorker},
        {QStringLiteral("shard"), shard},
        {QStringLiteral("shard_log"), shardLog},
        {QStringLiteral("device"), device},
        {QStringLiteral("worker_timeout"), workerTimeoutS},
        {QStringLiteral("join_timeout"), joinTimeoutS},
        {QStringLiteral("invites"), QJsonArray::fromStringList(invites)},
    };
}

const QStringList& runChoiceKeys() {
    static const QStringList keys = {
        QStringLiteral("loss"),      QStringLiteral("optimizer"),
        QStringLiteral("schedule"),  QStringLiteral("mode"),
        QStringLiteral("wire"),      QStringLiteral("outer_wire"),
        QStringLiteral("precision"), QStringLiteral("inner_lr_scaling")};
    return keys;
}

Status setRunChoice(RunConfig& c, const QString& key, const QString& value) {
    if (key == QLatin1String("loss"))
        return parseInto(value, c.loss, "loss");
    if (key == QLatin1String("optimizer"))
        return parseInto(value, c.optimizer, "optimizer");
    if (key == QLatin1String("schedule"))
        return parseInto(value, c.schedule, "schedule");
    if (key == QLatin1String("mode"))
        return parseInto(value, c.mode, "mode");
    if (key == QLatin1String("wire"))
        return parseInto(value, c.wire, "wire precision");
    if (key == QLatin1String("outer_wire"))
        return parseInto(value, c.outerWire, "outer-wire format");
    if (key == QLatin1String("precision"))
        return parseInto(value, c.precision, "precision");
    if (key == QLatin1String("inner_lr_scaling"))
        return parseInto(value, c.innerLrScaling, "inner learning-rate scaling");
    return makeError(ErrorCode::InvalidArgument, QStringLiteral("\"%1\" is not a choice").arg(key));
}

QString loraBase(const QString& spec, QString* rest) {
    QStringList kept;
    QString base;
    for (const QString& raw : spec.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QString item = raw.trimmed();
        if (item.startsWith(QLatin1String("base="))) {
            base = item.mid(5).toLower();
            if (base == QLatin1String("bf16") || base == QLatin1String("fp16") ||
                base == QLatin1String("fp32"))
                base.clear();
        } else {
            kept << item;
        }
    }
    if (rest)
        *rest = kept.join(QLatin1Char(','));
    return base;
}

QString withLoraBase(const QString& spec, const QString& base) {
    QString rest;
    loraBase(spec, &rest);
    if (spec.trimmed().isEmpty() || base.isEmpty())
        return rest;
    // Before the targets, whose list runs to the end.
    return rest.isEmpty() ? QStringLiteral("base=") + base
                          : QStringLiteral("base=%1,%2").arg(base, rest);
}

Expected<RunConfig> RunConfig::readFile(const QString& path) {
    auto o = readJsonObjectFile(path, QStringLiteral("run description"));
    if (!o)
        return o.error();
    auto c = fromJson(*o);
    if (!c)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("%1: %2").arg(path, c.error().message));
    return c;
}

namespace {

// The run description's true/false fields and its list of invites.
Status readFlagsAndInvites(const QJsonObject& o, RunConfig& c) {
    const QJsonValue local = o.value(QStringLiteral("local_worker"));
    const QJsonValue shard = o.value(QStringLiteral("shard"));
    const QJsonValue shardLog = o.value(QStringLiteral("shard_log"));
    const QJsonValue recompute = o.value(QStringLiteral("checkpoint_activations"));
    const QJsonValue invites = o.value(QStringLiteral("invites"));
    bool listsOk = true;
    if (local.isBool())
        c.localWorker = local.toBool();
    else if (!local.isUndefined())
        listsOk = false;
    if (recompute.isBool())
        c.checkpointActivations = recompute.toBool();
    else if (!recompute.isUndefined())
        listsOk = false;
    if (shard.isBool())
        c.shard = shard.toBool();
    else if (!shard.isUndefined())
        listsOk = false;
    if (shardLog.isBool())
        c.shardLog = shardLog.toBool();
    else if (!shardLog.isUndefined())
        listsOk = false;
    if (invites.isArray()) {
        for (const QJsonValue& v : invites.toArray()) {
            if (!v.isString() || c.invites.size() >= 256)
                listsOk = false;
            else
                c.invites << v.toString();
        }
    } else if (!invites.isUndefined()) {
        listsOk = false;
    }
    if (!listsOk)
        return makeError(
            ErrorCode::InvalidArgument,
            QStringLiteral("run description: a value has the wrong type (\"local_"
                           "worker\", \"shard\", \"shard_log\" and \"checkpoint_activations\" "
                           "take true or false, \"invites\" a list of at most 256 addresses)"));
    return success();
}

} // namespace

Expected<RunConfig> RunConfig::fromJson(const QJsonObject& o) {
    RunConfig c;
    // Text fields, read as they are; the numeric ones come from runFields().
    using C = RunConfig;
    static const std::pair<const char*, QString C::*> texts[] = {
        {"model", &C::model},   {"data", &C::data},     {"lora", &C::lora}, {"out", &C::outDir},
        {"listen", &C::listen}, {"device", &C::device}, {"gguf", &C::gguf}};
    QStringList known = {QStringLiteral("seed"),
                         QStringLiteral("local_worker"),
                         QStringLiteral("shard"),
                         QStringLiteral("shard_log"),
                         QStringLiteral("checkpoint_activations"),
                         QStringLiteral("invites")};
    for (const auto& t : texts)
        known << QLatin1String(t.first);
    known << runChoiceKeys();
    for (const RunField& f : runFields())
        known << QLatin1String(f.key);
    for (auto it = o.constBegin(); it != o.constEnd(); ++it)
        if (!known.contains(it.key()))
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("run description: unknown key \"%1\"").arg(it.key()));
    const auto wrongType = [](const QString& key, const char* expected) {
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("run description: \"%1\" has the wrong type (expected %2)")
                             .arg(key, QLatin1String(expected)));
    };
    for (const RunField& f : runFields()) {
        const QString key = QLatin1String(f.key);
        const QJsonValue v = o.value(key);
        if (v.isUndefined())
            continue;
        if (!v.isDouble())
            return wrongType(key, "a number");
        // The range is checked on the number as written, before it is narrowed to the field's
        // type: 4294968 seconds must be refused, not wrapped into 704 ms.
        if (auto st = f.set(c, v.toDouble(), QStringLiteral("run description: \"%1\"").arg(key));
            !st)
            return st.error();
    }
    for (const auto& [k, member] : texts) {
        const QJsonValue v = o.value(QLatin1String(k));
        if (v.isUndefined())
            continue;
        if (!v.isString())
            return wrongType(QLatin1String(k), "text");
        c.*member = v.toString();
    }
    for (const QString& key : runChoiceKeys()) {
        const QJsonValue v = o.value(key);
        if (v.isUndefined())
            continue;
        if (!v.isString())
            return wrongType(key, "text");
        if (auto st = setRunChoice(c, key, v.toString()); !st)
            return st.error();
    }
    if (auto st = readFlagsAndInvites(o, c); !st)
        return st.error();
    const QJsonValue s = o.value(QStringLiteral("seed"));
    if (s.isString()) {
        bool sok = false;
        c.seed = s.toString().toULongLong(&sok);
        if (!sok)
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("run description: seed is not a whole number"));
    } else if (s.isDouble()) {
        const double d = s.toDouble();
        if (!(d >= 0) || d > 9007199254740992.0 || d != std::floor(d))
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("run description: seed must be a whole number from 0 "
                                            "to 2^53, or text for larger seeds"));
        c.seed = static_cast<uint64_t>(d);
    } else if (!s.isUndefined()) {
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("run description: seed is not a whole number"));
    }
    if (auto st = c.validate(); !st)
        return st.error();
    return c;
}

Status RunConfig::validate() const {
    auto bad = [](const QString& m) { return makeError(ErrorCode::InvalidArgument, m); };
    if (model.isEmpty())
        return bad(QStringLiteral("no model given"));
    if (data.isEmpty())
        return bad(QStringLiteral("no dataset given"));
    for (const RunField& f : runFields())
        if (auto st = f.check(f.get(*this), QLatin1String(f.key)); !st)
            return st.error();
    const bool hf = ModelSource::parse(model).isHf();
    if (!lora.isEmpty() && !hf)
        return bad(QStringLiteral("--lora adds adapters to a Hugging Face model (--model hf:DIR); "
                                  "%1 is not one")
                       .arg(model));
    if (!gguf.isEmpty()) {
        GgufQuant q;
        if (!hf)
            return bad(QStringLiteral("--gguf writes a Hugging Face model for llama.cpp "
                                      "(--model hf:DIR); %1 is not one")
                           .arg(model));
        if (!ggufQuantFromName(gguf, &q))
            return bad(QStringLiteral("--gguf takes %1, not \"%2\"")
                           .arg(ggufQuantNames().join(QStringLiteral(", ")), gguf));
    }
    if (checkpointActivations && !hf)
        return bad(QStringLiteral("--checkpoint-activations recomputes a Hugging Face model's "
                                  "blocks (--model hf:DIR); %1 is not one")
                       .arg(model));
    if (workers > 0 && listen.isEmpty())
        return bad(QStringLiteral("waiting for workers needs --listen HOST:PORT"));
    if (!localWorker && workers == 0)
        return bad(QStringLiteral("--no-local-worker needs --workers N with N at least 1"));
    if (shard) {
        if (mode != TrainMode::Sync && mode != TrainMode::LocalSgd)
            return bad(QStringLiteral("--shard splits a sync or local-SGD run's optimizer across "
                                      "its machines; use it with --mode sync or local-sgd"));
        if (listen.isEmpty() || workers == 0)
            return bad(QStringLiteral("--shard splits the run across this machine and its "
                                      "workers; give --listen HOST:PORT and --workers N"));
        if (!lora.isEmpty())
            return bad(QStringLiteral("--shard is for a full fine-tune: a LoRA run's adapters "
                                      "are small enough for one machine; leave out --shard"));
    }
    if (fragments > 1 && mode != TrainMode::LocalSgd && mode != TrainMode::Auto)
        return bad(QStringLiteral("fragments stream local-SGD's exchange; use them with "
                                  "--mode local-sgd or auto, or leave fragments at 1"));
    if (fragments > localSteps)
        return bad(QStringLiteral("fragments is %1 but local_steps is %2: each fragment needs at "
                                  "least one inner step of its own; use at most %2 fragments")
                       .arg(fragments)
                       .arg(localSteps));
    return success();
}

double RunConfig::effectiveWeightDecay() const {
    if (weightDecay >= 0)
        return weightDecay;
    return optimizer == OptimizerKind::AdamW || optimizer == OptimizerKind::AdamW8bit ? 0.01 : 0.0;
}

QJsonObject StepMetrics::toJson() const {
    QJsonObject o{{QStringLiteral("type"), QStringLiteral("step")},
                  {QStringLiteral("step"), static_cast<qint64>(step)},
                  {QStringLiteral("epoch"), epoch},
                  {QStringLiteral("epoch_step"), static_cast<qint64>(epochStep)},
                  {QStringLiteral("loss"), loss},
                  {QStringLiteral("accuracy"), accuracy},
                  {QStringLiteral("lr"), lr},
                  {QStringLiteral("samples"), static_cast<qint64>(samples)},
                  {QStringLiteral("step_ms"), stepMs},
                  {QStringLiteral("samples_per_s"), samplesPerS},
                  {QStringLiteral("elapsed_s"), elapsedS},
                  {QStringLiteral("workers"), workersJson(workers)}};
    pairs.writeTo(o, QString());
    return o;
}

QJsonObject EpochMetrics::toJson() const {
    QJsonObject o{{QStringLiteral("type"), QStringLiteral("epoch")},
                  {QStringLiteral("epoch"), epoch},
                  {QStringLiteral("train_loss"), trainLoss},
                  {QStringLiteral("train_accuracy"),
                   std::isfinite(trainAccuracy) ? QJsonValue(trainAccuracy) : QJsonValue()}};
    test.writeTo(o);
    return o;
}

int threadsFor(int requested, int cores, QString* warning) {
    cores = std::max(1, cores);
    if (requested <= 0)
        return cores;
    if (requested > kMaxThreadsPerCore * cores) {
        if (warning)
            *warning = QStringLiteral("%1 threads is more than %2 per core on this machine's %3 "
                                      "core(s), which only slows training down; using %3")
                           .arg(requested)
                           .arg(kMaxThreadsPerCore)
                           .arg(cores);
        return cores;
    }
    return requested;
}

QString WorkerSummary::statusName(Status s) {
    switch (s) {
    case Status::Active:
        return QStringLiteral("active");
    case Status::LeftOut:
        return QStringLiteral("left-out");
    case Status::Dropped:
        return QStringLiteral("dropped");
    }
    return {};
}

QJsonObject MemoryPlanFigures::toJson() const {
    return QJsonObject{{QStringLiteral("fixed_bytes"), qint64(fixedBytes)},
                       {QStringLiteral("per_sample_bytes"), qint64(perSampleBytes)},
                       {QStringLiteral("samples_at_once"), qint64(samplesAtOnce)}};
}

QJsonObject RunSummary::toJson() const {
    QJsonArray ws;
    for (const WorkerSummary& w : workers)
        ws.append(QJsonObject{
            {QStringLiteral("name"), w.name},
            {QStringLiteral("device"), w.device},
            {QStringLiteral("samples"), static_cast<qint64>(w.samples)},
            {QStringLiteral("samples_per_s"), w.samplesPerS},
            {QStringLiteral("compute_s"), w.computeS},
            {QStringLiteral("communicate_s"), w.communicateS},
            {QStringLiteral("gradient_bytes_overlapped"), static_cast<qint64>(w.overlappedBytes)},
            {QStringLiteral("wait_s"), w.waitS},
            {QStringLiteral("bytes"), static_cast<qint64>(w.bytes)},
            {QStringLiteral("left_out"), w.leftOut},
            {QStringLiteral("status"), WorkerSummary::statusName(w.status)},
            {QStringLiteral("reason"), w.reason}});
    QJsonObject o{
        {QStringLiteral("model"), model},
        {QStringLiteral("mode"), nameOf(mode)},
        {QStringLiteral("data"), data},
        {QStringLiteral("dataset_hash"), datasetHash},
        {QStringLiteral("finished"), finished},
        {QStringLiteral("epochs"), epochs},
        {QStringLiteral("steps"), static_cast<qint64>(steps)},
        {QStringLiteral("samples"), static_cast<qint64>(samples)},
        {QStringLiteral("loss"), nameOf(loss)},
        {QStringLiteral("objective"), nameOf(task)},
        {QStringLiteral("train_loss"), trainLoss},
        {QStringLiteral("train_accuracy"),
         std::isfinite(trainAccuracy) ? QJsonValue(trainAccuracy) : QJsonValue()},
        {QStringLiteral("samples_per_s"), samplesPerS},
        {QStringLiteral("train_seconds"), trainSeconds},
        {QStringLiteral("trainable_parameters"), static_cast<qint64>(trainableParameters)},
        {QStringLiteral("frozen_parameters"), static_cast<qint64>(frozenParameters)},
        {QStringLiteral("wire_bytes_per_step"), wireBytesPerStep},
        {QStringLiteral("stale_dropped"), static_cast<qint64>(staleDropped)},
        {QStringLiteral("out"), outDir},
        {QStringLiteral("checkpoint"), checkpoint},
        {QStringLiteral("workers"), ws}};
    if (memoryPlan.fixedBytes > 0)
        o.insert(QStringLiteral("memory_plan"), memoryPlan.toJson());
    // null rather than a made-up figure when no epoch was evaluated, or for a figure the task
    // does not define
    test.writeTo(o);
    if (task == Task::Sequence || task == Task::Preference)
        o.insert(QStringLiteral("tokens_per_s"), tokensPerS);
    if (!traffic.isEmpty())
        o.insert(QStringLiteral("traffic_per_step"), traffic);
    if (!stepSplit.isEmpty())
        o.insert(QStringLiteral("step_split"), stepSplit);
    if (!shards.isEmpty()) {
        QJsonArray a;
        for (const Shard& sh : shards)
            a.append(QJsonObject{
                {QStringLiteral("machine"), sh.machine},
                {QStringLiteral("device_id"), sh.deviceId},
                {QStringLiteral("begin"), qint64(sh.begin)},
                {QStringLiteral("end"), qint64(sh.end)},
                {QStringLiteral("held_bytes"), qint64(sh.heldBytes)},
                {QStringLiteral("steps_measured"), qint64(sh.stepsMeasured)},
                {QStringLiteral("bytes_sent_per_step"), sh.sentPerStep},
                {QStringLiteral("bytes_received_per_step"), sh.receivedPerStep},
                {QStringLiteral("full_steps"), qint64(sh.fullSteps)},
                {QStringLiteral("bytes_sent_per_full_step"), sh.sentPerFullStep},
                {QStringLiteral("bytes_received_per_full_step"), sh.receivedPerFullStep}});
        o.insert(QStringLiteral("shards"), a);
    }
    return o;
}

void RunControl::pause() {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_paused = true;
}

void RunControl::resume() {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_paused = false;
    }
    m_cv.notify_all();
}

void RunControl::stop() {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
}

bool RunControl::paused() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_paused;
}

bool RunControl::waitWhilePaused() {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_cv.wait(lock, [this] { return !m_paused || m_stop.load(); });
    return !m_stop.load();
}

} // namespace tandem
