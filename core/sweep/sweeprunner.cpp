#include "sweep/sweeprunner.h"

#include "common/files.h"
#include "engine/devices.h"
#include "engine/runhistory.h"
#include "engine/training.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLockFile>
#include <QProcess>
#include <QThread>
#include <QTimer>

#include <cmath>

#ifdef Q_OS_LINUX
#include <csignal>
#include <sys/prctl.h>
#endif

namespace tandem {

namespace {

constexpr int kMaxRequeues = 3;

QString listenFor(const QString& host) {
    const bool loopback = host.startsWith(QLatin1String("127.")) ||
                          host.startsWith(QLatin1String("localhost")) ||
                          host.startsWith(QLatin1String("[::1]"));
    return loopback ? QStringLiteral("127.0.0.1:0") : QStringLiteral("[::]:0");
}

// This machine's devices for trials: every GPU, or the CPU when there is none.
Expected<QList<SweepDevice>> localDevices(const QString& spec) {
    QList<SweepDevice> out;
    if (spec == QLatin1String("none"))
        return out;
    const QList<DeviceInfo> all = detectDevices();
    QList<DeviceInfo> chosen;
    if (spec.isEmpty()) {
        for (DeviceKind kind : {DeviceKind::Cuda, DeviceKind::Mps}) {
            for (const DeviceInfo& d : all)
                if (d.kind == kind)
                    chosen << d;
            if (!chosen.isEmpty())
                break;
        }
        if (chosen.isEmpty())
            for (const DeviceInfo& d : all)
                if (d.kind == DeviceKind::Cpu)
                    chosen << d;
    } else {
        auto c = chooseDevices(all, spec);
        if (!c)
            return c.error();
        chosen = *c;
    }
    for (const DeviceInfo& d : chosen)
        out << SweepDevice{d.torchDevice(), d.torchDevice(), QString()};
    return out;
}

} // namespace

struct SweepRunner::Slot {
    SweepDevice dev;
    QProcess* proc = nullptr;
    QTimer* joinTimer = nullptr;
    int trial = -1;
    bool joined = false;
    QString requeueWhy; // set when the sweep stopped the trial to run it elsewhere
    qint64 startMs = 0;
    qint64 downUntilMs = 0;
    QList<std::pair<qint64, qint64>> busy; // [start, end) of each job, sweep milliseconds
    QList<double> speeds;                  // samples/s of its finished jobs
    QByteArray out;        // stdout: the typed events (--events -), then the summary
    qsizetype outRead = 0; // how much of `out` has been read for events
    QByteArray errLine;    // the incomplete last line of stderr
    QString lastError;
    bool deviceLeft = false; // its device left mid-trial, or every worker did
};

SweepRunner::SweepRunner(SweepConfig config, SweepOptions options, QObject* parent)
    : QObject(parent)
    , m_config(std::move(config))
    , m_options(std::move(options))
    , m_scheduler(m_config) {}

SweepRunner::~SweepRunner() {
    // Every trial is asked to stop (each saves a checkpoint) before any is waited for.
    for (auto& s : m_slots)
        if (s->proc) {
            s->proc->disconnect(this);
            s->proc->terminate();
        }
    for (auto& s : m_slots)
        if (s->proc)
            s->proc->waitForFinished(60000);
}

QString SweepRunner::trialDir(int trial) const {
    return QDir(m_options.outDir)
        .filePath(QStringLiteral("trials/%1").arg(trial, 3, 10, QLatin1Char('0')));
}

QString SweepRunner::checkpointOf(int trial) const {
    return QDir(trialDir(trial)).filePath(RunFiles::checkpoint());
}

Status SweepRunner::start(const QList<TrialRecord>& resumed) {
    if (!QDir().mkpath(QDir(m_options.outDir).filePath(QStringLiteral("trials"))))
        return makeError(ErrorCode::Io,
                         QStringLiteral("cannot create the sweep folder %1").arg(m_options.outDir));
    m_lock = std::make_unique<QLockFile>(QDir(m_options.outDir).filePath(QStringLiteral(".lock")));
    m_lock->setStaleLockTime(0);
    if (!m_lock->tryLock(0))
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("another sweep is running in %1; wait for it, or stop it "
                                        "first")
                             .arg(m_options.outDir));
    waitForOldTrials(resumed);
    auto local = localDevices(m_options.devices);
    if (!local)
        return local.error();
    m_devices = *local;
    for (qsizetype i = 0; i < m_options.invites.size(); ++i) {
        const QString& host = m_options.invites[i];
        const QString name = m_options.inviteNames.value(i);
        m_devices << SweepDevice{name.isEmpty() ? host : name, QString(), host};
    }
    if (m_devices.isEmpty())
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("no device to run trials on: give --invite HOST, or "
                                        "leave this machine's devices in"));
    if (auto st = writeFileAtomically(QDir(m_options.outDir).filePath(QStringLiteral("sweep.json")),
                                      QJsonDocument(m_config.toJson()).toJson());
        !st)
        return st;
    m_trials = resumed;
    for (const SweepDevice& d : m_devices) {
        auto slot = std::make_unique<Slot>();
        slot->dev = d;
        m_slots.push_back(std::move(slot));
    }
    m_retry.setSingleShot(true);
    connect(&m_retry, &QTimer::timeout, this, &SweepRunner::fill);
    m_clock.start();
    save();
    Q_EMIT message(QStringLiteral("sweep of %1 trial(s) (%2) on %3 device(s): %4")
                       .arg(m_config.trialCount())
                       .arg(nameOf(m_config.scheduler))
                       .arg(m_devices.size())
                       .arg([this] {
                           QStringList n;
                           for (const SweepDevice& d : m_devices)
                               n << d.name;
                           return n.join(QStringLiteral(", "));
                       }()));
    QTimer::singleShot(0, this, &SweepRunner::fill);
    return success();
}

bool SweepRunner::fast(const Slot& slot) const {
    // Unmeasured devices count as fast until their first job says otherwise.
    if (slot.speeds.isEmpty())
        return true;
    auto mean = [](const QList<double>& v) {
        double s = 0;
        for (double x : v)
            s += x;
        return s / double(v.size());
    };
    double top = 0;
    for (const auto& s : m_slots)
        if (!s->speeds.isEmpty())
            top = std::max(top, mean(s->speeds));
    return mean(slot.speeds) >= 0.8 * top;
}

void SweepRunner::fill() {
    if (m_stopping || m_ended)
        return;
    const qint64 now = m_clock.elapsed();
    qint64 nextRetry = -1;
    // The fast devices ask first, so that a promotion lands on one of them.
    std::vector<Slot*> order;
    for (auto& s : m_slots)
        order.push_back(s.get());
    std::stable_sort(order.begin(), order.end(),
                     [this](Slot* a, Slot* b) { return fast(*a) && !fast(*b); });
    for (Slot* s : order) {
        if (s->proc)
            continue;
        if (s->downUntilMs > now) {
            nextRetry = nextRetry < 0 ? s->downUntilMs : std::min(nextRetry, s->downUntilMs);
            continue;
        }
        auto job = m_scheduler.next(m_trials, fast(*s));
        if (!job) {
            if (m_tailStartMs < 0)
                m_tailStartMs = now;
            continue;
        }
        launch(*s, *job);
    }
    // A device resting after a failure is asked again when it is due.
    if (nextRetry >= 0)
        m_retry.start(int(std::max<qint64>(100, nextRetry - now)));
    for (const auto& s : m_slots)
        if (s->proc)
            return;
    if (m_scheduler.finish(m_trials)) {
        m_retry.stop();
        end();
    }
}

Expected<QStringList> SweepRunner::trainArguments(const Slot& slot, const TrialJob& job) {
    const QString dir = trialDir(job.trial);
    if (!QDir().mkpath(dir))
        return makeError(ErrorCode::Io, QStringLiteral("cannot create %1").arg(dir));
    const QString epochs = QString::number(m_config.rungs.at(job.rung));
    const QString checkpoint = checkpointOf(job.trial);
    QStringList args{QStringLiteral("train")};
    if (QFileInfo::exists(checkpoint)) {
        args << QStringLiteral("--resume") << checkpoint << QStringLiteral("--epochs") << epochs;
    } else {
        auto run = m_config.trialRun(m_trials[job.trial].params);
        if (!run)
            return run.error();
        // One device a trial, in local-SGD whose outer step takes the worker's weights as
        // they are: the trial trains as one machine would, and its weights and checkpoint
        // come back here once a round wherever it ran.
        QJsonObject o = run->toJson();
        o.insert(QStringLiteral("mode"), QStringLiteral("local-sgd"));
        o.insert(QStringLiteral("outer_lr"), 1.0);
        o.insert(QStringLiteral("outer_momentum"), 0.0);
        o.insert(QStringLiteral("outer_wire"), QStringLiteral("fp32"));
        o.insert(QStringLiteral("fragments"), 1);
        o.insert(QStringLiteral("epochs"), m_config.rungs.at(job.rung));
        o.insert(QStringLiteral("out"), dir);
        for (const char* k : {"listen", "device"})
            o.insert(QLatin1String(k), QString());
        o.insert(QStringLiteral("workers"), 0);
        o.insert(QStringLiteral("local_worker"), true);
        o.insert(QStringLiteral("invites"), QJsonArray());
        const QString path = QDir(dir).filePath(QStringLiteral("run.json"));
        if (auto st = writeFileAtomically(path, QJsonDocument(o).toJson()); !st)
            return st.error();
        args << QStringLiteral("--config") << path << QStringLiteral("--out") << dir;
    }
    // What happens in the trial comes back typed, on stdout before the summary.
    // The sweep shows its trials; History does not list each.
    args << QStringLiteral("--events") << QStringLiteral("-") << QStringLiteral("--no-history");
    if (!m_options.home.isEmpty())
        args << QStringLiteral("--home") << m_options.home;
    if (slot.dev.host.isEmpty())
        args << QStringLiteral("--device") << slot.dev.device;
    else
        args << QStringLiteral("--no-local-worker") << QStringLiteral("--workers")
             << QStringLiteral("1") << QStringLiteral("--invite") << slot.dev.host
             << QStringLiteral("--listen") << listenFor(slot.dev.host);
    return args;
}

void SweepRunner::launch(Slot& slot, const TrialJob& job) {
    TrialRecord& t = m_trials[job.trial];
    t.device = slot.dev.name;
    auto args = trainArguments(slot, job);
    if (!args) {
        t.status = TrialRecord::Status::Failed;
        t.error = args.error().message;
        Q_EMIT message(QStringLiteral("trial %1 failed: %2").arg(t.id).arg(t.error));
        Q_EMIT trialChanged(t);
        save();
        QTimer::singleShot(0, this, &SweepRunner::fill);
        return;
    }
    slot.trial = job.trial;
    slot.joined = slot.dev.host.isEmpty();
    slot.requeueWhy.clear();
    slot.out.clear();
    slot.outRead = 0;
    slot.errLine.clear();
    slot.lastError.clear();
    slot.deviceLeft = false;
    slot.startMs = m_clock.elapsed();
    slot.proc = new QProcess(this);
    slot.proc->setProgram(m_options.program);
    slot.proc->setArguments(*args);
#ifdef Q_OS_LINUX
    // A sweep killed outright takes its trials along; each checkpoints on SIGTERM.
    slot.proc->setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGTERM); });
#endif
    Slot* s = &slot;
    connect(slot.proc, &QProcess::readyReadStandardOutput, this, [this, s] {
        s->out += s->proc->readAllStandardOutput();
        onEvents(*s);
    });
    connect(slot.proc, &QProcess::readyReadStandardError, this, [this, s] { onOutput(*s); });
    connect(slot.proc, &QProcess::finished, this, [this, s](int code, QProcess::ExitStatus st) {
        onExited(*s, code, st == QProcess::CrashExit);
    });
    connect(slot.proc, &QProcess::errorOccurred, this, [this, s](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) {
            s->lastError = QStringLiteral("cannot start %1: %2")
                               .arg(m_options.program, s->proc->errorString());
            onExited(*s, -1, false);
        }
    });
    slot.proc->start();
    if (QFile pid(QDir(trialDir(job.trial)).filePath(QStringLiteral("trial.pid")));
        slot.proc->processId() > 0 && pid.open(QIODevice::WriteOnly | QIODevice::Truncate))
        pid.write(QByteArray::number(slot.proc->processId()));
    if (!slot.dev.host.isEmpty()) {
        slot.joinTimer = new QTimer(slot.proc);
        slot.joinTimer->setSingleShot(true);
        connect(slot.joinTimer, &QTimer::timeout, this, [this, s] {
            if (!s->joined)
                requeue(*s, QStringLiteral("%1 did not join within %2 s")
                                .arg(s->dev.name)
                                .arg(m_options.joinTimeoutS));
        });
        slot.joinTimer->start(m_options.joinTimeoutS * 1000);
    }
    Q_EMIT trialChanged(t);
    save();
}

void SweepRunner::onOutput(Slot& slot) {
    // stderr is the trial's log for people: kept in trial.log, never read for meaning.
    slot.errLine += slot.proc->readAllStandardError();
    const qsizetype cut = slot.errLine.lastIndexOf('\n');
    if (cut < 0)
        return;
    QFile log(QDir(trialDir(slot.trial)).filePath(QStringLiteral("trial.log")));
    if (log.open(QIODevice::Append))
        log.write(slot.errLine.left(cut + 1));
    slot.errLine.remove(0, cut + 1);
}

void SweepRunner::onEvents(Slot& slot) {
    for (qsizetype end = slot.out.indexOf('\n', slot.outRead); end >= 0;
         end = slot.out.indexOf('\n', slot.outRead)) {
        const QJsonObject e =
            QJsonDocument::fromJson(slot.out.mid(slot.outRead, end - slot.outRead)).object();
        slot.outRead = end + 1;
        const QString kind = e.value(QStringLiteral("event")).toString();
        const auto typed = RunEvent::kindFromName(kind);
        if (typed == RunEvent::Kind::WorkerJoined)
            slot.joined = true;
        else if (typed == RunEvent::Kind::WorkersGone)
            slot.deviceLeft = true;
        else if (kind == QLatin1String("failed"))
            slot.lastError = e.value(QStringLiteral("message")).toString();
        if (slot.dev.host.isEmpty() || !slot.requeueWhy.isEmpty())
            continue;
        if (typed == RunEvent::Kind::WorkersGone)
            requeue(slot, QStringLiteral("%1 left mid-trial").arg(slot.dev.name));
        else if (typed == RunEvent::Kind::InviteDeclined)
            requeue(slot, QStringLiteral("%1 declined: %2")
                              .arg(slot.dev.name, e.value(QStringLiteral("reason")).toString()));
    }
}

void SweepRunner::requeue(Slot& slot, const QString& why) {
    if (!slot.proc || !slot.requeueWhy.isEmpty())
        return;
    slot.requeueWhy = why;
    slot.proc->terminate(); // the trial checkpoints, then exits
    QTimer::singleShot(120000, slot.proc, [p = slot.proc] { p->kill(); });
}

void SweepRunner::onExited(Slot& slot, int exitCode, bool crashed) {
    if (!slot.proc || slot.trial < 0)
        return;
    slot.out += slot.proc->readAllStandardOutput();
    onEvents(slot);
    // What stderr still holds, and a last line without its newline.
    slot.errLine += slot.proc->readAllStandardError();
    if (!slot.errLine.isEmpty()) {
        if (!slot.errLine.endsWith('\n'))
            slot.errLine += '\n';
        onOutput(slot);
    }
    TrialRecord& t = m_trials[slot.trial];
    const qint64 now = m_clock.elapsed();
    slot.busy.append({slot.startMs, now});
    // The summary: the last line that is not an event.
    QJsonObject summary;
    const QList<QByteArray> lines = slot.out.trimmed().split('\n');
    for (auto it = lines.crbegin(); it != lines.crend() && summary.isEmpty(); ++it) {
        const QJsonObject o = QJsonDocument::fromJson(*it).object();
        if (!o.contains(QStringLiteral("event")))
            summary = o;
    }
    // null when the trial was never evaluated or its task does not define the metric; R² may
    // be below 0.
    const bool measured = summary.value(m_config.metric).isDouble();
    const double metric = summary.value(m_config.metric).toDouble();
    const bool remote = !slot.dev.host.isEmpty();
    const bool finished = exitCode == 0 && summary.value(QStringLiteral("finished")).toBool();
    QString why = slot.requeueWhy;
    if (why.isEmpty() && remote && exitCode != 0 && (crashed || !slot.joined || slot.deviceLeft))
        why = QStringLiteral("%1 left mid-trial").arg(slot.dev.name);
    // Stopped from outside (Ctrl+C reaches a terminal's whole process group, or someone
    // stopped the process): it saved a checkpoint and said so in its summary.
    if (why.isEmpty() && !m_stopping && exitCode == 0 && !summary.isEmpty() && !finished)
        why = QStringLiteral("its process was stopped");
    if (m_stopping && !finished) {
        t.status = TrialRecord::Status::Pending; // resumes from its checkpoint next time
    } else if (!why.isEmpty()) {
        t.requeues += 1;
        if (remote) // this machine's own devices do not rest
            slot.downUntilMs = now + qint64(m_options.retryS) * 1000;
        if (t.requeues > kMaxRequeues) {
            t.status = TrialRecord::Status::Failed;
            t.error = QStringLiteral("it could not run on its device %1 times; the last time: %2")
                          .arg(t.requeues)
                          .arg(why);
        } else {
            t.status = TrialRecord::Status::Pending;
            Q_EMIT message(
                QStringLiteral("trial %1: %2; it goes back to the queue and resumes from "
                               "its last checkpoint")
                    .arg(t.id)
                    .arg(why));
        }
    } else if (finished && measured) {
        t.seconds += summary.value(QStringLiteral("train_seconds")).toDouble();
        // A rung that had already ended before an interruption trains nothing when resumed,
        // and measures no speed.
        if (const double sps = summary.value(QStringLiteral("samples_per_s")).toDouble(); sps > 0) {
            t.samplesPerS = sps;
            slot.speeds << sps;
        }
        t.steps = summary.value(QStringLiteral("steps")).toInteger();
        m_scheduler.report(m_trials, t.id, metric);
        const int top = best();
        Q_EMIT message(QStringLiteral("trial %1 %2 on %3, %4 epoch(s): %5 %6; best so far: trial "
                                      "%7 (%8)")
                           .arg(t.id)
                           .arg(SweepConfig::paramsText(t.params), slot.dev.name)
                           .arg(m_config.rungs.at(t.rung))
                           .arg(m_config.metric)
                           .arg(metric, 0, 'f', 4)
                           .arg(top)
                           .arg(m_trials[top].metrics.last(), 0, 'f', 4));
    } else {
        t.status = TrialRecord::Status::Failed;
        t.error = !slot.lastError.isEmpty() ? slot.lastError
                  : crashed                 ? QStringLiteral("its process crashed")
                            : QStringLiteral("its process exited with code %1").arg(exitCode);
        Q_EMIT message(QStringLiteral("trial %1 %2 failed on %3: %4")
                           .arg(t.id)
                           .arg(SweepConfig::paramsText(t.params), slot.dev.name, t.error));
    }
    slot.proc->deleteLater();
    slot.proc = nullptr;
    slot.joinTimer = nullptr;
    slot.trial = -1;
    Q_EMIT trialChanged(t);
    save();
    if (m_stopping) {
        for (const auto& s : m_slots)
            if (s->proc)
                return;
        end();
        return;
    }
    fill();
}

void SweepRunner::stop() {
    if (m_ended || m_stopping)
        return;
    m_stopping = true;
    bool running = false;
    for (const auto& s : m_slots)
        if (s->proc) {
            running = true;
            s->proc->terminate();
        }
    if (!running)
        QTimer::singleShot(0, this, &SweepRunner::end);
}

void SweepRunner::save() {
    QByteArray lines;
    for (const TrialRecord& t : m_trials)
        lines += QJsonDocument(t.toJson()).toJson(QJsonDocument::Compact) + '\n';
    const QString path = QDir(m_options.outDir).filePath(QStringLiteral("sweep.jsonl"));
    if (auto st = writeFileAtomically(path, lines); !st)
        Q_EMIT message(QStringLiteral("could not record the trials: %1").arg(st.error().message));
}

void SweepRunner::end() {
    if (m_ended)
        return;
    m_ended = true;
    // The lock goes with the sweep's end, not with this object: the folder can be continued
    // from elsewhere at once.
    m_lock.reset();
    save();
    // Trials never promoted became "stopped early" as the sweep ended.
    for (const TrialRecord& t : m_trials)
        Q_EMIT trialChanged(t);
    Q_EMIT finished(summary());
}

QJsonObject SweepRunner::summary() const {
    const qint64 wall = std::max<qint64>(1, m_clock.elapsed());
    const qint64 tail = m_tailStartMs < 0 ? wall : std::max<qint64>(1, m_tailStartMs);
    QJsonArray devices;
    for (const auto& s : m_slots) {
        qint64 busy = 0, busyBeforeTail = 0;
        for (const auto& [a, b] : s->busy) {
            busy += b - a;
            busyBeforeTail += std::max<qint64>(0, std::min(b, tail) - a);
        }
        devices.append(QJsonObject{
            {QStringLiteral("name"), s->dev.name},
            {QStringLiteral("jobs"), int(s->busy.size())},
            {QStringLiteral("busy"), double(busy) / double(wall)},
            {QStringLiteral("busy_until_tail"), double(busyBeforeTail) / double(tail)}});
    }
    int stopped = 0, failed = 0, done = 0, left = 0;
    for (const TrialRecord& t : m_trials) {
        stopped += t.status == TrialRecord::Status::Stopped;
        failed += t.status == TrialRecord::Status::Failed;
        done += t.status == TrialRecord::Status::Done;
        left +=
            t.status == TrialRecord::Status::Pending || t.status == TrialRecord::Status::Running;
    }
    QJsonObject o{{QStringLiteral("out"), m_options.outDir},
                  {QStringLiteral("metric"), m_config.metric},
                  {QStringLiteral("direction"),
                   m_config.maximize ? QStringLiteral("max") : QStringLiteral("min")},
                  {QStringLiteral("scheduler"), nameOf(m_config.scheduler)},
                  {QStringLiteral("complete"), m_ended && !m_stopping},
                  {QStringLiteral("trials"), int(m_trials.size())},
                  {QStringLiteral("finished"), done},
                  {QStringLiteral("stopped_early"), stopped},
                  {QStringLiteral("failed"), failed},
                  {QStringLiteral("unfinished"), left},
                  {QStringLiteral("wall_s"), double(wall) / 1e3},
                  {QStringLiteral("tail_s"), double(wall - tail) / 1e3},
                  {QStringLiteral("devices"), devices}};
    if (const int b = best(); b >= 0) {
        const TrialRecord& t = m_trials[b];
        o.insert(QStringLiteral("best"),
                 QJsonObject{{QStringLiteral("trial"), t.id},
                             {QStringLiteral("params"), t.params},
                             {m_config.metric, t.metrics.last()},
                             {QStringLiteral("epochs"), m_config.rungs.at(t.metrics.size() - 1)},
                             {QStringLiteral("device"), t.device},
                             {QStringLiteral("run"), trialDir(b)},
                             {QStringLiteral("checkpoint"), checkpointOf(b)}});
    }
    return o;
}

} // namespace tandem
