#include "sweep/sweepconfig.h"

#include "common/files.h"

#include <QHash>
#include <QJsonDocument>

#include <algorithm>
#include <cmath>
#include <random>

namespace tandem {

namespace {

Error bad(const QString& message) {
    return makeError(ErrorCode::InvalidArgument, message);
}

const RunField* numericField(const QString& key) {
    for (const RunField& f : runFields())
        if (key == QLatin1String(f.key))
            return &f;
    return nullptr;
}

// Fields that say where and how a trial runs, not what it learns: the sweep sets them.
bool placementKey(const QString& key) {
    static const QStringList keys = {QStringLiteral("workers"),
                                     QStringLiteral("worker_timeout"),
                                     QStringLiteral("join_timeout"),
                                     QStringLiteral("threads"),
                                     QStringLiteral("max_steps"),
                                     QStringLiteral("checkpoint_every"),
                                     QStringLiteral("eval_batch"),
                                     QStringLiteral("limit_test"),
                                     QStringLiteral("mode"),
                                     QStringLiteral("outer_lr"),
                                     QStringLiteral("outer_momentum"),
                                     QStringLiteral("outer_wire"),
                                     QStringLiteral("fragments"),
                                     QStringLiteral("staleness"),
                                     QStringLiteral("wire")};
    return keys.contains(key);
}

// Checks one value of a searched field as the run description would take it.
Status checkValue(const QString& key, const QJsonValue& v, const QString& where) {
    if (const RunField* f = numericField(key)) {
        if (!v.isDouble())
            return bad(QStringLiteral("%1: %2 takes numbers").arg(where, key));
        return f->check(v.toDouble(), where);
    }
    if (!v.isString())
        return bad(QStringLiteral("%1: %2 takes names").arg(where, key));
    RunConfig c;
    if (auto st = setRunChoice(c, key, v.toString()); !st)
        return bad(QStringLiteral("%1: %2").arg(where, st.error().message));
    return success();
}

Expected<SearchParam> readParam(const QString& key, const QJsonValue& value) {
    const QString where = QStringLiteral("sweep.space.%1").arg(key);
    if (!numericField(key) && !runChoiceKeys().contains(key))
        return bad(
            QStringLiteral("%1: \"%2\" is not a field of the run description").arg(where, key));
    if (placementKey(key))
        return bad(QStringLiteral("%1: \"%2\" says where a trial runs, which the sweep decides; "
                                  "set it in the base run if it must differ from the default")
                       .arg(where, key));
    const QJsonObject o = value.toObject();
    if (!value.isObject() || o.size() != 1)
        return bad(QStringLiteral("%1 must be one of {\"uniform\": [lo, hi]}, {\"log_uniform\": "
                                  "[lo, hi]}, {\"int\": [lo, hi]} or {\"choice\": [values…]}")
                       .arg(where));
    SearchParam p;
    p.key = key;
    const QString kind = o.constBegin().key();
    const QJsonArray a = o.constBegin().value().toArray();
    if (kind == QLatin1String("choice")) {
        p.kind = SearchParam::Kind::Choice;
        if (a.isEmpty())
            return bad(
                QStringLiteral("%1: the choice is empty; give at least one value").arg(where));
        for (const QJsonValue& v : a)
            if (auto st = checkValue(key, v, where); !st)
                return st.error();
        p.choices = a;
        return p;
    }
    static const QList<std::pair<QString, SearchParam::Kind>> ranges = {
        {QStringLiteral("uniform"), SearchParam::Kind::Uniform},
        {QStringLiteral("log_uniform"), SearchParam::Kind::LogUniform},
        {QStringLiteral("int"), SearchParam::Kind::Int}};
    const auto it =
        std::find_if(ranges.begin(), ranges.end(), [&](const auto& r) { return r.first == kind; });
    if (it == ranges.end())
        return bad(QStringLiteral("%1: unknown kind \"%2\" (uniform, log_uniform, int or choice)")
                       .arg(where, kind));
    p.kind = it->second;
    if (!runChoiceKeys().contains(key) && a.size() == 2 && a[0].isDouble() && a[1].isDouble()) {
        p.lo = a[0].toDouble();
        p.hi = a[1].toDouble();
    } else {
        return bad(QStringLiteral("%1: %2 takes [lo, hi], two numbers").arg(where, kind));
    }
    if (!(p.lo <= p.hi))
        return bad(
            QStringLiteral("%1: the range [%2, %3] is empty").arg(where).arg(p.lo).arg(p.hi));
    if (p.kind == SearchParam::Kind::LogUniform && !(p.lo > 0))
        return bad(QStringLiteral("%1: a log-uniform range must start above 0 (got %2)")
                       .arg(where)
                       .arg(p.lo));
    if (p.kind == SearchParam::Kind::Int && (p.lo != std::floor(p.lo) || p.hi != std::floor(p.hi)))
        return bad(QStringLiteral("%1: an int range takes whole numbers").arg(where));
    if (numericField(key)->integer() && p.kind != SearchParam::Kind::Int)
        return bad(QStringLiteral("%1: %2 is a whole number; use {\"int\": [lo, hi]} or a choice")
                       .arg(where, key));
    for (double end : {p.lo, p.hi})
        if (auto st = numericField(key)->check(end, where); !st)
            return st.error();
    return p;
}

Expected<QList<int>> readRungs(const QJsonValue& v, int epochs, int reduction) {
    QList<int> rungs;
    if (v.isUndefined()) {
        // From the base's epochs down by the reduction factor: 9 epochs, 3 → 1, 3, 9.
        for (int e = epochs; e >= 1; e /= reduction) {
            rungs.prepend(e);
            if (reduction < 2)
                break;
        }
        return rungs;
    }
    for (const QJsonValue& r : v.toArray()) {
        const double d = r.toDouble(-1);
        if (!r.isDouble() || d < 1 || d > 100000 || d != std::floor(d) ||
            (!rungs.isEmpty() && int(d) <= rungs.last()))
            return bad(QStringLiteral("sweep.scheduler.rungs must be whole numbers of epochs, "
                                      "each larger than the one before, such as [1, 3, 9]"));
        rungs << int(d);
    }
    if (rungs.isEmpty())
        return bad(QStringLiteral("sweep.scheduler.rungs is empty; give the epochs of each rung, "
                                  "such as [1, 3, 9]"));
    return rungs;
}

Status readScheduler(const QJsonValue& v, SweepConfig& c) {
    QJsonObject o;
    if (v.isString())
        o.insert(QStringLiteral("kind"), v);
    else if (v.isObject())
        o = v.toObject();
    else if (!v.isUndefined())
        return bad(QStringLiteral("sweep.scheduler must be a name or an object"));
    for (auto it = o.constBegin(); it != o.constEnd(); ++it)
        if (!QStringList{QStringLiteral("kind"), QStringLiteral("reduction"),
                         QStringLiteral("rungs"), QStringLiteral("grid_points"),
                         QStringLiteral("unit")}
                 .contains(it.key()))
            return bad(QStringLiteral("sweep.scheduler: unknown field \"%1\"").arg(it.key()));
    const QString kind = o.value(QStringLiteral("kind")).toString(QStringLiteral("random"));
    if (kind == QLatin1String("random"))
        c.scheduler = SchedulerKind::Random;
    else if (kind == QLatin1String("grid"))
        c.scheduler = SchedulerKind::Grid;
    else if (kind == QLatin1String("asha"))
        c.scheduler = SchedulerKind::Asha;
    else
        return bad(
            QStringLiteral("sweep.scheduler.kind: \"%1\" is not random, grid or asha").arg(kind));
    if (const QJsonValue unit = o.value(QStringLiteral("unit"));
        !unit.isUndefined() && unit != QJsonValue(QStringLiteral("epochs")))
        return bad(QStringLiteral("sweep.scheduler.unit: rungs are counted in epochs; use "
                                  "limit_train in the base run for shorter epochs"));
    const double red = o.value(QStringLiteral("reduction")).toDouble(3);
    if (red < 2 || red > 100 || red != std::floor(red))
        return bad(
            QStringLiteral("sweep.scheduler.reduction must be a whole number from 2 to 100"));
    c.reduction = int(red);
    const double points = o.value(QStringLiteral("grid_points")).toDouble(3);
    if (points < 1 || points > 100 || points != std::floor(points))
        return bad(QStringLiteral("sweep.scheduler.grid_points must be a whole number from 1 to "
                                  "100"));
    c.gridPoints = int(points);
    if (c.scheduler != SchedulerKind::Asha) {
        if (o.contains(QStringLiteral("rungs")))
            return bad(QStringLiteral("sweep.scheduler.rungs belong to asha; %1 trains each "
                                      "trial for the base's epochs")
                           .arg(kind));
        c.rungs = {c.baseRun.epochs};
        return success();
    }
    auto rungs = readRungs(o.value(QStringLiteral("rungs")), c.baseRun.epochs, c.reduction);
    if (!rungs)
        return rungs.error();
    c.rungs = *rungs;
    return success();
}

// Uniform doubles in [0, 1) from a 64-bit generator whose sequence the C++ standard fixes, so
// that a seed draws the same trials on every platform.
double unit(std::mt19937_64& g) {
    return double(g() >> 11) * (1.0 / 9007199254740992.0);
}

} // namespace

QString nameOf(SchedulerKind kind) {
    switch (kind) {
    case SchedulerKind::Random:
        return QStringLiteral("random");
    case SchedulerKind::Grid:
        return QStringLiteral("grid");
    case SchedulerKind::Asha:
        return QStringLiteral("asha");
    }
    return {};
}

QJsonValue SearchParam::at(double u) const {
    switch (kind) {
    case Kind::Uniform:
        return lo + u * (hi - lo);
    case Kind::LogUniform:
        return std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo)));
    case Kind::Int:
        return std::min(hi, lo + std::floor(u * (hi - lo + 1)));
    case Kind::Choice:
        return choices.at(
            std::min<qsizetype>(choices.size() - 1, qsizetype(u * double(choices.size()))));
    }
    return {};
}

QJsonArray SearchParam::axis(int points) const {
    if (kind == Kind::Choice)
        return choices;
    QJsonArray out;
    for (int i = 0; i < points; ++i) {
        const double f = points == 1 ? 0.5 : double(i) / double(points - 1);
        double v = kind == Kind::LogUniform
                       ? std::exp(std::log(lo) + f * (std::log(hi) - std::log(lo)))
                       : lo + f * (hi - lo);
        if (kind == Kind::Int)
            v = std::round(v);
        if (!out.contains(QJsonValue(v)))
            out.append(v);
    }
    return out;
}

QJsonObject SearchParam::toJson() const {
    static const char* names[] = {"uniform", "log_uniform", "int", "choice"};
    const QJsonValue v = kind == Kind::Choice ? QJsonValue(choices) : QJsonArray{lo, hi};
    return QJsonObject{{QLatin1String(names[int(kind)]), v}};
}

Expected<SweepConfig> SweepConfig::fromJson(const QJsonObject& o) {
    SweepConfig c;
    if (!o.value(QStringLiteral("sweep")).isObject())
        return bad(QStringLiteral("no \"sweep\" object: a sweep file is a run description with "
                                  "a \"sweep\" object that names the space to search"));
    const QJsonObject s = o.value(QStringLiteral("sweep")).toObject();
    c.base = o;
    c.base.remove(QStringLiteral("sweep"));
    auto run = RunConfig::fromJson(c.base);
    if (!run)
        return run.error();
    c.baseRun = *run;
    static const QStringList known = {QStringLiteral("space"),     QStringLiteral("trials"),
                                      QStringLiteral("metric"),    QStringLiteral("direction"),
                                      QStringLiteral("scheduler"), QStringLiteral("seed")};
    for (auto it = s.constBegin(); it != s.constEnd(); ++it)
        if (!known.contains(it.key()))
            return bad(QStringLiteral("sweep: unknown field \"%1\" (known: %2)")
                           .arg(it.key(), known.join(QStringLiteral(", "))));
    const QJsonObject space = s.value(QStringLiteral("space")).toObject();
    if (space.isEmpty())
        return bad(QStringLiteral("sweep.space is empty; name at least one field to search, "
                                  "such as \"lr\": {\"log_uniform\": [0.0001, 0.01]}"));
    for (auto it = space.constBegin(); it != space.constEnd(); ++it) {
        auto p = readParam(it.key(), it.value());
        if (!p)
            return p.error();
        c.space << *p;
    }
    if (auto st = readScheduler(s.value(QStringLiteral("scheduler")), c); !st)
        return st.error();
    const QJsonValue trials = s.value(QStringLiteral("trials"));
    if (trials.isUndefined() && c.scheduler == SchedulerKind::Grid) {
        c.trials = 100000;
    } else {
        const double t = trials.toDouble(0);
        if (!trials.isDouble() || t < 1 || t > 100000 || t != std::floor(t))
            return bad(QStringLiteral("sweep.trials must be a whole number from 1 to 100000 "
                                      "(got %1)")
                           .arg(trials.isDouble()
                                    ? QString::number(t)
                                    : QString::fromUtf8(QJsonDocument(QJsonArray{trials})
                                                            .toJson(QJsonDocument::Compact))));
        c.trials = int(t);
    }
    c.metric = s.value(QStringLiteral("metric")).toString(QStringLiteral("test_accuracy"));
    // Each metric with the direction that makes it better.
    static const QHash<QString, bool> kMetrics = {{QStringLiteral("test_accuracy"), true},
                                                  {QStringLiteral("test_loss"), false},
                                                  {QStringLiteral("test_perplexity"), false},
                                                  {QStringLiteral("test_r2"), true},
                                                  {QStringLiteral("test_mae"), false}};
    if (!kMetrics.contains(c.metric))
        return bad(QStringLiteral("sweep.metric: \"%1\" is not test_accuracy, test_loss, "
                                  "test_perplexity, test_r2 or test_mae")
                       .arg(c.metric));
    c.maximize = kMetrics.value(c.metric);
    const QJsonValue dir = s.value(QStringLiteral("direction"));
    if (dir == QJsonValue(QStringLiteral("max")))
        c.maximize = true;
    else if (dir == QJsonValue(QStringLiteral("min")))
        c.maximize = false;
    else if (!dir.isUndefined())
        return bad(QStringLiteral("sweep.direction must be \"max\" or \"min\""));
    const QJsonValue seed = s.value(QStringLiteral("seed"));
    if (seed.isDouble() && seed.toDouble() >= 0 && seed.toDouble() <= 9007199254740992.0 &&
        seed.toDouble() == std::floor(seed.toDouble()))
        c.seed = uint64_t(seed.toDouble());
    else if (!seed.isUndefined())
        return bad(QStringLiteral("sweep.seed must be a whole number from 0 to 2^53"));
    return c;
}

Expected<SweepConfig> SweepConfig::readFile(const QString& path) {
    auto o = readJsonObjectFile(path, QStringLiteral("sweep description"));
    if (!o)
        return o.error();
    auto c = fromJson(*o);
    if (!c)
        return bad(QStringLiteral("%1: %2").arg(path, c.error().message));
    return c;
}

QJsonObject SweepConfig::toJson() const {
    QJsonObject space;
    for (const SearchParam& p : this->space)
        space.insert(p.key, p.toJson());
    QJsonObject sched{{QStringLiteral("kind"), nameOf(scheduler)}};
    if (scheduler == SchedulerKind::Asha) {
        sched.insert(QStringLiteral("reduction"), reduction);
        QJsonArray r;
        for (int e : rungs)
            r.append(e);
        sched.insert(QStringLiteral("rungs"), r);
    }
    if (scheduler == SchedulerKind::Grid)
        sched.insert(QStringLiteral("grid_points"), gridPoints);
    QJsonObject o = base;
    o.insert(QStringLiteral("sweep"),
             QJsonObject{{QStringLiteral("space"), space},
                         {QStringLiteral("trials"), trials},
                         {QStringLiteral("metric"), metric},
                         {QStringLiteral("direction"),
                          maximize ? QStringLiteral("max") : QStringLiteral("min")},
                         {QStringLiteral("scheduler"), sched},
                         {QStringLiteral("seed"), double(seed)}});
    return o;
}

int SweepConfig::trialCount() const {
    if (scheduler != SchedulerKind::Grid)
        return trials;
    qint64 n = 1;
    for (const SearchParam& p : space)
        n = std::min<qint64>(n * p.axis(gridPoints).size(), 100000);
    return int(std::min<qint64>(n, trials));
}

QJsonObject SweepConfig::trialParams(int index) const {
    QJsonObject out;
    if (scheduler == SchedulerKind::Grid) {
        // Mixed radix over the axes in the space's (alphabetical) order, the last fastest.
        qint64 rest = index;
        for (auto it = space.crbegin(); it != space.crend(); ++it) {
            const QJsonArray axis = it->axis(gridPoints);
            out.insert(it->key, axis.at(rest % axis.size()));
            rest /= axis.size();
        }
        return out;
    }
    // Each trial its own stream, from the seed and its index: trial 7 is the same whether it
    // is drawn first or after a resume.
    std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), uint32_t(index), 0x5eedu};
    std::mt19937_64 g(seq);
    for (const SearchParam& p : space)
        out.insert(p.key, p.at(unit(g)));
    return out;
}

Expected<RunConfig> SweepConfig::trialRun(const QJsonObject& params) const {
    QJsonObject o = base;
    for (auto it = params.constBegin(); it != params.constEnd(); ++it)
        o.insert(it.key(), it.value());
    auto run = RunConfig::fromJson(o);
    if (!run)
        return makeError(
            run.error().code,
            QStringLiteral("trial %1: %2").arg(paramsText(params), run.error().message));
    return run;
}

QString SweepConfig::paramsText(const QJsonObject& params) {
    QStringList parts;
    for (auto it = params.constBegin(); it != params.constEnd(); ++it)
        parts << QStringLiteral("%1=%2").arg(
            it.key(), it.value().isDouble() ? QString::number(it.value().toDouble(), 'g', 4)
                                            : it.value().toString());
    return parts.join(QLatin1Char(' '));
}

} // namespace tandem
