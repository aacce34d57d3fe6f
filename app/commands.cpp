#include "app/commands.h"

#include "app/cli.h"
#include "app/eventlog.h"
#include "app/nodecommands.h"
#include "app/progress.h"
#include "common/files.h"
#include "common/version.h"
#include "engine/devices.h"
#include "engine/runplan.h"
#include "engine/training.h"
#include "engine/workerclient.h"
#include "model/ggufexport.h"
#include "model/modelsource.h"
#include "net/server.h"
#include "node/workercommand.h"

#include <QCommandLineParser>
#include <QJsonArray>
#include <QJsonDocument>

#include <cstdio>
#include <functional>

namespace tandem::cli {

namespace {

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
        "  sweep     Search hyperparameters: one trial per device, here and on paired nodes\n"
        "  export    Export a run's model: TorchScript, safetensors, a Hugging Face\n"
        "            folder, PEFT adapters, or GGUF for llama.cpp and Ollama\n"
        "  generate  Continue a prompt with a trained language model\n"
        "  hub       Search and download models from the Hugging Face Hub, list those\n"
        "            already downloaded\n"
        "  worker    Join a coordinator's run (tandem worker --connect HOST:PORT)\n"
        "  identity  Print this node's device ID\n"
        "  trust     List, add or remove the devices this node accepts\n"
        "  peers     List the Tandem nodes announcing themselves on the LAN\n"
        "  serve     Run this node: announce it and accept pairing requests\n"
        "  pair      Pair with another node (both confirm the same 6-digit code)\n"
        "\n"
        "Run 'tandem COMMAND --help' for a command's options; 'tandem help --all' prints\n"
        "them all.\n");
}

int cmdDevices(const QStringList& args) {
    Parser p;
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
        if (d.kind == DeviceKind::Cpu && d.cores > 0)
            extra << QStringLiteral("%1 cores").arg(d.cores);
        if (!extra.isEmpty())
            line += QStringLiteral(" (%1)").arg(extra.join(QStringLiteral(", ")));
        printOut(line);
    }
    printOut(QStringLiteral("LibTorch %1").arg(torchVersionString()));
    return kOk;
}

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

void addTrainOptions(Parser& p) {
    const RunConfig defaults;
    auto opt = [&](const char* name, const QString& help, const char* valueName) {
        p.addOption({QLatin1String(name), help, QString::fromUtf8(valueName)});
    };
    opt("model",
        QStringLiteral("Built-in model (%1), hf:DIR (a Hugging Face folder: %2) or a "
                       "TorchScript file [%3].")
            .arg(zooModelNames().join(QStringLiteral(", ")), hfFamilyTitles(), defaults.model),
        "NAME|hf:DIR|FILE");
    opt("lora",
        QStringLiteral("hf: models: train low-rank adapters only, the base weights frozen in "
                       "their own dtype, or in 4 or 8 bits with base=nf4 or base=int8; every "
                       "key optional [r=8,alpha=2r,dropout=0,base=bf16,targets=the attention "
                       "projections]."),
        "r=R,alpha=A,dropout=P,base=nf4|int8|bf16,targets=L[,L…]");
    opt("gguf",
        QStringLiteral("hf: models: at the end, also write model.gguf for llama.cpp, Ollama and "
                       "LM Studio (with model.Modelfile for `ollama create`), in this "
                       "quantization: %1. The family is checked before training starts.")
            .arg(ggufQuantNames().join(QStringLiteral(", "))),
        "QUANT");
    p.addOption({QStringLiteral("checkpoint-activations"),
                 QStringLiteral("hf: models: recompute each block's activations in the "
                                "backward pass instead of keeping them (less memory, more "
                                "time).")});
    opt("data",
        QStringLiteral(
            "Dataset. Images and tables: fashion-mnist (built in), fashion-mnist:DIR, "
            "mnist:DIR, idx:DIR, cifar10:DIR, images:DIR[,size=N][,test=DIR][,skip_bad=1], "
            "csv:FILE[,label=COL|target=COL][,test=FILE], npz:FILE[,inputs=float|ids], "
            "npy:DIR[,inputs=float|ids]. Text, through a Hugging Face model's tokenizer (gpt: "
            "its bytes): text:FILE, jsonl:FILE[,field=NAME], chat:FILE (one conversation a "
            "line, in the model's chat template), each with ,context=N ,test=FILE "
            ",long=split|refuse ,tokenizer=DIR ,template=FILE as it needs. Preference pairs "
            "for --loss dpo or orpo: prefs:FILE (TRL's prompt, chosen and rejected a line). "
            "Token ids: "
            "tokens:FILE[,dtype=uint16|uint32|int32][,context=N][,test=FILE] [%1].")
            .arg(defaults.data),
        "SPEC");
    opt("epochs", QStringLiteral("Epochs [%1].").arg(defaults.epochs), "N");
    opt("batch", QStringLiteral("Global batch size [%1].").arg(defaults.batch), "B");
    opt("loss",
        QStringLiteral("auto (from the model's output and the data's targets), cross-entropy, "
                       "mse, l1, huber, bce, model (the model's own loss(output, target)), or "
                       "on preference pairs (prefs:) dpo or orpo [%1].")
            .arg(nameOf(defaults.loss)),
        "NAME");
    opt("optimizer",
        QStringLiteral("sgd, adam, adamw, rmsprop, adagrad or adamw8bit (8-bit state) [%1].")
            .arg(nameOf(defaults.optimizer)),
        "NAME");
    opt("lr", QStringLiteral("Learning rate [%1].").arg(defaults.lr), "X");
    opt("momentum", QStringLiteral("SGD momentum [%1].").arg(defaults.momentum), "X");
    opt("weight-decay", QStringLiteral("Weight decay [0; 0.01 for adamw and adamw8bit]."), "X");
    opt("beta",
        QStringLiteral("Preference tuning: DPO's beta, or ORPO's lambda [%1].").arg(defaults.beta),
        "X");
    opt("schedule", QStringLiteral("constant or cosine [%1].").arg(nameOf(defaults.schedule)),
        "NAME");
    opt("warmup-steps", QStringLiteral("Linear learning-rate warm-up steps [0]."), "N");
    opt("seed", QStringLiteral("Random seed for weights and sampling [0]."), "S");
    opt("threads", QStringLiteral("LibTorch threads [one per core]."), "N");
    opt("limit-train", QStringLiteral("Use only the first N training samples."), "N");
    opt("limit-test", QStringLiteral("Use only the first N test samples."), "N");
    opt("max-steps",
        QStringLiteral("Finish after N steps in total: evaluated, checkpointed, exported."), "N");
    opt("checkpoint-every", QStringLiteral("Write a checkpoint every N steps [epoch ends]."), "N");
    opt("out", QStringLiteral("Output folder [runs/TIME-MODEL]."), "DIR");
    opt("resume", QStringLiteral("Continue the run saved in this checkpoint."), "CHECKPOINT");
    opt("config",
        QStringLiteral("Read the run description from this JSON file; options given "
                       "here override it."),
        "FILE");
    opt("mode",
        QStringLiteral("sync, async, local-sgd, or auto (measures the links and one step, "
                       "then sync, streaming local-sgd, or this machine alone for a run too "
                       "short to repay starting the others) [auto]."),
        "MODE");
    opt("staleness", QStringLiteral("async: drop gradients staler than this many steps [4]."), "S");
    opt("local-steps", QStringLiteral("local-sgd: inner optimizer steps per round [32]."), "H");
    opt("fragments",
        QStringLiteral("local-sgd: stream the exchange in F fragments, one every H/F steps, "
                       "while training goes on [1]."),
        "F");
    opt("outer-lr", QStringLiteral("local-sgd: outer Nesterov learning rate [0.7]."), "X");
    opt("outer-momentum", QStringLiteral("local-sgd: outer Nesterov momentum [0.9]."), "X");
    opt("wire", QStringLiteral("How tensors travel between machines: fp32, fp16 or bf16 [fp32]."),
        "PRECISION");
    opt("outer-wire",
        QStringLiteral("local-sgd: how weights and parameter deltas travel: fp32, fp16, int8 or "
                       "int4, with what rounding loses carried to the next round [fp32]."),
        "FORMAT");
    opt("inner-lr-scaling",
        QStringLiteral("local-sgd: workers, to scale the inner learning rate with the workers "
                       "sharing a round, so a round moves as far as one machine's H steps; "
                       "none, to train with --lr as given [workers]."),
        "HOW");
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
    opt("name", QStringLiteral("The name workers show for this machine [host name]."), "NAME");
    opt("worker-timeout", QStringLiteral("Drop a worker silent for this many seconds [30]."), "S");
    opt("join-timeout",
        QStringLiteral("Train with the workers that came after this many seconds [0: wait]."), "S");
    opt("eval-batch", QStringLiteral("Batch size for evaluation [%1].").arg(defaults.evalBatch),
        "N");
    opt("events",
        QStringLiteral("Write the run's typed events as JSON lines to FILE, or to stdout with - "
                       "(before the summary)."),
        "FILE|-");
    p.addOption(
        {QStringLiteral("invite"),
         QStringLiteral("Ask a paired machine running 'tandem serve' to join (repeatable)."),
         QStringLiteral("HOST[:PORT]")});
    p.addOption({QStringLiteral("no-local-worker"),
                 QStringLiteral("Coordinate only; this machine does not train.")});
    p.addOption({QStringLiteral("shard"),
                 QStringLiteral("Sync and local-SGD: split the weights' fp32 masters and the "
                                "(outer) optimizer's state across this machine and its workers, "
                                "each holding a range, instead of all here.")});
    p.addOption({QStringLiteral("no-shard-log"),
                 QStringLiteral("With --shard: keep no log of the ranges' steps here. The "
                                "owners' links then carry less, but a machine lost stops the run "
                                "at its last checkpoint.")});
    p.addOption({QStringLiteral("no-history"),
                 QStringLiteral("Do not list this run in the app's History.")});
    p.addOption({QStringLiteral("ledger"),
                 QStringLiteral("Count what crosses between this machine's memory and its "
                                "device, and each wait on the device; print it per step "
                                "(slows each operator a little).")});
    p.addOption({QStringLiteral("split"),
                 QStringLiteral("Time each sync step's phases (local pass, wire, waiting for "
                                "other workers, optimizer), waiting for the device at each "
                                "phase's end, and print them per step (costs some speed).")});
}

// --events FILE|-: the run's typed events; `out` stays null without the option.
Status openEventLog(const QCommandLineParser& p, std::unique_ptr<EventLog>& out) {
    if (!p.isSet(QStringLiteral("events")))
        return success();
    auto log = EventLog::open(p.value(QStringLiteral("events")));
    if (!log)
        return log.error();
    out = std::move(*log);
    return success();
}

int cmdTrain(const QStringList& args) {
    Parser p;
    addTrainOptions(p);
    int exit = kOk;
    if (!parse(p, QStringLiteral("train"), args,
               QStringLiteral("Trains a model. Progress goes to stderr; the last line on stdout "
                              "is a JSON summary."),
               &exit))
        return exit;

    RunConfig cfg;
    const QString resume = p.value(QStringLiteral("resume"));
    if (!resume.isEmpty()) {
        auto c = RunPlan::resumeConfig(resume);
        if (!c)
            return fail(c.error());
        cfg = *c;
        // Where the run meets its workers is this invocation's to say (--listen, --workers,
        // --invite, --no-local-worker, --device), not the checkpoint's.
        RunPlan::forgetMachines(cfg);
    } else if (p.isSet(QStringLiteral("config"))) {
        auto c = RunConfig::readFile(p.value(QStringLiteral("config")));
        if (!c)
            return fail(c.error());
        cfg = *c;
    }
    auto str = [&](const char* n, QString& dst) {
        if (p.isSet(QLatin1String(n)))
            dst = p.value(QLatin1String(n));
    };
    const QStringList fixed = RunPlan::fixedOnResume();
    if (!resume.isEmpty() &&
        std::any_of(fixed.begin(), fixed.end(), [&](const QString& o) { return p.isSet(o); })) {
        QStringList options;
        for (const QString& o : fixed)
            options << QStringLiteral("--") + o;
        const QString last = options.takeLast();
        return usage(QStringLiteral("--resume continues a run as it was set up; %1 and %2 "
                                    "cannot change")
                         .arg(options.join(QStringLiteral(", ")), last));
    }
    str("model", cfg.model);
    str("data", cfg.data);
    str("lora", cfg.lora);
    str("gguf", cfg.gguf);
    str("out", cfg.outDir);
    if (p.isSet(QStringLiteral("checkpoint-activations")))
        cfg.checkpointActivations = true;
    for (const QString& key : runChoiceKeys()) {
        const QString option = QString(key).replace(QLatin1Char('_'), QLatin1Char('-'));
        if (p.isSet(option))
            if (auto st = setRunChoice(cfg, key, p.value(option)); !st)
                return fail(st.error());
    }
    str("device", cfg.device);
    str("listen", cfg.listen);
    cfg.home = p.value(QStringLiteral("home"));
    if (p.isSet(QStringLiteral("invite")))
        cfg.invites = p.values(QStringLiteral("invite"));
    if (p.isSet(QStringLiteral("no-local-worker")))
        cfg.localWorker = false;
    if (p.isSet(QStringLiteral("shard")))
        cfg.shard = true;
    if (p.isSet(QStringLiteral("no-shard-log")))
        cfg.shardLog = false;
    if (p.isSet(QStringLiteral("no-history")))
        cfg.listInHistory = false;
    if (p.isSet(QStringLiteral("ledger")))
        cfg.trafficLedger = true;
    if (p.isSet(QStringLiteral("split")))
        cfg.stepSplit = true;
    cfg.name = p.value(QStringLiteral("name"));
    if (auto st = readRunOptions(p, cfg); !st)
        return fail(st.error());
    if (auto st = cfg.validate(); !st)
        return fail(st.error());
    if (cfg.outDir.isEmpty())
        cfg.outDir = RunPlan::newRunFolder(QStringLiteral("runs"), cfg.model);

    std::unique_ptr<EventLog> events;
    if (auto st = openEventLog(p, events); !st)
        return fail(st.error());
    RunControl control;
    ProgressPrinter progress(&control);
    progress.setEventLog(events.get());
    SignalWatcher signals(&control, &progress);
    auto summary = runTraining(cfg, resume, &progress, &control);
    if (!summary) {
        if (events)
            events->failed(summary.error());
        return fail(summary.error());
    }
    if (events)
        events->finished(*summary);
    progress.onMessage(
        QStringLiteral("%1: %2 steps, %3 samples/s%4; outputs in %5")
            .arg(summary->finished ? QStringLiteral("finished") : QStringLiteral("stopped"))
            .arg(summary->steps)
            .arg(summary->samplesPerS, 0, 'f', 1)
            .arg(summary->test.evaluated ? QStringLiteral(", ") + testFiguresText(summary->test)
                                         : QString())
            .arg(summary->outDir));
    printOut(QString::fromUtf8(QJsonDocument(summary->toJson()).toJson(QJsonDocument::Compact)));
    return kOk;
}

int cmdExport(const QStringList& args) {
    Parser p;
    p.addOption({QStringLiteral("checkpoint"), QStringLiteral("The run checkpoint."),
                 QStringLiteral("FILE")});
    p.addOption({QStringLiteral("model"),
                 QStringLiteral("Instead of a checkpoint, a Hugging Face folder (hf:DIR), for "
                                "--format gguf."),
                 QStringLiteral("MODEL")});
    p.addOption({QStringLiteral("format"),
                 QStringLiteral("torchscript or safetensors (a file); for a Hugging Face model "
                                "hf (the model's folder, adapters merged), merged (the same), "
                                "peft (the adapters' folder) or gguf (one file for llama.cpp, "
                                "Ollama and LM Studio, adapters merged)."),
                 QStringLiteral("FORMAT")});
    p.addOption({QStringLiteral("quant"),
                 QStringLiteral("gguf: how the weights are stored, %1 [f16].")
                     .arg(ggufQuantNames().join(QStringLiteral(", "))),
                 QStringLiteral("Q")});
    p.addOption({QStringLiteral("sizes"),
                 QStringLiteral("gguf from --model: print the file's size in each quantization "
                                "and write nothing.")});
    p.addOption({QStringLiteral("out"), QStringLiteral("The file or folder to write."),
                 QStringLiteral("PATH")});
    int exit = kOk;
    if (!parse(p, QStringLiteral("export"), args,
               QStringLiteral("Exports a trained model from a run checkpoint."), &exit))
        return exit;
    const QString ckpt = p.value(QStringLiteral("checkpoint"));
    const QString model = p.value(QStringLiteral("model"));
    const QString format = p.value(QStringLiteral("format"));
    const QString out = p.value(QStringLiteral("out"));
    if (p.isSet(QStringLiteral("sizes"))) {
        const ModelSource source = ModelSource::parse(model);
        if (!source.isHf() || format != QLatin1String("gguf"))
            return fail(
                makeError(ErrorCode::InvalidArgument,
                          QStringLiteral("--sizes goes with --model hf:DIR --format gguf")));
        const std::vector<GgufQuant> quants = {GgufQuant::F16, GgufQuant::BF16, GgufQuant::Q8_0,
                                               GgufQuant::Q4_K_M};
        auto sizes = ggufExportBytes(source.path, quants);
        if (!sizes)
            return fail(sizes.error());
        QJsonObject o;
        for (size_t i = 0; i < quants.size(); ++i)
            o.insert(ggufQuantName(quants[i]), qint64((*sizes)[i]));
        printOut(QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)));
        return kOk;
    }
    if ((ckpt.isEmpty() == model.isEmpty()) || out.isEmpty())
        return fail(makeError(ErrorCode::InvalidArgument,
                              QStringLiteral("export needs --checkpoint FILE (or --model hf:DIR) "
                                             "and --out FILE")));
    ExportFormat f;
    if (!exportFormatFromName(format, &f))
        return fail(makeError(ErrorCode::InvalidArgument,
                              QStringLiteral("--format must be torchscript, safetensors, hf, "
                                             "merged, peft or gguf (got \"%1\")")
                                  .arg(format)));
    GgufOptions gguf;
    const QString quant = p.value(QStringLiteral("quant"));
    if (!quant.isEmpty() && (f != ExportFormat::Gguf || !ggufQuantFromName(quant, &gguf.quant)))
        return fail(makeError(ErrorCode::InvalidArgument,
                              f != ExportFormat::Gguf
                                  ? QStringLiteral("--quant is for --format gguf")
                                  : QStringLiteral("--quant must be %1 (got \"%2\")")
                                        .arg(ggufQuantNames().join(QStringLiteral(", ")), quant)));
    gguf.log = [](const QString& line) { printErr(line); };
    if (!model.isEmpty()) {
        const ModelSource source = ModelSource::parse(model);
        if (f != ExportFormat::Gguf || !source.isHf())
            return fail(makeError(ErrorCode::InvalidArgument,
                                  QStringLiteral("--model exports a Hugging Face folder (hf:DIR) "
                                                 "as --format gguf; other exports come from a "
                                                 "run's --checkpoint")));
        if (auto st = exportGgufFromFolder(source.path, out, gguf); !st)
            return fail(st.error());
    } else if (auto st = exportCheckpoint(ckpt, f, out, gguf); !st) {
        return fail(st.error());
    }
    printErr(QStringLiteral("wrote %1").arg(out));
    return kOk;
}

int cmdWorker(const QStringList& args) {
    Parser p;
    for (const QCommandLineOption& o : WorkerCommand::options())
        p.addOption(o);
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
    o.modelsDir = p.value(QStringLiteral("models"));
    o.name = p.value(QStringLiteral("name"));
    o.holdsOnly = p.isSet(QStringLiteral("hold-only"));
    if (p.isSet(QStringLiteral("device")) && p.isSet(QStringLiteral("devices")))
        return fail(makeError(ErrorCode::InvalidArgument,
                              QStringLiteral("give --device or --devices, not both")));
    o.devices = p.isSet(QStringLiteral("devices")) ? p.value(QStringLiteral("devices"))
                                                   : p.value(QStringLiteral("device"));
    OptionReader r{p, {}};
    r.read("threads", o.threads, 0, 1024);
    r.read("reconnect", o.reconnectSeconds, 0, 86400);
    r.read("coordinator-timeout", o.idleTimeoutSeconds, 2, 86400);
    r.read("max-batch", o.maxBatch, 0, 1 << 20);
    r.read("shard-port", o.shardPort, 1, 65535);
    r.read("shard-advertise", o.shardAdvertisedPort, 1, 65535);
    if (!r.error.isEmpty())
        return fail(makeError(ErrorCode::InvalidArgument, r.error));
    std::unique_ptr<EventLog> events;
    if (auto st = openEventLog(p, events); !st)
        return fail(st.error());
    if (events)
        o.events = [log = events.get()](const QJsonObject& e) { log->write(e); };
    return runWorker(o, [](const QString& line) { printErr(line); });
}

using Command = std::function<int(const QStringList&)>;

// The commands in the order the usage lists them.
const QList<std::pair<QString, Command>>& commandTable() {
    static const QList<std::pair<QString, Command>> table = {
        {QStringLiteral("devices"), cmdDevices},   {QStringLiteral("train"), cmdTrain},
        {QStringLiteral("sweep"), cmdSweep},       {QStringLiteral("export"), cmdExport},
        {QStringLiteral("generate"), cmdGenerate}, {QStringLiteral("hub"), cmdHub},
        {QStringLiteral("worker"), cmdWorker},     {QStringLiteral("identity"), cmdIdentity},
        {QStringLiteral("trust"), cmdTrust},       {QStringLiteral("peers"), cmdPeers},
        {QStringLiteral("serve"), cmdServe},       {QStringLiteral("pair"), cmdPair},
    };
    return table;
}

const Command* findCommand(const QString& name) {
    for (const auto& [n, c] : commandTable())
        if (n == name)
            return &c;
    return nullptr;
}

// `tandem help`: the usage; `tandem help COMMAND`: that command's help; `tandem help --all`:
// every command's help, one after another, for reading or searching in one place.
int cmdHelp(const QStringList& args) {
    if (args.isEmpty() || args.first() == QLatin1String("--help") ||
        args.first() == QLatin1String("-h")) {
        fprintf(stdout, "%s", qPrintable(topUsage()));
        return kOk;
    }
    if (args.size() > 1) {
        printErr(QStringLiteral("help: unexpected argument \"%1\" (use 'tandem help COMMAND' or "
                                "'tandem help --all')")
                     .arg(args.at(1)));
        return kUsage;
    }
    if (args.first() == QLatin1String("--all")) {
        bool first = true;
        for (const auto& [name, command] : commandTable()) {
            if (!first)
                fputs("\n", stdout);
            first = false;
            fflush(stdout);
            if (const int exit = command({QStringLiteral("--help")}); exit != kOk)
                return exit;
        }
        return kOk;
    }
    const Command* command = findCommand(args.first());
    if (!command) {
        printErr(QStringLiteral("help: unknown command \"%1\"").arg(args.first()));
        fprintf(stderr, "%s", qPrintable(topUsage()));
        return kUsage;
    }
    return (*command)({QStringLiteral("--help")});
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
    if (first == QLatin1String("--help") || first == QLatin1String("-h"))
        return cmdHelp({});
    if (first == QLatin1String("help"))
        return cmdHelp(args);
    const Command* command = findCommand(first);
    if (!command) {
        printErr(QStringLiteral("unknown command \"%1\"").arg(first));
        fprintf(stderr, "%s", qPrintable(topUsage()));
        return kUsage;
    }
    try {
        return (*command)(args);
    } catch (const std::exception& e) {
        // The engine turns foreseeable failures into values; this is the last line of defence.
        printErr(QStringLiteral("internal error: %1")
                     .arg(QString::fromUtf8(e.what()).section(QLatin1Char('\n'), 0, 0)));
        return kFailed;
    }
}

} // namespace tandem::cli
