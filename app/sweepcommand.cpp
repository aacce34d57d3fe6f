// `tandem sweep`: a hyperparameter sweep over this machine's devices and invited nodes.

#include "app/cli.h"
#include "app/nodecommands.h"
#include "sweep/sweeprunner.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QTimer>

#include <atomic>
#include <csignal>

namespace tandem::cli {

namespace {

std::atomic<int> g_signal{0};

extern "C" void onStopSignal(int sig) {
    g_signal.store(sig);
}

} // namespace

int cmdSweep(const QStringList& args) {
    Parser p;
    p.addOption({QStringLiteral("config"),
                 QStringLiteral("The sweep description: a run description with a \"sweep\" "
                                "object (the space, trials, metric and scheduler)."),
                 QStringLiteral("FILE")});
    p.addOption({QStringLiteral("out"), QStringLiteral("The sweep's folder [sweeps/DATE-MODEL]."),
                 QStringLiteral("DIR")});
    p.addOption({QStringLiteral("resume"),
                 QStringLiteral("Continue the sweep in this folder: finished trials are kept, "
                                "interrupted ones resume from their checkpoints."),
                 QStringLiteral("DIR")});
    p.addOption({QStringLiteral("invite"),
                 QStringLiteral("A paired node running `tandem serve` that runs trials too "
                                "(HOST[:PORT]); repeat for more."),
                 QStringLiteral("HOST")});
    p.addOption({QStringLiteral("devices"),
                 QStringLiteral("This machine's devices for trials: none, or a list such as "
                                "cuda:0,cuda:1 [every GPU, or the CPU]."),
                 QStringLiteral("LIST")});
    p.addOption({QStringLiteral("join-timeout"),
                 QStringLiteral("Seconds an invited node has to join a trial before the trial "
                                "goes elsewhere [60]."),
                 QStringLiteral("S")});
    p.addOption({QStringLiteral("retry-after"),
                 QStringLiteral("Seconds before a node that could not run a trial (it left, or "
                                "declined) is asked again [60]."),
                 QStringLiteral("S")});
    int exit = kOk;
    if (!parse(p, QStringLiteral("sweep"), args,
               QStringLiteral("Runs a hyperparameter sweep: one trial per device at a time, on "
                              "this machine and on invited nodes. A line per finished trial goes "
                              "to stderr; the last line on stdout is a JSON summary."),
               &exit))
        return exit;
    SweepOptions o;
    SweepConfig config;
    QList<TrialRecord> resumed;
    if (p.isSet(QStringLiteral("resume"))) {
        if (p.isSet(QStringLiteral("config")))
            return usage(QStringLiteral("--resume continues a sweep as it was described; leave "
                                        "out --config"));
        o.outDir = p.value(QStringLiteral("resume"));
        auto loaded = SweepRunner::load(o.outDir);
        if (!loaded)
            return fail(loaded.error());
        config = loaded->first;
        resumed = loaded->second;
    } else if (p.isSet(QStringLiteral("config"))) {
        auto c = SweepConfig::readFile(p.value(QStringLiteral("config")));
        if (!c)
            return fail(c.error());
        config = *c;
        o.outDir = p.value(QStringLiteral("out"));
        if (o.outDir.isEmpty())
            o.outDir = QDir(QStringLiteral("sweeps"))
                           .filePath(QDateTime::currentDateTime().toString(
                                         QStringLiteral("yyyyMMdd-HHmmss-")) +
                                     QFileInfo(config.baseRun.model).completeBaseName());
        if (QFileInfo::exists(QDir(o.outDir).filePath(QStringLiteral("sweep.json"))))
            return usage(QStringLiteral("%1 already holds a sweep; continue it with --resume %1, "
                                        "or give another --out")
                             .arg(o.outDir));
    } else {
        return usage(QStringLiteral("sweep needs --config FILE, or --resume DIR"));
    }
    o.outDir = QDir(o.outDir).absolutePath();
    o.home = p.value(QStringLiteral("home"));
    o.invites = p.values(QStringLiteral("invite"));
    o.devices = p.value(QStringLiteral("devices"));
    o.program = QCoreApplication::applicationFilePath();
    OptionReader r{p, {}};
    r.read("join-timeout", o.joinTimeoutS, 1, 86400);
    r.read("retry-after", o.retryS, 1, 86400);
    if (!r.error.isEmpty())
        return usage(r.error);

    SweepRunner runner(config, o);
    QObject::connect(&runner, &SweepRunner::message, [](const QString& m) { say(m); });
    QJsonObject summary;
    QObject::connect(&runner, &SweepRunner::finished, [&](const QJsonObject& s) {
        summary = s;
        QCoreApplication::exit(0);
    });
    if (auto st = runner.start(resumed); !st)
        return fail(st.error());
    // Ctrl-C or a polite kill: every trial checkpoints, and --resume continues from there.
    std::signal(SIGINT, onStopSignal);
    std::signal(SIGTERM, onStopSignal);
    QTimer watch;
    QObject::connect(&watch, &QTimer::timeout, [&] {
        if (g_signal.exchange(0) != 0) {
            say(QStringLiteral("stopping: each running trial saves a checkpoint; continue with "
                               "tandem sweep --resume %1")
                    .arg(o.outDir));
            runner.stop();
        }
    });
    watch.start(200);
    QCoreApplication::exec();
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    const bool complete = summary.value(QStringLiteral("complete")).toBool();
    if (const QJsonObject best = summary.value(QStringLiteral("best")).toObject(); !best.isEmpty())
        say(QStringLiteral("%1: best trial %2 (%3), %4 %5; its run folder is %6")
                .arg(complete ? QStringLiteral("finished") : QStringLiteral("stopped"))
                .arg(best.value(QStringLiteral("trial")).toInt())
                .arg(SweepConfig::paramsText(best.value(QStringLiteral("params")).toObject()),
                     config.metric)
                .arg(best.value(config.metric).toDouble(), 0, 'f', 4)
                .arg(best.value(QStringLiteral("run")).toString()));
    printOut(QString::fromUtf8(QJsonDocument(summary).toJson(QJsonDocument::Compact)));
    return kOk;
}

} // namespace tandem::cli
