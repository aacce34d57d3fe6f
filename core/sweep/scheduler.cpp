#include "sweep/scheduler.h"

#include <QJsonArray>

#include <algorithm>
#include <cmath>

namespace tandem {

namespace {

constexpr std::pair<TrialRecord::Status, const char*> kStatusNames[] = {
    {TrialRecord::Status::Pending, "pending"},       {TrialRecord::Status::Running, "running"},
    {TrialRecord::Status::Waiting, "waiting"},       {TrialRecord::Status::Done, "done"},
    {TrialRecord::Status::Stopped, "stopped early"}, {TrialRecord::Status::Failed, "failed"}};

} // namespace

QString TrialRecord::statusName(Status s) {
    for (const auto& [v, n] : kStatusNames)
        if (v == s)
            return QLatin1String(n);
    return {};
}

QJsonObject TrialRecord::toJson() const {
    QJsonArray m;
    for (double v : metrics)
        m.append(v);
    QJsonObject o{{QStringLiteral("trial"), id},
                  {QStringLiteral("params"), params},
                  {QStringLiteral("rung"), rung},
                  {QStringLiteral("metrics"), m},
                  {QStringLiteral("status"), statusName(status)},
                  {QStringLiteral("device"), device},
                  {QStringLiteral("seconds"), seconds},
                  {QStringLiteral("samples_per_s"), samplesPerS},
                  {QStringLiteral("steps"), static_cast<qint64>(steps)},
                  {QStringLiteral("requeues"), requeues}};
    if (!error.isEmpty())
        o.insert(QStringLiteral("error"), error);
    return o;
}

std::optional<TrialRecord> TrialRecord::fromJson(const QJsonObject& o) {
    TrialRecord t;
    const QJsonValue id = o.value(QStringLiteral("trial"));
    if (!id.isDouble() || id.toDouble() < 0 || id.toDouble() > 100000 ||
        !o.value(QStringLiteral("params")).isObject())
        return std::nullopt;
    t.id = id.toInt();
    t.params = o.value(QStringLiteral("params")).toObject();
    t.rung = std::clamp(o.value(QStringLiteral("rung")).toInt(), 0, 1000);
    for (const QJsonValue& v : o.value(QStringLiteral("metrics")).toArray())
        t.metrics << v.toDouble();
    const QString status = o.value(QStringLiteral("status")).toString();
    const auto it = std::find_if(std::begin(kStatusNames), std::end(kStatusNames),
                                 [&](const auto& p) { return status == QLatin1String(p.second); });
    if (it == std::end(kStatusNames))
        return std::nullopt;
    t.status = it->first;
    t.device = o.value(QStringLiteral("device")).toString();
    t.error = o.value(QStringLiteral("error")).toString();
    t.seconds = o.value(QStringLiteral("seconds")).toDouble();
    t.samplesPerS = o.value(QStringLiteral("samples_per_s")).toDouble();
    t.steps = o.value(QStringLiteral("steps")).toInteger();
    t.requeues = o.value(QStringLiteral("requeues")).toInt();
    return t;
}

TrialScheduler::TrialScheduler(const SweepConfig& config)
    : m_config(config) {}

bool TrialScheduler::better(double a, double b) const {
    return m_config.maximize ? a > b : a < b;
}

bool TrialScheduler::promotable(const QList<TrialRecord>& trials, const TrialRecord& t,
                                int rung) const {
    if (!t.finishedRung(rung) || rung + 1 >= m_config.rungs.size())
        return false;
    // The best 1/reduction of every result at this rung so far, the trial's own included:
    // with 5 results and a reduction of 3, the best one.
    QList<double> results;
    for (const TrialRecord& o : trials)
        if (o.finishedRung(rung))
            results << o.metrics[rung];
    std::sort(results.begin(), results.end(), [this](double a, double b) { return better(a, b); });
    const qsizetype top = results.size() / m_config.reduction;
    if (top == 0)
        return false;
    const double mine = t.metrics[rung];
    return !better(results[top - 1], mine);
}

std::optional<TrialJob> TrialScheduler::promotion(QList<TrialRecord>& trials) const {
    // From the highest rung down, the best trial waiting there that the rule lets through.
    for (int r = int(m_config.rungs.size()) - 2; r >= 0; --r) {
        TrialRecord* pick = nullptr;
        for (TrialRecord& t : trials)
            if (t.status == TrialRecord::Status::Waiting && t.rung == r &&
                promotable(trials, t, r) && (!pick || better(t.metrics[r], pick->metrics[r])))
                pick = &t;
        if (pick) {
            pick->rung = r + 1;
            pick->status = TrialRecord::Status::Running;
            return TrialJob{pick->id, pick->rung};
        }
    }
    return std::nullopt;
}

std::optional<TrialJob> TrialScheduler::fresh(QList<TrialRecord>& trials) const {
    if (trials.size() >= m_config.trialCount())
        return std::nullopt;
    TrialRecord t;
    t.id = int(trials.size());
    t.params = m_config.trialParams(t.id);
    t.status = TrialRecord::Status::Running;
    trials << t;
    return TrialJob{t.id, 0};
}

std::optional<TrialJob> TrialScheduler::next(QList<TrialRecord>& trials, bool fast) const {
    // A requeued trial (its device left, or the sweep was stopped) goes first, to the rung it
    // was training to, from its checkpoint.
    for (TrialRecord& t : trials)
        if (t.status == TrialRecord::Status::Pending) {
            t.status = TrialRecord::Status::Running;
            return TrialJob{t.id, t.rung};
        }
    if (fast)
        if (auto j = promotion(trials))
            return j;
    if (auto j = fresh(trials))
        return j;
    return promotion(trials);
}

void TrialScheduler::report(QList<TrialRecord>& trials, int trial, double metric) const {
    TrialRecord& t = trials[trial];
    while (t.metrics.size() > t.rung)
        t.metrics.removeLast();
    while (t.metrics.size() < t.rung)
        t.metrics << std::nan("");
    t.metrics << metric;
    t.status = t.rung + 1 >= m_config.rungs.size() ? TrialRecord::Status::Done
                                                   : TrialRecord::Status::Waiting;
}

bool TrialScheduler::finish(QList<TrialRecord>& trials) const {
    for (const TrialRecord& t : trials)
        if (t.status == TrialRecord::Status::Running || t.status == TrialRecord::Status::Pending)
            return false;
    if (trials.size() < m_config.trialCount())
        return false;
    for (const TrialRecord& t : trials)
        if (t.status == TrialRecord::Status::Waiting && promotable(trials, t, t.rung))
            return false;
    for (TrialRecord& t : trials)
        if (t.status == TrialRecord::Status::Waiting)
            t.status = TrialRecord::Status::Stopped;
    return true;
}

int TrialScheduler::best(const QList<TrialRecord>& trials) const {
    int pick = -1;
    for (const TrialRecord& t : trials) {
        if (t.metrics.isEmpty() || std::isnan(t.metrics.last()))
            continue;
        if (pick < 0) {
            pick = t.id;
            continue;
        }
        const TrialRecord& b = trials[pick];
        if (t.metrics.size() > b.metrics.size() ||
            (t.metrics.size() == b.metrics.size() && better(t.metrics.last(), b.metrics.last())))
            pick = t.id;
    }
    return pick;
}

} // namespace tandem
