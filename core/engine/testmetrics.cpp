#include "engine/training.h"

#include <QJsonArray>

namespace tandem {

namespace {

QJsonValue numberOrNull(double v) {
    return std::isfinite(v) ? QJsonValue(v) : QJsonValue();
}

struct Field {
    const char* key;
    double TestMetrics::*member;
};
constexpr Field kFields[] = {{"test_loss", &TestMetrics::loss},
                             {"test_accuracy", &TestMetrics::accuracy},
                             {"test_perplexity", &TestMetrics::perplexity},
                             {"test_r2", &TestMetrics::r2},
                             {"test_mae", &TestMetrics::mae}};

} // namespace

void TestMetrics::writeTo(QJsonObject& o) const {
    for (const Field& f : kFields)
        o.insert(QLatin1String(f.key),
                 evaluated ? numberOrNull(this->*f.member) : QJsonValue(QJsonValue::Null));
    if (evaluated)
        pairs.writeTo(o, QStringLiteral("test_"));
}

TestMetrics TestMetrics::readFrom(const QJsonObject& o) {
    TestMetrics t;
    for (const Field& f : kFields) {
        const QJsonValue v = o.value(QLatin1String(f.key));
        if (v.isDouble())
            t.*f.member = v.toDouble();
    }
    t.evaluated = o.value(QStringLiteral("test_loss")).isDouble();
    return t;
}

PairFigures PairFigures::readFrom(const QJsonObject& o, const QString& prefix) {
    PairFigures p;
    for (int i = 0; i < kCount; ++i) {
        const QJsonValue v = o.value(prefix + QLatin1String(kNames[i]));
        if (!v.isDouble())
            return {};
        p.sums[size_t(i)] = v.toDouble();
    }
    p.pairs = 1;
    return p;
}

StepMetrics StepMetrics::fromJson(const QJsonObject& o) {
    StepMetrics m;
    m.step = o.value(QStringLiteral("step")).toInteger();
    m.epoch = o.value(QStringLiteral("epoch")).toInt();
    m.epochStep = o.value(QStringLiteral("epoch_step")).toInteger();
    m.loss = o.value(QStringLiteral("loss")).toDouble(std::numeric_limits<double>::quiet_NaN());
    m.accuracy = o.value(QStringLiteral("accuracy")).toDouble();
    m.lr = o.value(QStringLiteral("lr")).toDouble();
    m.samples = o.value(QStringLiteral("samples")).toInteger();
    m.stepMs = o.value(QStringLiteral("step_ms")).toDouble();
    m.samplesPerS = o.value(QStringLiteral("samples_per_s")).toDouble();
    m.elapsedS = o.value(QStringLiteral("elapsed_s")).toDouble();
    for (const QJsonValue& w : o.value(QStringLiteral("workers")).toArray()) {
        const QJsonObject wo = w.toObject();
        WorkerStepStats ws{wo.value(QStringLiteral("name")).toString(),
                           wo.value(QStringLiteral("samples")).toInteger(),
                           wo.value(QStringLiteral("compute_ms")).toDouble(),
                           wo.value(QStringLiteral("wait_ms")).toDouble()};
        ws.shard = wo.value(QStringLiteral("shard")).toInt();
        ws.shards = wo.value(QStringLiteral("shards")).toInt();
        ws.shardBytes = wo.value(QStringLiteral("shard_bytes")).toInteger();
        ws.linkBytes = wo.value(QStringLiteral("link_bytes")).toDouble();
        m.workers.append(ws);
    }
    m.pairs = PairFigures::readFrom(o, QString());
    return m;
}

EpochMetrics EpochMetrics::fromJson(const QJsonObject& o) {
    EpochMetrics e;
    e.epoch = o.value(QStringLiteral("epoch")).toInt();
    e.trainLoss = o.value(QStringLiteral("train_loss")).toDouble();
    e.trainAccuracy = o.value(QStringLiteral("train_accuracy"))
                          .toDouble(std::numeric_limits<double>::quiet_NaN());
    e.test = TestMetrics::readFrom(o);
    e.test.pairs = PairFigures::readFrom(o, QStringLiteral("test_"));
    return e;
}

double TestMetrics::byName(const QString& key) const {
    for (const Field& f : kFields)
        if (key == QLatin1String(f.key))
            return evaluated ? this->*f.member : std::numeric_limits<double>::quiet_NaN();
    return std::numeric_limits<double>::quiet_NaN();
}

namespace {

constexpr std::pair<RunEvent::Kind, const char*> kEventNames[] = {
    {RunEvent::Kind::WorkerJoined, "worker_joined"},
    {RunEvent::Kind::WorkerDropped, "worker_dropped"},
    {RunEvent::Kind::WorkerLeftOut, "worker_left_out"},
    {RunEvent::Kind::WorkerBack, "worker_back"},
    {RunEvent::Kind::Paused, "paused"},
    {RunEvent::Kind::Resumed, "resumed"},
    {RunEvent::Kind::InviteDeclined, "invite_declined"},
    {RunEvent::Kind::WorkersGone, "workers_gone"},
    {RunEvent::Kind::CheckpointWritten, "checkpoint_written"},
    {RunEvent::Kind::ModeChosen, "mode_chosen"}};

} // namespace

QString RunEvent::kindName(Kind k) {
    for (const auto& [kind, name] : kEventNames)
        if (kind == k)
            return QLatin1String(name);
    return {};
}

std::optional<RunEvent::Kind> RunEvent::kindFromName(const QString& name) {
    for (const auto& [kind, n] : kEventNames)
        if (name == QLatin1String(n))
            return kind;
    return std::nullopt;
}

QJsonObject RunEvent::toJson() const {
    QJsonObject o{{QStringLiteral("event"), kindName(kind)},
                  {QStringLiteral("step"), static_cast<qint64>(step)}};
    if (!worker.isEmpty())
        o.insert(QStringLiteral("worker"), worker);
    if (!reason.isEmpty())
        o.insert(QStringLiteral("reason"), reason);
    if (costMs > 0)
        o.insert(QStringLiteral("cost_ms"), costMs);
    if (stepMs > 0)
        o.insert(QStringLiteral("step_ms"), stepMs);
    if (withMs > 0)
        o.insert(QStringLiteral("with_ms"), withMs);
    if (leaving)
        o.insert(QStringLiteral("leaving"), true);
    return o;
}

void PairFigures::add(const PairFigures& o) {
    for (int i = 0; i < kCount; ++i)
        sums[size_t(i)] += o.sums[size_t(i)];
    pairs += o.pairs;
}

void PairFigures::writeTo(QJsonObject& o, const QString& prefix) const {
    if (pairs <= 0)
        return;
    for (int i = 0; i < kCount; ++i)
        o.insert(prefix + QLatin1String(kNames[i]), sums[size_t(i)] / double(pairs));
}

} // namespace tandem
