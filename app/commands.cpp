#include "commands.h"

#include "devices.h"
#include "discovery.h"
#include "files.h"
#include "identity.h"
#include "nodecommands.h"
#include "progress.h"
#include "server.h"
#include "training.h"
#include "truststore.h"
#include "version.h"
#include "workerclient.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QHostInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSysInfo>
#include <QTimer>

#include <cstdio>
#include <functional>

namespace tandem::cli {

namespace {

constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kUsage = 2;

void printErr(const QString& s) {
    fprintf(stderr, "tandem: %s\n", qPrintable(s));
}
void printOut(const QString& s) {
    fprintf(stdout, "%s\n", qPrintable(s));
    fflush(stdout);
}

int fail(const Error& e) {
    printErr(e.message);
    return e.code == ErrorCode::InvalidArgument ? kUsage : kFailed;
}

QString topUsage() {
    return QStringLiteral(
        "Usage: tandem [--version] [--help] COMMAND [OPTIONS]\n"
        "       tandem [gui] [--lang CODE] [--home DIR]   opens the app\n"
        "\n"
        "Trains one PyTorch model across your own machines.\n"
        "\n"
        "Commands:\n"
        "  devices   List this machine's compute devices\n"
        "  train     Train a model (the built-in demo: mnist-cnn on Fashion-MNIST)\n"
        "  export    Export a run checkpoint as TorchScript or safetensors\n"
        "  worker    Join a coordinator's run (tandem worker --connect HOST:PORT)\n"
        "  identity  Print this node's device ID\n"
        "  trust     List, add or remove the devices this node accepts\n"
        "  peers     List the Tandem nodes announcing themselves on the LAN\n"
        "  serve     Run this node: announce it and accept pairing requests\n"
        "  pair      Pair with another node (both confirm the same 6-digit code)\n"
        "\n"
        "Run 'tandem COMMAND --help' for a command's options.\n");
}

// Parses a subcommand's arguments; on --help prints usage and returns kOk through `exit`.
bool parse(QCommandLineParser& p, const QString& command, const QStringList& args,
           const QString& description, int* exit) {
    p.setApplicationDescription(description);
    p.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help."));
    p.addOption(help);
    p.addOption({QStringLiteral("home"),
                 QStringLiteral("This node's home folder (identity, trust store, caches)."),
                 QStringLiteral("DIR")});
    QStringList full = args;
    full.prepend(QStringLiteral("tandem ") + command);
    if (!p.parse(full)) {
        printErr(QStringLiteral("%1: %2 (see 'tandem %1 --help')").arg(command, p.errorText()));
        *exit = kUsage;
        return false;
    }
    if (p.isSet(help)) {
        fprintf(stdout, "%s", qPrintable(p.helpText()));
        *exit = kOk;
        return false;
    }
    if (!p.positionalArguments().isEmpty()) {
        printErr(QStringLiteral("%1: unexpected argument \"%2\"")
                     .arg(command, p.positionalArguments().first()));
        *exit = kUsage;
        return false;
    }
    return true;
}

int cmdDevices(const QStringList& args) {
    QCommandLineParser p;
    p.addOption({QStringLiteral("json"), QStringLiteral("Print a JSON array.")});
    int exit = kOk;
    if (!parse(p, QStringLiteral("devices"), args, QStringLiteral("Lists compute devices."), &exit))
        return exit;
    const QList<DeviceInfo> devices = detectDevices();
    // What was not found goes to stderr, so the JSON on stdout stays an array of devices.
    for (const QString& note : deviceNotes())
        printErr(note);
    if (p.isSet(QStringLiteral("json"))) {
        QJsonArray a;
        for (const DeviceInfo& d : devices)
            a.append(d.toJson());
        printOut(QString::fromUtf8(QJsonDocument(a).toJson(QJsonDocument::Indented)).trimmed());
        return kOk;
    }
    for (const DeviceInfo& d : devices) {
        QString line = QStringLiteral("%1  %2").arg(d.torchDevice(), -7).arg(d.name);
        QStringList extra;
        if (d.memoryBytes > 0)
            extra << QStringLiteral("%1 GiB").arg(double(d.memoryBytes) / (1 << 30), 0, 'f', 1);
        if (!d.capability.isEmpty())
            extra << QStringLiteral("compute %1").arg(d.capability);
        if (d.kind == QLatin1String("cpu") && d.cores > 0)
            extra << QStringLiteral("%1 cores").arg(d.cores);
        if (!extra.isEmpty())
            line += QStringLiteral(" (%1)").arg(extra.join(QStringLiteral(", ")));
        printOut(line);
    }
    printOut(QStringLiteral("LibTorch %1").arg(torchVersionString()));
    return kOk;
}

// A typed reader for numeric options: a bad value is a usage error that names the option.
struct OptionReader {
    QCommandLineParser& p;
    QString error;

    template <typename T> void read(const char* name, T& dst, double lo, double hi) {
        const QString n = QLatin1String(name);
        if (!error.isEmpty() || !p.isSet(n))
            return;
        const QString v = p.value(n);
        bool ok = false;
        double d;
        if constexpr (std::is_floating_point_v<T>) {
            d = v.toDouble(&ok);
        } else {
            const qlonglong i = v.toLongLong(&ok);
            d = double(i);
        }
        if (!ok) {
            error = QStringLiteral("--%1: \"%2\" is not a %3")
                        .arg(n, v,
                             std::is_floating_point_v<T> ? QStringLiteral("number")
                                                         : QStringLiteral("whole number"));
            return;
        }
        if (d < lo || d > hi) {
            error = QStringLiteral("--%1: %2 is outside %3..%4").arg(n, v).arg(lo).arg(hi);
            return;
        }
        if constexpr (std::is_floating_point_v<T>)
            dst = static_cast<T>(d);
        else
            dst = static_cast<T>(v.toLongLong());
    }
};

// Reads the numeric options of a run through the engine's table of fields, so that the
// command line and a run description accept exactly the same values.
Status readRunOptions(const QCommandLineParser& p, RunConfig& cfg) {
    for (const RunField& f : runFields()) {
        const QString name = QLatin1String(f.option);
        if (!p.isSet(name))
            continue;
        const QString v = p.value(name);
        bool ok = false;
        const double d = v.toDouble(&ok);
        if (!ok)
            return makeError(
                ErrorCode::InvalidArgument,
                QStringLiteral("--%1: \"%2\" is not a %3")
                    .arg(name, v,
                         f.integer() ? QStringLiteral("whole number") : QStringLiteral("number")));
        if (auto st = f.set(cfg, d, QStringLiteral("--") + name); !st)
            return st;
    }
    if (p.isSet(QStringLiteral("seed"))) {
        bool ok = false;
        const QString v = p.value(QStringLiteral("seed"));
        cfg.seed = v.toULongLong(&ok);
        if (!ok)
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("--seed: \"%1\" is not a whole number from 0 to "
                                            "18446744073709551615")
                                 .arg(v));
    }
    return success();
}

int cmdTrain(const QStringList& args) {
    QCommandLineParser p;
    const RunConfig defaults;
    auto opt = [&](const char* name, const QString& help, const char* valueName) {
        p.addOption({QLatin1String(name), help, QLatin1String(valueName)});
    };
    opt("model",
        QStringLiteral("Built-in model (mlp, mnist-cnn, resnet8) or a TorchScript file "
                       "[%1].")
            .arg(defaults.model),
        "NAME|FILE");
    opt("data",
        QStringLiteral("Dataset: fashion-mnist, fashion-mnist:DIR, mnist:DIR, cifar10:DIR, "
                       "csv:FILE[,label=COL][,test=FILE] [%1].")
            .arg(defaults.data),
        "SPEC");
    opt("epochs", QStringLiteral("Epochs [%1].").arg(defaults.epochs), "N");
    opt("batch", QStringLiteral("Global batch size [%1].").arg(defaults.batch), "B");
    opt("optimizer", QStringLiteral("sgd, adam or adamw [%1].").arg(defaults.optimizer), "NAME");
    opt("lr", QStringLiteral("Learning rate [%1].").arg(defaults.lr), "X");
    opt("momentum", QStringLiteral("SGD momentum [%1].").arg(defaults.momentum), "X");
    opt("weight-decay", QStringLiteral("Weight decay [0; 0.01 for adamw]."), "X");
    opt("schedule", QStringLiteral("constant or cosine [%1].").arg(defaults.schedule), "NAME");
    opt("warmup-steps", QStringLiteral("Linear learning-rate warm-up steps [0]."), "N");
    opt("seed", QStringLiteral("Random seed for weights and sampling [0]."), "S");
    opt("threads", QStringLiteral("LibTorch threads [one per core]."), "N");
    opt("limit-train", QStringLiteral("Use only the first N training samples."), "N");
    opt("limit-test", QStringLiteral("Use only the first N test samples."), "N");
    opt("max-steps", QStringLiteral("Stop after N steps in total, with a checkpoint."), "N");
    opt("checkpoint-every", QStringLiteral("Write a checkpoint every N steps [epoch ends]."), "N");
    opt("out", QStringLiteral("Output folder [runs/MODEL-TIME]."), "DIR");
    opt("resume", QStringLiteral("Continue the run saved in this checkpoint."), "CHECKPOINT");
    opt("config",
        QStringLiteral("Read the run description from this JSON file; options given "
                       "here override it."),
        "FILE");
    opt("mode", QStringLiteral("sync, async or local-sgd [sync]."), "MODE");
    opt("staleness", QStringLiteral("async: drop gradients staler than this many steps [4]."), "S");
    opt("local-steps", QStringLiteral("local-sgd: inner optimizer steps per round [8]."), "H");
    opt("outer-lr", QStringLiteral("local-sgd: outer Nesterov learning rate [0.7]."), "X");
    opt("outer-momentum", QStringLiteral("local-sgd: outer Nesterov momentum [0.9]."), "X");
    opt("wire", QStringLiteral("How tensors travel between machines: fp32, fp16 or bf16 [fp32]."),
        "PRECISION");
    opt("precision",
        QStringLiteral("What workers compute the forward pass in: fp32, or bf16/fp16 autocast "
                       "where the device has it; weights stay fp32 [fp32]."),
        "PRECISION");
    opt("device",
        QStringLiteral("This machine's device for training: cuda:N, mps or cpu [the best]."),
        "DEVICE");
    opt("listen", QStringLiteral("Coordinate workers from other machines on this address."),
        "HOST:PORT");
    opt("workers", QStringLiteral("Remote workers to wait for before training starts [0]."), "N");
    opt("worker-timeout", QStringLiteral("Drop a worker silent for this many seconds [30]."), "S");
    opt("join-timeout",
        QStringLiteral("Train with the workers that came after this many seconds [0: wait]."), "S");
    opt("eval-batch", QStringLiteral("Batch size for evaluation [%1].").arg(defaults.evalBatch),
        "N");
    p.addOption(
        {QStringLiteral("invite"),
         QStringLiteral("Ask a paired machine running 'tandem serve' to join (repeatable)."),
         QStringLiteral("HOST[:PORT]")});
    p.addOption({QStringLiteral("no-local-worker"),
                 QStringLiteral("Coordinate only; this machine does not train.")});
    int exit = kOk;
    if (!parse(p, QStringLiteral("train"), args,
               QStringLiteral("Trains a model. Progress goes to stderr; the last line on stdout "
                              "is a JSON summary."),
               &exit))
        return exit;

    RunConfig cfg;
    const QString resume = p.value(QStringLiteral("resume"));
    if (!resume.isEmpty()) {
        auto c = checkpointConfig(resume);
        if (!c)
            return fail(c.error());
        cfg = *c;
        cfg.maxSteps = 0; // a stop-after limit belongs to the run that set it
        // Where the run meets its workers is this invocation's to say (--listen, --workers,
        // --invite, --no-local-worker), not the checkpoint's.
        const RunConfig defaults;
        cfg.listen = defaults.listen;
        cfg.workers = defaults.workers;
        cfg.invites = defaults.invites;
        cfg.localWorker = defaults.localWorker;
        cfg.device = defaults.device;
    } else if (p.isSet(QStringLiteral("config"))) {
        const QString path = p.value(QStringLiteral("config"));
        auto bytes = readRegularFile(path, 1 << 20);
        if (!bytes)
            return fail(makeError(bytes.error().code,
                                  QStringLiteral("run description %1").arg(bytes.error().message)));
        QJsonParseError perr;
        const QJsonDocument doc = QJsonDocument::fromJson(*bytes, &perr);
        if (!doc.isObject())
            return fail(makeError(
                ErrorCode::InvalidArgument,
                QStringLiteral("%1 is not a JSON object: %2").arg(path, perr.errorString())));
        auto c = RunConfig::fromJson(doc.object());
        if (!c)
            return fail(makeError(ErrorCode::InvalidArgument,
                                  QStringLiteral("%1: %2").arg(path, c.error().message)));
        cfg = *c;
    }
    auto str = [&](const char* n, QString& dst) {
        if (p.isSet(QLatin1String(n)))
            dst = p.value(QLatin1String(n));
    };
    if (!resume.isEmpty() && (p.isSet(QStringLiteral("model")) || p.isSet(QStringLiteral("data")) ||
                              p.isSet(QStringLiteral("seed")) || p.isSet(QStringLiteral("batch"))))
        return fail(makeError(ErrorCode::InvalidArgument,
                              QStringLiteral("--resume continues a run as it was set up; "
                                             "--model, --data, --seed and --batch cannot change")));
    str("model", cfg.model);
    str("data", cfg.data);
    str("optimizer", cfg.optimizer);
    str("schedule", cfg.schedule);
    str("out", cfg.outDir);
    str("mode", cfg.mode);
    str("wire", cfg.wire);
    str("precision", cfg.precision);
    str("device", cfg.device);
    str("listen", cfg.listen);
    cfg.home = p.value(QStringLiteral("home"));
    if (p.isSet(QStringLiteral("invite")))
        cfg.invites = p.values(QStringLiteral("invite"));
    if (p.isSet(QStringLiteral("no-local-worker")))
        cfg.localWorker = false;
    if (auto st = readRunOptions(p, cfg); !st)
        return fail(st.error());
    if (auto st = cfg.validate(); !st)
        return fail(st.error());
    if (cfg.outDir.isEmpty())
        cfg.outDir =
            QDir(QStringLiteral("runs"))
                .filePath(QStringLiteral("%1-%2").arg(
                    QFileInfo(cfg.model).completeBaseName(),
                    QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))));

    RunControl control;
    ProgressPrinter progress(&control);
    SignalWatcher signals(&control, &progress);
    auto summary = runTraining(cfg, resume, &progress, &control);
    if (!summary)
        return fail(summary.error());
    progress.onMessage(
        QStringLiteral("%1: %2 steps, %3 samples/s%4; outputs in %5")
            .arg(summary->finished ? QStringLiteral("finished") : QStringLiteral("stopped"))
            .arg(summary->steps)
            .arg(summary->samplesPerS, 0, 'f', 1)
            .arg(summary->testAccuracy >= 0
                     ? QStringLiteral(", test accuracy %1").arg(summary->testAccuracy, 0, 'f', 4)
                     : QString())
            .arg(summary->outDir));
    printOut(QString::fromUtf8(QJsonDocument(summary->toJson()).toJson(QJsonDocument::Compact)));
    return kOk;
}

int cmdExport(const QStringList& args) {
    QCommandLineParser p;
    p.addOption({QStringLiteral("checkpoint"), QStringLiteral("The run checkpoint."),
                 QStringLiteral("FILE")});
    p.addOption({QStringLiteral("format"), QStringLiteral("torchscript or safetensors."),
                 QStringLiteral("FORMAT")});
    p.addOption(
        {QStringLiteral("out"), QStringLiteral("The file to write."), QStringLiteral("FILE")});
    int exit = kOk;
    if (!parse(p, QStringLiteral("export"), args,
               QStringLiteral("Exports a trained model from a run checkpoint."), &exit))
        return exit;
    const QString ckpt = p.value(QStringLiteral("checkpoint"));
    const QString format = p.value(QStringLiteral("format"));
    const QString out = p.value(QStringLiteral("out"));
    if (ckpt.isEmpty() || out.isEmpty())
        return fail(makeError(ErrorCode::InvalidArgument,
                              QStringLiteral("export needs --checkpoint FILE and --out FILE")));
    ExportFormat f;
    if (format == QLatin1String("torchscript"))
        f = ExportFormat::TorchScript;
    else if (format == QLatin1String("safetensors"))
        f = ExportFormat::Safetensors;
    else
        return fail(makeError(ErrorCode::InvalidArgument,
                              QStringLiteral("--format must be torchscript or safetensors (got "
                                             "\"%1\")")
                                  .arg(format)));
    if (auto st = exportCheckpoint(ckpt, f, out); !st)
        return fail(st.error());
    printErr(QStringLiteral("wrote %1").arg(out));
    return kOk;
}

int cmdIdentity(const QStringList& args) {
    QCommandLineParser p;
    int exit = kOk;
    if (!parse(p, QStringLiteral("identity"), args,
               QStringLiteral("Prints this node's device ID (made on first use)."), &exit))
        return exit;
    const QString home = nodeHome(p.value(QStringLiteral("home")));
    auto id = Identity::loadOrCreate(home);
    if (!id)
        return fail(id.error());
    printErr(QStringLiteral("home %1").arg(home));
    printOut(id->deviceId());
    return kOk;
}

int cmdTrust(const QStringList& args) {
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("action"), QStringLiteral("list, add or remove"));
    p.addPositionalArgument(QStringLiteral("id"), QStringLiteral("a device ID"));
    p.addOption({QStringLiteral("name"), QStringLiteral("A name to remember the device by."),
                 QStringLiteral("NAME")});
    p.setApplicationDescription(
        QStringLiteral("Lists, adds or removes the devices this node accepts."));
    p.addOption({{QStringLiteral("h"), QStringLiteral("help")}, QStringLiteral("Show this help.")});
    p.addOption({QStringLiteral("home"), QStringLiteral("This node's home folder."),
                 QStringLiteral("DIR")});
    QStringList full = args;
    full.prepend(QStringLiteral("tandem trust"));
    if (!p.parse(full)) {
        printErr(QStringLiteral("trust: %1").arg(p.errorText()));
        return kUsage;
    }
    if (p.isSet(QStringLiteral("help"))) {
        fprintf(stdout, "%s", qPrintable(p.helpText()));
        return kOk;
    }
    const QStringList pos = p.positionalArguments();
    TrustStore store(nodeHome(p.value(QStringLiteral("home"))));
    const QString action = pos.value(0, QStringLiteral("list"));
    if (action == QLatin1String("list") && pos.size() <= 1) {
        auto list = store.load();
        if (!list)
            return fail(list.error());
        for (const TrustStore::Entry& e : *list)
            printOut(QStringLiteral("%1  %2").arg(e.id, e.name));
        return kOk;
    }
    if ((action == QLatin1String("add") || action == QLatin1String("remove")) && pos.size() == 2) {
        if (action == QLatin1String("add")) {
            if (auto st = store.add(pos[1], p.value(QStringLiteral("name"))); !st)
                return fail(st.error());
            printErr(QStringLiteral("trusting %1").arg(pos[1]));
            return kOk;
        }
        auto removed = store.remove(pos[1]);
        if (!removed)
            return fail(removed.error());
        if (!*removed) {
            printErr(QStringLiteral("%1 was not trusted").arg(pos[1]));
            return kFailed;
        }
        printErr(QStringLiteral("no longer trusting %1").arg(pos[1]));
        return kOk;
    }
    printErr(QStringLiteral("usage: tandem trust list | add ID | remove ID [--home DIR]"));
    return kUsage;
}

int cmdWorker(const QStringList& args) {
    QCommandLineParser p;
    p.addOption({QStringLiteral("connect"), QStringLiteral("The coordinator's address."),
                 QStringLiteral("HOST:PORT")});
    p.addOption({QStringLiteral("threads"), QStringLiteral("LibTorch threads [one per core]."),
                 QStringLiteral("N")});
    p.addOption({QStringLiteral("name"),
                 QStringLiteral("The name the coordinator shows for this machine [host name]."),
                 QStringLiteral("NAME")});
    p.addOption({QStringLiteral("cache"),
                 QStringLiteral("Folder for datasets received from coordinators [HOME/cache]."),
                 QStringLiteral("DIR")});
    p.addOption({QStringLiteral("reconnect"),
                 QStringLiteral("Seconds to keep trying to reach the coordinator [60]."),
                 QStringLiteral("S")});
    p.addOption({QStringLiteral("max-batch"),
                 QStringLiteral("The most samples this device takes per step [no limit]."),
                 QStringLiteral("N")});
    p.addOption({QStringLiteral("device"),
                 QStringLiteral("The device to compute on: cuda:N, mps or cpu [the best]."),
                 QStringLiteral("DEVICE")});
    p.addOption({QStringLiteral("devices"),
                 QStringLiteral("One worker per device: all (every GPU), or a list such as "
                                "cuda:0,cuda:1."),
                 QStringLiteral("LIST")});
    int exit = kOk;
    if (!parse(p, QStringLiteral("worker"), args,
               QStringLiteral("Joins a coordinator's run and trains until it ends."), &exit))
        return exit;
    auto hp = parseHostPort(p.value(QStringLiteral("connect")));
    if (!p.isSet(QStringLiteral("connect")) || !hp)
        return fail(makeError(
            ErrorCode::InvalidArgument,
            QStringLiteral(
                "worker needs --connect HOST:PORT (the address the coordinator printed)")));
    WorkerOptions o;
    o.host = hp->first;
    o.port = hp->second;
    o.home = nodeHome(p.value(QStringLiteral("home")));
    o.cacheDir = p.value(QStringLiteral("cache"));
    o.name = p.value(QStringLiteral("name"));
    if (p.isSet(QStringLiteral("device")) && p.isSet(QStringLiteral("devices")))
        return fail(makeError(ErrorCode::InvalidArgument,
                              QStringLiteral("give --device or --devices, not both")));
    o.devices = p.isSet(QStringLiteral("devices")) ? p.value(QStringLiteral("devices"))
                                                   : p.value(QStringLiteral("device"));
    OptionReader r{p, {}};
    r.read("threads", o.threads, 0, 1024);
    r.read("reconnect", o.reconnectSeconds, 0, 86400);
    r.read("max-batch", o.maxBatch, 0, 1 << 20);
    if (!r.error.isEmpty())
        return fail(makeError(ErrorCode::InvalidArgument, r.error));
    return runWorker(o, [](const QString& line) { printErr(line); });
}

int cmdPeers(const QStringList& args) {
    QCommandLineParser p;
    p.addOption({QStringLiteral("json"), QStringLiteral("Print a JSON array.")});
    p.addOption(
        {QStringLiteral("wait"), QStringLiteral("Seconds to listen [4]."), QStringLiteral("S")});
    p.addOption({QStringLiteral("expect"),
                 QStringLiteral("Stop listening as soon as this many peers are seen."),
                 QStringLiteral("N")});
    p.addOption({QStringLiteral("add"),
                 QStringLiteral("Also ask this address directly (networks that block broadcast)."),
                 QStringLiteral("HOST[:PORT]")});
    p.addOption({QStringLiteral("discovery-port"),
                 QStringLiteral("UDP port of announcements [%1].").arg(Discovery::kDefaultPort),
                 QStringLiteral("P")});
    p.addOption(
        {QStringLiteral("announce-to"),
         QStringLiteral(
             "Comma-separated addresses to announce to, instead of the broadcast address and "
             "the multicast groups."),
         QStringLiteral("ADDRS")});
    p.addOption({QStringLiteral("name"),
                 QStringLiteral("The name this node announces [host name]."),
                 QStringLiteral("NAME")});
    int exit = kOk;
    if (!parse(p, QStringLiteral("peers"), args,
               QStringLiteral("Lists the Tandem nodes on the LAN."), &exit))
        return exit;
    int waitS = 4, port = Discovery::kDefaultPort, expect = 0;
    OptionReader r{p, {}};
    r.read("wait", waitS, 0, 3600);
    r.read("expect", expect, 0, 100000);
    r.read("discovery-port", port, 1, 65535);
    if (!r.error.isEmpty())
        return fail(makeError(ErrorCode::InvalidArgument, r.error));
    const QString home = nodeHome(p.value(QStringLiteral("home")));
    auto id = Identity::loadOrCreate(home);
    if (!id)
        return fail(id.error());
    wire::Announcement self;
    self.deviceId = id->deviceId();
    self.displayName = p.isSet(QStringLiteral("name")) ? p.value(QStringLiteral("name"))
                                                       : QHostInfo::localHostName();
    self.os = QSysInfo::prettyProductName();
    self.appVersion = appVersion();
    self.devices = detectDevices();
    self.query = true; // a listing wants answers now, not within an announcement interval
    Discovery d(self);
    d.setPort(quint16(port));
    if (p.isSet(QStringLiteral("announce-to"))) {
        QList<QHostAddress> targets;
        for (const QString& a :
             p.value(QStringLiteral("announce-to")).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            QHostAddress h(a.trimmed());
            if (h.isNull())
                return fail(
                    makeError(ErrorCode::InvalidArgument,
                              QStringLiteral("--announce-to: \"%1\" is not an IP address").arg(a)));
            targets << h;
        }
        d.setTargets(targets);
    }
    if (auto st = d.start(); !st)
        return fail(st.error());
    if (p.isSet(QStringLiteral("add"))) {
        QString host = p.value(QStringLiteral("add"));
        quint16 addPort = Discovery::kDefaultPort;
        if (auto hp = parseHostPort(host)) {
            host = hp->first;
            addPort = hp->second;
        }
        const QHostAddress h(host);
        if (h.isNull())
            return fail(makeError(ErrorCode::InvalidArgument,
                                  QStringLiteral("--add: \"%1\" is not an IP address").arg(host)));
        d.addAddress(h, addPort);
    }
    QEventLoop loop;
    QTimer::singleShot(waitS * 1000, &loop, &QEventLoop::quit);
    if (expect > 0)
        QObject::connect(&d, &Discovery::peersChanged, &loop, [&] {
            if (d.peers().size() >= expect)
                loop.quit();
        });
    loop.exec();
    const TrustStore trust(home);
    QJsonArray out;
    for (const Discovery::Peer& peer : d.peers()) {
        const wire::Announcement& a = peer.announcement;
        QJsonArray devs;
        for (const DeviceInfo& dev : a.devices)
            devs.append(dev.toJson());
        out.append(QJsonObject{{QStringLiteral("device_id"), a.deviceId},
                               {QStringLiteral("name"), a.displayName},
                               {QStringLiteral("address"), peer.address.toString()},
                               {QStringLiteral("tcp_port"), a.tcpPort},
                               {QStringLiteral("os"), a.os},
                               {QStringLiteral("app_version"), a.appVersion},
                               {QStringLiteral("protocol_version"), qint64(a.protocolVersion)},
                               {QStringLiteral("devices"), devs},
                               {QStringLiteral("paired"), trust.contains(a.deviceId)}});
    }
    if (p.isSet(QStringLiteral("json"))) {
        printOut(QString::fromUtf8(QJsonDocument(out).toJson(QJsonDocument::Indented)).trimmed());
        return kOk;
    }
    if (out.isEmpty())
        printErr(QStringLiteral(
                     "no Tandem node answered within %1 s. Is Tandem running on the other machine? "
                     "Firewalls must let UDP port %2 through; on Wi-Fi that blocks broadcast, "
                     "use --add ADDRESS.")
                     .arg(waitS)
                     .arg(port));
    for (const QJsonValue& v : out) {
        const QJsonObject o = v.toObject();
        QStringList devs;
        for (const QJsonValue& dv : o.value(QStringLiteral("devices")).toArray())
            devs << dv.toObject().value(QStringLiteral("name")).toString();
        printOut(QStringLiteral("%1  %2  %3  %4  Tandem %5  %6  [%7]")
                     .arg(o.value(QStringLiteral("device_id")).toString().left(16),
                          o.value(QStringLiteral("name")).toString(),
                          o.value(QStringLiteral("address")).toString(),
                          o.value(QStringLiteral("os")).toString(),
                          o.value(QStringLiteral("app_version")).toString(),
                          o.value(QStringLiteral("paired")).toBool() ? QStringLiteral("paired")
                                                                     : QStringLiteral("not paired"),
                          devs.join(QStringLiteral(", "))));
    }
    return kOk;
}

} // namespace

int run(const QStringList& argv) {
    QStringList args = argv.mid(1);
    if (args.isEmpty()) {
        fprintf(stdout, "%s", qPrintable(topUsage()));
        return kOk;
    }
    const QString first = args.takeFirst();
    if (first == QLatin1String("--version") || first == QLatin1String("-v")) {
        printOut(QStringLiteral("tandem %1").arg(appVersion()));
        return kOk;
    }
    if (first == QLatin1String("--help") || first == QLatin1String("-h") ||
        first == QLatin1String("help")) {
        fprintf(stdout, "%s", qPrintable(topUsage()));
        return kOk;
    }
    static const QMap<QString, std::function<int(const QStringList&)>> commands = {
        {QStringLiteral("devices"), cmdDevices},   {QStringLiteral("train"), cmdTrain},
        {QStringLiteral("export"), cmdExport},     {QStringLiteral("worker"), cmdWorker},
        {QStringLiteral("identity"), cmdIdentity}, {QStringLiteral("trust"), cmdTrust},
        {QStringLiteral("peers"), cmdPeers},       {QStringLiteral("serve"), cmdServe},
        {QStringLiteral("pair"), cmdPair},
    };
    const auto it = commands.constFind(first);
    if (it == commands.constEnd()) {
        printErr(QStringLiteral("unknown command \"%1\"").arg(first));
        fprintf(stderr, "%s", qPrintable(topUsage()));
        return kUsage;
    }
    try {
        return (*it)(args);
    } catch (const std::exception& e) {
        // The engine turns foreseeable failures into values; this is the last line of defence.
        printErr(QStringLiteral("internal error: %1")
                     .arg(QString::fromUtf8(e.what()).section(QLatin1Char('\n'), 0, 0)));
        return kFailed;
    }
}

} // namespace tandem::cli
