#include "engine/training.h"

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
    return o;
}

} // namespace tandem
