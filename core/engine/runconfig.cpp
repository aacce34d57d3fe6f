// The engine's plain value types: run configuration, metrics and control. No LibTorch here.

#include "training.h"

#include <QJsonArray>

namespace tandem {

namespace {

QJsonArray workersJson(const QList<WorkerStepStats>& ws) {
    QJsonArray a;
    for (const WorkerStepStats& w : ws)
        a.append(QJsonObject{{QStringLiteral("name"), w.name},
                             {QStringLiteral("samples"), static_cast<qint64>(w.samples)},
                             {QStringLiteral("compute_ms"), w.computeMs},
                             {QStringLiteral("wait_ms"), w.waitMs}});
    return a;
}

} // namespace

QJsonObject RunConfig::toJson() const {
    return QJsonObject{
        {QStringLiteral("model"), model},
        {QStringLiteral("data"), data},
        {QStringLiteral("epochs"), epochs},
        {QStringLiteral("batch"), batch},
        {QStringLiteral("optimizer"), optimizer},
        {QStringLiteral("lr"), lr},
        {QStringLiteral("momentum"), momentum},
        {QStringLiteral("weight_decay"), weightDecay},
        {QStringLiteral("schedule"), schedule},
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
        {QStringLiteral("mode"), mode},
        {QStringLiteral("wire"), wire},
        {QStringLiteral("staleness"), staleness},
        {QStringLiteral("local_steps"), localSteps},
        {QStringLiteral("outer_lr"), outerLr},
        {QStringLiteral("outer_momentum"), outerMomentum},
        // Which machines take part: the run description the app saves names them too.
        {QStringLiteral("listen"), listen},
        {QStringLiteral("workers"), workers},
        {QStringLiteral("local_worker"), localWorker},
        {QStringLiteral("worker_timeout"), workerTimeoutS},
        {QStringLiteral("join_timeout"), joinTimeoutS},
        {QStringLiteral("invites"), QJsonArray::fromStringList(invites)},
    };
}

Expected<RunConfig> RunConfig::fromJson(const QJsonObject& o) {
    RunConfig c;
    static const QStringList known = {
        QStringLiteral("model"),        QStringLiteral("data"),
        QStringLiteral("epochs"),       QStringLiteral("batch"),
        QStringLiteral("optimizer"),    QStringLiteral("lr"),
        QStringLiteral("momentum"),     QStringLiteral("weight_decay"),
        QStringLiteral("schedule"),     QStringLiteral("warmup_steps"),
        QStringLiteral("seed"),         QStringLiteral("threads"),
        QStringLiteral("limit_train"),  QStringLiteral("limit_test"),
        QStringLiteral("max_steps"),    QStringLiteral("checkpoint_every"),
        QStringLiteral("eval_batch"),   QStringLiteral("out"),
        QStringLiteral("mode"),         QStringLiteral("wire"),
        QStringLiteral("staleness"),    QStringLiteral("local_steps"),
        QStringLiteral("outer_lr"),     QStringLiteral("outer_momentum"),
        QStringLiteral("listen"),       QStringLiteral("workers"),
        QStringLiteral("local_worker"), QStringLiteral("worker_timeout"),
        QStringLiteral("invites"),      QStringLiteral("join_timeout")};
    for (auto it = o.constBegin(); it != o.constEnd(); ++it)
        if (!known.contains(it.key()))
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("run description: unknown key \"%1\"").arg(it.key()));
    auto str = [&](const char* k, QString& dst) -> bool {
        const QJsonValue v = o.value(QLatin1String(k));
        if (v.isUndefined())
            return true;
        if (!v.isString())
            return false;
        dst = v.toString();
        return true;
    };
    auto num = [&](const char* k, auto& dst) -> bool {
        const QJsonValue v = o.value(QLatin1String(k));
        if (v.isUndefined())
            return true;
        if (!v.isDouble())
            return false;
        using T = std::decay_t<decltype(dst)>;
        if constexpr (std::is_floating_point_v<T>) {
            dst = v.toDouble();
        } else {
            const double d = v.toDouble();
            if (d != double(qint64(d)))
                return false;
            dst = static_cast<T>(d);
        }
        return true;
    };
    QString seed;
    const bool ok = str("model", c.model) && str("data", c.data) && num("epochs", c.epochs) &&
                    num("batch", c.batch) && str("optimizer", c.optimizer) && num("lr", c.lr) &&
                    num("momentum", c.momentum) && num("weight_decay", c.weightDecay) &&
                    str("schedule", c.schedule) && num("warmup_steps", c.warmupSteps) &&
                    num("threads", c.threads) && num("limit_train", c.limitTrain) &&
                    num("limit_test", c.limitTest) && num("max_steps", c.maxSteps) &&
                    num("checkpoint_every", c.checkpointEvery) && num("eval_batch", c.evalBatch) &&
                    str("out", c.outDir) && str("mode", c.mode) && str("wire", c.wire) &&
                    num("staleness", c.staleness) && num("local_steps", c.localSteps) &&
                    num("outer_lr", c.outerLr) && num("outer_momentum", c.outerMomentum) &&
                    str("listen", c.listen) && num("workers", c.workers) &&
                    num("worker_timeout", c.workerTimeoutS) && num("join_timeout", c.joinTimeoutS);
    const QJsonValue local = o.value(QStringLiteral("local_worker"));
    const QJsonValue invites = o.value(QStringLiteral("invites"));
    bool listsOk = true;
    if (local.isBool())
        c.localWorker = local.toBool();
    else if (!local.isUndefined())
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
    if (!ok || !listsOk)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("run description: a value has the wrong type"));
    const QJsonValue s = o.value(QStringLiteral("seed"));
    if (s.isString()) {
        bool sok = false;
        c.seed = s.toString().toULongLong(&sok);
        if (!sok)
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("run description: seed is not a whole number"));
    } else if (s.isDouble()) {
        c.seed = static_cast<uint64_t>(s.toDouble());
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
    if (epochs < 1 || epochs > 100000)
        return bad(QStringLiteral("epochs must be between 1 and 100000 (got %1)").arg(epochs));
    if (batch < 1 || batch > 1 << 20)
        return bad(QStringLiteral("batch must be between 1 and 1048576 (got %1)").arg(batch));
    if (optimizer != QLatin1String("sgd") && optimizer != QLatin1String("adam") &&
        optimizer != QLatin1String("adamw"))
        return bad(
            QStringLiteral("unknown optimizer \"%1\"; use sgd, adam or adamw").arg(optimizer));
    if (!(lr > 0) || lr > 100)
        return bad(
            QStringLiteral("learning rate must be above 0 and at most 100 (got %1)").arg(lr));
    if (momentum < 0 || momentum >= 1)
        return bad(QStringLiteral("momentum must be in [0, 1) (got %1)").arg(momentum));
    if (weightDecay > 1)
        return bad(QStringLiteral("weight decay must be at most 1 (got %1)").arg(weightDecay));
    if (schedule != QLatin1String("constant") && schedule != QLatin1String("cosine"))
        return bad(QStringLiteral("unknown schedule \"%1\"; use constant or cosine").arg(schedule));
    if (warmupSteps < 0)
        return bad(QStringLiteral("warm-up steps cannot be negative"));
    if (threads < 0 || threads > 1024)
        return bad(QStringLiteral("threads must be between 0 (automatic) and 1024"));
    if (limitTrain < 0 || limitTest < 0 || maxSteps < 0 || checkpointEvery < 0)
        return bad(QStringLiteral("limits and step counts cannot be negative"));
    if (evalBatch < 1)
        return bad(QStringLiteral("the evaluation batch must be at least 1"));
    if (mode != QLatin1String("sync") && mode != QLatin1String("async") &&
        mode != QLatin1String("local-sgd"))
        return bad(QStringLiteral("unknown mode \"%1\"; use sync, async or local-sgd").arg(mode));
    if (staleness < 0 || staleness > 1000)
        return bad(QStringLiteral("the staleness bound must be between 0 and 1000"));
    if (localSteps < 1 || localSteps > 10000)
        return bad(QStringLiteral("local steps must be between 1 and 10000"));
    if (!(outerLr > 0) || outerLr > 10 || outerMomentum < 0 || outerMomentum >= 1)
        return bad(QStringLiteral(
            "the outer learning rate must be in (0, 10] and its momentum in [0, 1)"));
    if (wire != QLatin1String("fp32") && wire != QLatin1String("fp16") &&
        wire != QLatin1String("bf16"))
        return bad(
            QStringLiteral("unknown wire precision \"%1\"; use fp32, fp16 or bf16").arg(wire));
    if (workers < 0 || workers > 256)
        return bad(QStringLiteral("workers must be between 0 and 256"));
    if (workers > 0 && listen.isEmpty())
        return bad(QStringLiteral("waiting for workers needs --listen HOST:PORT"));
    if (!localWorker && workers == 0)
        return bad(QStringLiteral("--no-local-worker needs --workers N with N at least 1"));
    if (workerTimeoutS < 1)
        return bad(QStringLiteral("the worker timeout must be at least 1 second"));
    if (joinTimeoutS < 0)
        return bad(QStringLiteral("the join timeout cannot be negative"));
    return success();
}

double RunConfig::effectiveWeightDecay() const {
    if (weightDecay >= 0)
        return weightDecay;
    return optimizer == QLatin1String("adamw") ? 0.01 : 0.0;
}

QJsonObject StepMetrics::toJson() const {
    return QJsonObject{{QStringLiteral("type"), QStringLiteral("step")},
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
}

QJsonObject EpochMetrics::toJson() const {
    return QJsonObject{{QStringLiteral("type"), QStringLiteral("epoch")},
                       {QStringLiteral("epoch"), epoch},
                       {QStringLiteral("train_loss"), trainLoss},
                       {QStringLiteral("train_accuracy"), trainAccuracy},
                       {QStringLiteral("test_loss"), testLoss},
                       {QStringLiteral("test_accuracy"), testAccuracy}};
}

QJsonObject RunSummary::toJson() const {
    QJsonArray ws;
    for (const WorkerSummary& w : workers)
        ws.append(QJsonObject{{QStringLiteral("name"), w.name},
                              {QStringLiteral("device"), w.device},
                              {QStringLiteral("samples"), static_cast<qint64>(w.samples)},
                              {QStringLiteral("samples_per_s"), w.samplesPerS},
                              {QStringLiteral("compute_s"), w.computeS},
                              {QStringLiteral("communicate_s"), w.communicateS},
                              {QStringLiteral("wait_s"), w.waitS},
                              {QStringLiteral("bytes"), static_cast<qint64>(w.bytes)},
                              {QStringLiteral("left_out"), w.leftOut}});
    QJsonObject o{{QStringLiteral("model"), model},
                  {QStringLiteral("data"), data},
                  {QStringLiteral("dataset_hash"), datasetHash},
                  {QStringLiteral("finished"), finished},
                  {QStringLiteral("epochs"), epochs},
                  {QStringLiteral("steps"), static_cast<qint64>(steps)},
                  {QStringLiteral("samples"), static_cast<qint64>(samples)},
                  {QStringLiteral("train_loss"), trainLoss},
                  {QStringLiteral("train_accuracy"), trainAccuracy},
                  {QStringLiteral("samples_per_s"), samplesPerS},
                  {QStringLiteral("train_seconds"), trainSeconds},
                  {QStringLiteral("wire_bytes_per_step"), wireBytesPerStep},
                  {QStringLiteral("stale_dropped"), static_cast<qint64>(staleDropped)},
                  {QStringLiteral("out"), outDir},
                  {QStringLiteral("checkpoint"), checkpoint},
                  {QStringLiteral("workers"), ws}};
    // null rather than a made-up figure when no epoch was evaluated
    o.insert(QStringLiteral("test_accuracy"),
             testAccuracy >= 0 ? QJsonValue(testAccuracy) : QJsonValue());
    o.insert(QStringLiteral("test_loss"), testAccuracy >= 0 ? QJsonValue(testLoss) : QJsonValue());
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
