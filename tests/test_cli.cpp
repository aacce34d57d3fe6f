// The tandem command line, run as a real process: training end to end, exports that PyTorch
// loads, resuming, and every kind of bad input ending in a one-line reason and exit code 1 or 2.

#include "engine/training.h"
#include "formats/tensorfile.h"
#include "model/modelsource.h"
#include "testpaths.h"
#include "testrows.h"
#include "testutil.h"
#include "torchpython.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <sys/stat.h>

using namespace tandem;

namespace {

struct Result {
    int exitCode = -1;
    bool crashed = false;
    QString out;
    QString err;
    QJsonObject summary() const {
        const QStringList lines = out.trimmed().split(QLatin1Char('\n'));
        return QJsonDocument::fromJson(lines.last().toUtf8()).object();
    }
};

// TANDEM_TEST_BINARY runs the tests against another build (an older one, to show that a
// regression test fails there).
QString tandemBinary() {
    const QString other = qEnvironmentVariable("TANDEM_TEST_BINARY");
    return other.isEmpty() ? testpaths::binary() : other;
}

Result runTandem(const QStringList& args, int timeoutMs = 600000) {
    QProcess p;
    p.start(tandemBinary(), args);
    Result r;
    if (!p.waitForStarted(60000)) {
        r.err = p.errorString();
        return r;
    }
    p.closeWriteChannel();
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("timed out");
        return r;
    }
    r.crashed = p.exitStatus() == QProcess::CrashExit;
    r.exitCode = p.exitCode();
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

using testutil::pythonHasTorch;

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QString fashionDir() {
    const QByteArray env = qgetenv("FASHION_MNIST_DIR");
    return env.isEmpty() ? QStringLiteral("/usr/share/datasets/fashion-mnist")
                         : QString::fromLocal8Bit(env);
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void versionAndUsage();
    void everyCommandsHelpFitsAndMatchesItsOptions();
    void devicesJson();
    void badInput_data();
    void badInput();
    void trainMlpEndToEnd();
    void pythonLoadsExports();
    void exportCommandMatchesRunExports();
    void resumeFollowsTheSameTrajectory_data();
    void resumeFollowsTheSameTrajectory();
    void resumeRefusesOtherData();
    void configFile();
    void userTorchScriptModelWithBatchNorm();
    void onlyRegularFilesAreRead();
    void runDescriptionAndOptionsShareTheirRanges();
    void tooManyThreadsAreCapped();
    void pathsThatAreNotTextAreRefused();
    void metricsReachTheFileAsTheyHappen();
    void typedEvents();
    void fullDiskSaysSoAndKeepsTheCheckpoint();
    void damagedTrustStoreIsNamed();

private:
    QTemporaryDir m_tmp;
    QString m_run; // the end-to-end run's output folder
    QJsonObject m_summary;
};

void TestCli::initTestCase() {
    QVERIFY(m_tmp.isValid());
    if (!QFileInfo::exists(fashionDir()))
        QSKIP("Fashion-MNIST is not installed (Debian package dataset-fashion-mnist); the README's "
              "test command installs it");
    testutil::writeIdxDataset(m_tmp.filePath(QStringLiteral("tiny")), 200, 50, true);
}

void TestCli::versionAndUsage() {
    Result r = runTandem({QStringLiteral("--version")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.startsWith(QStringLiteral("tandem ")), qPrintable(r.out));
    r = runTandem({QStringLiteral("--help")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains(QStringLiteral("train")));
    // With no subcommand Tandem opens its window; without a display it says what to run.
    QProcess headless;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* v : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
        env.remove(QLatin1String(v));
    headless.setProcessEnvironment(env);
    headless.start(testpaths::binary(), QStringList{});
    QVERIFY(headless.waitForFinished(60000));
    QCOMPARE(headless.exitCode(), 2);
    QVERIFY(QString::fromUtf8(headless.readAllStandardError())
                .contains(QStringLiteral("tandem serve --headless")));
    // `tandem help COMMAND` is `tandem COMMAND --help` (everyCommandsHelp... checks that one).
    r = runTandem({QStringLiteral("help"), QStringLiteral("train")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.startsWith(QStringLiteral("Usage: tandem train")));
    QVERIFY(r.out.contains(QStringLiteral("--limit-train")));
    r = runTandem({QStringLiteral("help"), QStringLiteral("fly")});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(QStringLiteral("unknown command \"fly\"")), qPrintable(r.err));
}

// `tandem help --all` prints the help of every command the usage lists, and gui's its own: 80
// columns without a terminal, UTF-8 without mojibake, the command named in its usage line.
// Every option it names is one the command takes, and `tandem COMMAND --help` prints the same;
// train's names every numeric and named field of a run description (the engine's table), every
// built-in model, and every dataset kind the reader knows (its own list, from the refusal of an
// unknown one).
void TestCli::everyCommandsHelpFitsAndMatchesItsOptions() {
    TANDEM_LONG_RUN();
    const Result top = runTandem({QStringLiteral("--help")});
    QStringList commands;
    const QString list =
        top.out.section(QStringLiteral("Commands:\n"), 1).section(QStringLiteral("\n\n"), 0, 0);
    for (const QString& line : list.split(QLatin1Char('\n')))
        if (line.startsWith(QLatin1String("  ")) && !line.startsWith(QLatin1String("   ")))
            commands << line.trimmed().section(QLatin1Char(' '), 0, 0);
    QVERIFY2(commands.size() >= 11, qPrintable(commands.join(QLatin1Char(' '))));
    QHash<QString, QString> helps;
    const Result all = runTandem({QStringLiteral("help"), QStringLiteral("--all")});
    QVERIFY2(all.exitCode == 0, qPrintable(all.err));
    const QRegularExpression usageLine(QStringLiteral("^Usage: tandem ([a-z]+)"),
                                       QRegularExpression::MultilineOption);
    QStringList inOrder;
    for (auto it = usageLine.globalMatch(all.out); it.hasNext();) {
        const auto m = it.next();
        const qsizetype end =
            all.out.indexOf(QStringLiteral("\nUsage: tandem "), m.capturedStart());
        inOrder << m.captured(1);
        helps[m.captured(1)] =
            all.out.mid(m.capturedStart(), end < 0 ? -1 : end - m.capturedStart());
    }
    QCOMPARE(inOrder, commands);
    const Result gui = runTandem({QStringLiteral("gui"), QStringLiteral("--help")});
    QVERIFY2(gui.exitCode == 0 && gui.out.contains(QStringLiteral("[gui]")), qPrintable(gui.out));
    helps[QStringLiteral("gui")] = gui.out;
    const QRegularExpression optionLine(QStringLiteral("^  (?:-\\w, )?--([a-z0-9-]+)( \\S+)?$"));
    for (const QString& command : commands + QStringList{QStringLiteral("gui")}) {
        const QString help = helps.value(command);
        QStringList named{command}; // every option the help names, given at once
        for (const QString& line : help.split(QLatin1Char('\n'))) {
            QVERIFY2(line.size() <= 80, qPrintable(command + QStringLiteral(": ") + line));
            QVERIFY2(!line.contains(QChar::ReplacementCharacter) &&
                         !line.contains(QStringLiteral("\u00e2\u20ac")) &&
                         !line.contains(QStringLiteral("\u00e2\u0080")),
                     qPrintable(command + QStringLiteral(": ") + line));
            const auto m = optionLine.match(line);
            if (m.hasMatch())
                named << QStringLiteral("--") + m.captured(1) +
                             (m.capturedLength(2) > 0 ? QStringLiteral("=1") : QString());
        }
        QVERIFY2(named.size() > 1, qPrintable(help));
        // All known to the parser: an option it does not take fails the parse before --help.
        if (command == QLatin1String("gui"))
            continue;
        const Result known = runTandem(named << QStringLiteral("--help"));
        QVERIFY2(known.exitCode == 0,
                 qPrintable(named.join(QLatin1Char(' ')) + QStringLiteral(": ") + known.err));
        QCOMPARE(known.out, help);
    }
    const QString train = helps.value(QStringLiteral("train"));
    for (const RunField& f : runFields())
        QVERIFY2(train.contains(QStringLiteral("--") + QLatin1String(f.option)), f.option);
    for (const QString& key : runChoiceKeys())
        QVERIFY2(train.contains(QStringLiteral("--") +
                                QString(key).replace(QLatin1Char('_'), QLatin1Char('-'))),
                 qPrintable(key));
    for (const QString& model : zooModelNames())
        QVERIFY2(train.contains(model), qPrintable(model));
    const Result unknown = runTandem({QStringLiteral("train"), QStringLiteral("--data=nothing:x")});
    const QString kinds = unknown.err.section(QStringLiteral("; use "), 1);
    QVERIFY2(!kinds.isEmpty(), qPrintable(unknown.err));
    int named = 0;
    for (const QString& k : kinds.split(QRegularExpression(QStringLiteral(",\\s*|\\s+or\\s+")))) {
        const QString kind = k.trimmed();
        if (kind.isEmpty())
            continue;
        ++named;
        QVERIFY2(train.contains(kind), qPrintable(kind));
    }
    QVERIFY(named >= 10);
}

void TestCli::devicesJson() {
    Result r = runTandem({QStringLiteral("devices"), QStringLiteral("--json")});
    QCOMPARE(r.exitCode, 0);
    const QJsonDocument doc = QJsonDocument::fromJson(r.out.toUtf8());
    QVERIFY2(doc.isArray(), qPrintable(r.out));
    const QJsonArray a = doc.array();
    QVERIFY(!a.isEmpty());
    for (const QJsonValue& v : a) {
        const QJsonObject o = v.toObject();
        const QString kind = o.value(QStringLiteral("kind")).toString();
        QVERIFY(kind == QLatin1String("cuda") || kind == QLatin1String("mps") ||
                kind == QLatin1String("cpu"));
        QVERIFY(!o.value(QStringLiteral("name")).toString().isEmpty());
        QVERIFY(o.value(QStringLiteral("memory_bytes")).toDouble() > 0);
        QVERIFY(o.value(QStringLiteral("index")).isDouble());
    }
    QCOMPARE(a.last().toObject().value(QStringLiteral("kind")).toString(), QStringLiteral("cpu"));
    // No GPU: stdout stays a JSON array, and stderr says what was not found and why.
    if (a.first().toObject().value(QStringLiteral("kind")).toString() != QLatin1String("cuda"))
        QVERIFY2(r.err.contains(QLatin1String("no CUDA device")), qPrintable(r.err));
    r = runTandem({QStringLiteral("devices")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains(QStringLiteral("LibTorch")));
}

void TestCli::badInput_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("needle");
    const QString tiny = QStringLiteral("--data=mnist:") + m_tmp.filePath(QStringLiteral("tiny"));
    const QString out = QStringLiteral("--out=") + m_tmp.filePath(QStringLiteral("bad-out"));
    QTest::newRow("unknown command")
        << QStringList{QStringLiteral("fly")} << 2 << QStringLiteral("unknown command");
    QTest::newRow("unknown option")
        << QStringList{QStringLiteral("train"), QStringLiteral("--bogus")} << 2
        << QStringLiteral("bogus");
    QTest::newRow("epochs not a number")
        << QStringList{QStringLiteral("train"), QStringLiteral("--epochs"), QStringLiteral("abc")}
        << 2 << QStringLiteral("--epochs: \"abc\" is not a whole number");
    QTest::newRow("batch zero") << QStringList{QStringLiteral("train"), QStringLiteral("--batch=0")}
                                << 2 << QStringLiteral("--batch");
    QTest::newRow("negative lr") << QStringList{QStringLiteral("train"), QStringLiteral("--lr=-1")}
                                 << 2 << QStringLiteral("--lr");
    QTest::newRow("optimizer") << QStringList{QStringLiteral("train"),
                                              QStringLiteral("--optimizer=lion")}
                               << 2 << QStringLiteral("unknown optimizer \"lion\"");
    QTest::newRow("schedule") << QStringList{QStringLiteral("train"),
                                             QStringLiteral("--schedule=step")}
                              << 2 << QStringLiteral("unknown schedule");
    QTest::newRow("unknown model")
        << QStringList{QStringLiteral("train"), QStringLiteral("--model=gpt5"), tiny, out} << 1
        << QStringLiteral("model file gpt5 does not exist");
    QTest::newRow("model not torchscript")
        << QStringList{QStringLiteral("train"), QStringLiteral("--model=") + testpaths::binary(),
                       tiny, out}
        << 1 << QStringLiteral("not a TorchScript file");
    QTest::newRow("model does not fit data")
        << QStringList{QStringLiteral("train"), QStringLiteral("--model=resnet8"), tiny, out} << 1
        << QStringLiteral("cannot take inputs of shape [2, 1, 28, 28]");
    QTest::newRow("missing dataset")
        << QStringList{QStringLiteral("train"), QStringLiteral("--data=mnist:/nonexistent/dir"),
                       out}
        << 1 << QStringLiteral("/nonexistent/dir");
    QTest::newRow("unknown dataset")
        << QStringList{QStringLiteral("train"), QStringLiteral("--data=imagenet"), out} << 2
        << QStringLiteral("unknown dataset");
    QTest::newRow("precision") << QStringList{QStringLiteral("train"),
                                              QStringLiteral("--precision=fp8")}
                               << 2 << QStringLiteral("unknown precision \"fp8\"");
    QTest::newRow("device not here")
        << QStringList{QStringLiteral("train"), QStringLiteral("--device=cuda:9"), tiny, out} << 2
        << QStringLiteral("no device cuda:9 on this machine");
    QTest::newRow("device unknown")
        << QStringList{QStringLiteral("worker"), QStringLiteral("--connect=127.0.0.1:9"),
                       QStringLiteral("--device=tpu")}
        << 2 << QStringLiteral("unknown device \"tpu\"");
    QTest::newRow("device and devices")
        << QStringList{QStringLiteral("worker"), QStringLiteral("--connect=127.0.0.1:9"),
                       QStringLiteral("--device=cpu"), QStringLiteral("--devices=all")}
        << 2 << QStringLiteral("not both");
    QTest::newRow("shard port") << QStringList{QStringLiteral("worker"),
                                               QStringLiteral("--connect=127.0.0.1:9"),
                                               QStringLiteral("--shard-port=70000")}
                                << 2 << QStringLiteral("--shard-port: 70000 is outside 1..65535");
    QTest::newRow("serve devices") << QStringList{QStringLiteral("serve"), QStringLiteral("--home"),
                                                  m_tmp.filePath(QStringLiteral("serve-home")),
                                                  QStringLiteral("--devices=cuda:7")}
                                   << 2 << QStringLiteral("--devices: there is no device cuda:7");
    QTest::newRow("export needs args")
        << QStringList{QStringLiteral("export")} << 2 << QStringLiteral("--checkpoint");
    QTest::newRow("export bad format")
        << QStringList{QStringLiteral("export"), QStringLiteral("--checkpoint=x"),
                       QStringLiteral("--out=y"), QStringLiteral("--format=onnx")}
        << 2 << QStringLiteral("torchscript, safetensors, hf, merged, peft or gguf");
    QTest::newRow("export missing checkpoint")
        << QStringList{QStringLiteral("export"), QStringLiteral("--checkpoint=/nonexistent.tandem"),
                       QStringLiteral("--out=y"), QStringLiteral("--format=safetensors")}
        << 1 << QStringLiteral("no such file");
    QTest::newRow("resume junk") << QStringList{QStringLiteral("train"),
                                                QStringLiteral("--resume=") + testpaths::binary()}
                                 << 1 << QStringLiteral("not a Tandem checkpoint");
}

void TestCli::badInput() {
    TANDEM_LONG_RUN();
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, needle);
    const Result r = runTandem(args);
    QVERIFY2(!r.crashed, qPrintable(r.err));
    QCOMPARE(r.exitCode, code);
    QVERIFY2(r.err.contains(needle), qPrintable(r.err));
    // One line of reason (usage text may follow an unknown command).
    QVERIFY2(r.err.startsWith(QStringLiteral("tandem: ")), qPrintable(r.err));
}

void TestCli::trainMlpEndToEnd() {
    m_run = m_tmp.filePath(QStringLiteral("e2e"));
    const Result r =
        runTandem({QStringLiteral("train"), QStringLiteral("--model=mlp"),
                   QStringLiteral("--data=fashion-mnist"), QStringLiteral("--epochs=1"),
                   QStringLiteral("--batch=64"), QStringLiteral("--optimizer=adam"),
                   QStringLiteral("--lr=0.001"), QStringLiteral("--limit-train=12000"),
                   QStringLiteral("--limit-test=2000"), QStringLiteral("--threads=2"),
                   QStringLiteral("--seed=3"), QStringLiteral("--out=") + m_run});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    m_summary = r.summary();
    const double acc = m_summary.value(QStringLiteral("test_accuracy")).toDouble();
    QVERIFY2(acc >= 0.78, qPrintable(r.out)); // an MLP on 12k Fashion-MNIST images, one epoch
    QCOMPARE(m_summary.value(QStringLiteral("steps")).toInt(), 188);
    QCOMPARE(m_summary.value(QStringLiteral("epochs")).toInt(), 1);
    QVERIFY(m_summary.value(QStringLiteral("samples_per_s")).toDouble() > 0);
    QVERIFY(m_summary.value(QStringLiteral("train_loss")).toDouble() < 1.0);
    QVERIFY(m_summary.value(QStringLiteral("finished")).toBool());
    for (const char* f : {"model.pt", "model.safetensors", "checkpoint.tandem", "metrics.jsonl"})
        QVERIFY2(QFileInfo::exists(QDir(m_run).filePath(QLatin1String(f))), f);

    // metrics.jsonl: one line per step with per-worker timing, then the epoch, then the summary.
    const QList<QByteArray> lines =
        readAll(QDir(m_run).filePath(QStringLiteral("metrics.jsonl"))).trimmed().split('\n');
    QCOMPARE(lines.size(), 188 + 2);
    const QJsonObject step = QJsonDocument::fromJson(lines[10]).object();
    QCOMPARE(step.value(QStringLiteral("type")).toString(), QStringLiteral("step"));
    QCOMPARE(step.value(QStringLiteral("step")).toInt(), 11);
    const QJsonObject w = step.value(QStringLiteral("workers")).toArray().first().toObject();
    QCOMPARE(w.value(QStringLiteral("samples")).toInt(), 64);
    QVERIFY(w.value(QStringLiteral("compute_ms")).toDouble() > 0);
    QVERIFY(w.contains(QStringLiteral("wait_ms")));
    const QJsonObject epoch = QJsonDocument::fromJson(lines[188]).object();
    QCOMPARE(epoch.value(QStringLiteral("type")).toString(), QStringLiteral("epoch"));
    QCOMPARE(epoch.value(QStringLiteral("test_accuracy")).toDouble(), acc);
}

void TestCli::pythonLoadsExports() {
    if (m_run.isEmpty())
        QSKIP("needs the end-to-end run");
    if (!pythonHasTorch())
        QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed; cannot check that "
              "PyTorch loads the exports");
    QString printed, error;
    QVERIFY2(
        testutil::runReference(
            {testpaths::pythonDir() + QStringLiteral("/check_export.py"), QStringLiteral("--out"),
             m_run, QStringLiteral("--model"), QStringLiteral("mlp"), QStringLiteral("--data-dir"),
             fashionDir(), QStringLiteral("--limit-test"), QStringLiteral("2000"),
             QStringLiteral("--expect-accuracy"),
             QString::number(m_summary.value(QStringLiteral("test_accuracy")).toDouble(), 'g', 10),
             QStringLiteral("--tolerance"), QStringLiteral("0.005")},
            &printed, &error, QByteArray(), 300000),
        qPrintable(printed + error));
    const QByteArray out = printed.toUtf8();
    const QJsonObject o = QJsonDocument::fromJson(out.trimmed().split('\n').last()).object();
    QVERIFY(o.value(QStringLiteral("parameter_names_match")).toBool());
}

void TestCli::exportCommandMatchesRunExports() {
    if (m_run.isEmpty())
        QSKIP("needs the end-to-end run");
    const QString ckpt = QDir(m_run).filePath(QStringLiteral("checkpoint.tandem"));
    const QString st = m_tmp.filePath(QStringLiteral("exported.safetensors"));
    const QString ts = m_tmp.filePath(QStringLiteral("exported.pt"));
    Result r = runTandem({QStringLiteral("export"), QStringLiteral("--checkpoint"), ckpt,
                          QStringLiteral("--format"), QStringLiteral("safetensors"),
                          QStringLiteral("--out"), st});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QCOMPARE(readAll(st), readAll(QDir(m_run).filePath(QStringLiteral("model.safetensors"))));
    r = runTandem({QStringLiteral("export"), QStringLiteral("--checkpoint"), ckpt,
                   QStringLiteral("--format"), QStringLiteral("torchscript"),
                   QStringLiteral("--out"), ts});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY(readAll(ts).startsWith("PK")); // a TorchScript archive is a zip

    // A damaged checkpoint is refused with the reason, and nothing is written.
    QByteArray bytes = readAll(ckpt);
    bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x10);
    const QString damaged = m_tmp.filePath(QStringLiteral("damaged.tandem"));
    QVERIFY(testutil::writeFile(damaged, bytes));
    const QString never = m_tmp.filePath(QStringLiteral("never.safetensors"));
    r = runTandem({QStringLiteral("export"), QStringLiteral("--checkpoint"), damaged,
                   QStringLiteral("--format"), QStringLiteral("safetensors"),
                   QStringLiteral("--out"), never});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains(QStringLiteral("checksum mismatch")), qPrintable(r.err));
    QVERIFY(!QFileInfo::exists(never));
}

void TestCli::resumeFollowsTheSameTrajectory_data() {
    QTest::addColumn<QString>("optimizer");
    QTest::newRow("adamw") << QStringLiteral("adamw");
    // Its state is 8-bit codes and block scales: they come back as they were.
    QTest::newRow("adamw8bit") << QStringLiteral("adamw8bit");
}

void TestCli::resumeFollowsTheSameTrajectory() {
    QFETCH(QString, optimizer);
    // 2 epochs of 20 steps with warm-up and cosine decay; stop mid-epoch at step 27, resume.
    const QStringList common{QStringLiteral("train"),
                             QStringLiteral("--model=mlp"),
                             QStringLiteral("--data=fashion-mnist"),
                             QStringLiteral("--limit-train=1280"),
                             QStringLiteral("--limit-test=500"),
                             QStringLiteral("--epochs=2"),
                             QStringLiteral("--batch=64"),
                             QStringLiteral("--optimizer=") + optimizer,
                             QStringLiteral("--lr=0.002"),
                             QStringLiteral("--schedule=cosine"),
                             QStringLiteral("--warmup-steps=5"),
                             QStringLiteral("--threads=1"),
                             QStringLiteral("--seed=11")};
    const QString whole = m_tmp.filePath(QStringLiteral("whole-") + optimizer),
                  parts = m_tmp.filePath(QStringLiteral("parts-") + optimizer);
    Result a = runTandem(common + QStringList{QStringLiteral("--out=") + whole});
    QVERIFY2(a.exitCode == 0, qPrintable(a.err));
    Result b = runTandem(
        common + QStringList{QStringLiteral("--out=") + parts, QStringLiteral("--max-steps=27")});
    QVERIFY2(b.exitCode == 0, qPrintable(b.err));
    // A run that reaches its step limit has finished: it reports its test figures.
    QCOMPARE(b.summary().value(QStringLiteral("finished")).toBool(), true);
    QCOMPARE(b.summary().value(QStringLiteral("steps")).toInt(), 27);
    QVERIFY(b.summary().value(QStringLiteral("test_accuracy")).isDouble());
    QVERIFY(b.summary().value(QStringLiteral("test_loss")).isDouble());
    Result c = runTandem({QStringLiteral("train"), QStringLiteral("--resume"),
                          QDir(parts).filePath(QStringLiteral("checkpoint.tandem"))});
    QVERIFY2(c.exitCode == 0, qPrintable(c.err));
    QVERIFY(c.err.contains(QStringLiteral("resuming at step 27 of 40")));
    const QJsonObject sa = a.summary(), sc = c.summary();
    QCOMPARE(sc.value(QStringLiteral("steps")).toInt(), 40);
    QCOMPARE(sc.value(QStringLiteral("samples")).toInt(), 13 * 64 - (64 * 20 - 1280));
    QVERIFY(sc.value(QStringLiteral("finished")).toBool());
    // The same weights, bit for bit, and so the same figures.
    QCOMPARE(readAll(QDir(parts).filePath(QStringLiteral("model.safetensors"))),
             readAll(QDir(whole).filePath(QStringLiteral("model.safetensors"))));
    QCOMPARE(sc.value(QStringLiteral("test_accuracy")).toDouble(),
             sa.value(QStringLiteral("test_accuracy")).toDouble());
    QCOMPARE(sc.value(QStringLiteral("train_loss")).toDouble(),
             sa.value(QStringLiteral("train_loss")).toDouble());
    // The resumed run appended to the same metrics log: 40 steps, 2 epochs and the evaluation
    // at the limit, 2 summaries.
    const QList<QByteArray> lines =
        readAll(QDir(parts).filePath(QStringLiteral("metrics.jsonl"))).trimmed().split('\n');
    QCOMPARE(lines.size(), 40 + 3 + 2);
}

void TestCli::resumeRefusesOtherData() {
    const QString out = m_tmp.filePath(QStringLiteral("other"));
    const QString tiny = m_tmp.filePath(QStringLiteral("tiny"));
    Result a = runTandem({QStringLiteral("train"), QStringLiteral("--model=mlp"),
                          QStringLiteral("--data=mnist:") + tiny, QStringLiteral("--max-steps=2"),
                          QStringLiteral("--out=") + out});
    QVERIFY2(a.exitCode == 0, qPrintable(a.err));
    // A run that reaches its step limit has finished: it evaluates as any finished run does.
    const QJsonObject sa = a.summary();
    QVERIFY2(sa.value(QStringLiteral("finished")).toBool(), qPrintable(a.out));
    QVERIFY2(sa.value(QStringLiteral("test_accuracy")).isDouble() &&
                 sa.value(QStringLiteral("test_loss")).isDouble(),
             qPrintable(a.out));
    testutil::writeIdxDataset(tiny, 210, 50, true); // the data changes under the run
    Result b = runTandem({QStringLiteral("train"), QStringLiteral("--resume"),
                          QDir(out).filePath(QStringLiteral("checkpoint.tandem"))});
    QCOMPARE(b.exitCode, 1);
    QVERIFY2(b.err.contains(QStringLiteral("different data")), qPrintable(b.err));
    testutil::writeIdxDataset(tiny, 200, 50, true);
    Result c = runTandem({QStringLiteral("train"), QStringLiteral("--resume"),
                          QDir(out).filePath(QStringLiteral("checkpoint.tandem")),
                          QStringLiteral("--model=mnist-cnn")});
    QCOMPARE(c.exitCode, 2);
}

void TestCli::configFile() {
    const QString cfg = m_tmp.filePath(QStringLiteral("run.json"));
    const QString out = m_tmp.filePath(QStringLiteral("cfg-out"));
    QJsonObject o{
        {QStringLiteral("model"), QStringLiteral("mlp")},
        {QStringLiteral("data"), QStringLiteral("mnist:") + m_tmp.filePath(QStringLiteral("tiny"))},
        {QStringLiteral("epochs"), 2},
        {QStringLiteral("batch"), 50},
        {QStringLiteral("optimizer"), QStringLiteral("sgd")},
        {QStringLiteral("lr"), 0.05},
        {QStringLiteral("out"), out}};
    QVERIFY(testutil::writeFile(cfg, QJsonDocument(o).toJson()));
    Result r = runTandem(
        {QStringLiteral("train"), QStringLiteral("--config"), cfg, QStringLiteral("--epochs=3")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QCOMPARE(r.summary().value(QStringLiteral("steps")).toInt(),
             3 * 4); // the option wins over the file
    QCOMPARE(r.summary().value(QStringLiteral("epochs")).toInt(), 3);
    // The synthetic images encode their label; even SGD learns them in a few steps.
    QVERIFY(r.summary().value(QStringLiteral("test_accuracy")).toDouble() > 0.5);

    o.insert(QStringLiteral("learning_rate"), 0.1);
    QVERIFY(testutil::writeFile(cfg, QJsonDocument(o).toJson()));
    r = runTandem({QStringLiteral("train"), QStringLiteral("--config"), cfg});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains(QStringLiteral("unknown key \"learning_rate\"")), qPrintable(r.err));
    QVERIFY(testutil::writeFile(cfg, "{ not json"));
    r = runTandem({QStringLiteral("train"), QStringLiteral("--config"), cfg});
    QCOMPARE(r.exitCode, 2);
}

void TestCli::userTorchScriptModelWithBatchNorm() {
    if (!pythonHasTorch())
        QSKIP("Debian's /usr/bin/python3 with python3-torch is not installed; cannot script a "
              "user model");
    const QString model = m_tmp.filePath(QStringLiteral("user.pt"));
    QString printed, error;
    QVERIFY2(testutil::runReference(
                 {testpaths::pythonDir() + QStringLiteral("/make_user_model.py"), model}, &printed,
                 &error, QByteArray(), 300000),
             qPrintable(error));
    const QString out = m_tmp.filePath(QStringLiteral("user-run"));
    Result r = runTandem({QStringLiteral("train"), QStringLiteral("--model"), model,
                          QStringLiteral("--data=mnist:") + m_tmp.filePath(QStringLiteral("tiny")),
                          QStringLiteral("--epochs=2"), QStringLiteral("--batch=20"),
                          QStringLiteral("--out=") + out});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QCOMPARE(r.summary().value(QStringLiteral("steps")).toInt(), 20);
    QVERIFY(r.summary().value(QStringLiteral("test_accuracy")).toDouble() > 0.5);
    // The BatchNorm statistics were updated by training and saved with the weights.
    auto st = parseSafetensors(readAll(QDir(out).filePath(QStringLiteral("model.safetensors"))),
                               QStringLiteral("st"));
    QVERIFY(st.ok());
    bool sawMean = false, sawCount = false;
    for (const TensorRecord& t : *st) {
        if (t.name == QLatin1String("bn.running_mean")) {
            const auto* v = reinterpret_cast<const float*>(t.data.constData());
            double sum = 0;
            for (int i = 0; i < 8; ++i)
                sum += std::abs(v[i]);
            QVERIFY(sum > 0);
            sawMean = true;
        }
        if (t.name == QLatin1String("bn.num_batches_tracked")) {
            QCOMPARE(*reinterpret_cast<const qint64*>(t.data.constData()), 20);
            sawCount = true;
        }
    }
    QVERIFY(sawMean && sawCount);
    // The checkpoint carries the user's model itself, so export works without the original file.
    QVERIFY(QFile::remove(model));
    r = runTandem({QStringLiteral("export"), QStringLiteral("--checkpoint"),
                   QDir(out).filePath(QStringLiteral("checkpoint.tandem")),
                   QStringLiteral("--format=torchscript"), QStringLiteral("--out"),
                   m_tmp.filePath(QStringLiteral("user-export.pt"))});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
}

void TestCli::onlyRegularFilesAreRead() {
    // A FIFO used to block forever; /dev/zero (size 0, endless) was read until memory ran out.
    const QString fifo = m_tmp.filePath(QStringLiteral("fifo.csv"));
    QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
    const QString out = QStringLiteral("--out=") + m_tmp.filePath(QStringLiteral("fifo-out"));
    const QString tiny = QStringLiteral("--data=mnist:") + m_tmp.filePath(QStringLiteral("tiny"));
    const QList<QStringList> cases = {
        {QStringLiteral("train"), QStringLiteral("--model=mlp"),
         QStringLiteral("--data=csv:") + fifo, out},
        {QStringLiteral("train"), QStringLiteral("--model=") + fifo, tiny, out},
        {QStringLiteral("train"), QStringLiteral("--config=/dev/zero")},
        {QStringLiteral("train"), QStringLiteral("--resume=/dev/zero")},
        {QStringLiteral("train"), QStringLiteral("--model=mlp"),
         QStringLiteral("--data=csv:/dev/zero"), out},
        {QStringLiteral("export"), QStringLiteral("--checkpoint=/dev/zero"),
         QStringLiteral("--format=torchscript"),
         QStringLiteral("--out=") + m_tmp.filePath(QStringLiteral("zero.pt"))},
    };
    for (const QStringList& args : cases) {
        const Result r = runTandem(args, 120000);
        QVERIFY2(!r.crashed && r.exitCode > 0, qPrintable(args.join(QLatin1Char(' ')) + r.err));
        QVERIFY2(r.err.contains(QStringLiteral("not a regular file")),
                 qPrintable(args.join(QLatin1Char(' ')) + QStringLiteral(": ") + r.err));
    }
}

void TestCli::runDescriptionAndOptionsShareTheirRanges() {
    const QString cfg = m_tmp.filePath(QStringLiteral("ranges.json"));
    // A timeout in seconds that wraps to 704 ms once made milliseconds in an int.
    QVERIFY(testutil::writeFile(cfg, R"({"model": "mlp", "worker_timeout": 4294968})"));
    Result json = runTandem({QStringLiteral("train"), QStringLiteral("--config"), cfg});
    QCOMPARE(json.exitCode, 2);
    Result cli = runTandem({QStringLiteral("train"), QStringLiteral("--worker-timeout=4294968")});
    QCOMPARE(cli.exitCode, 2);
    const QString range = QStringLiteral("must be between 1 and 86400 (got 4294968)");
    QVERIFY2(json.err.contains(QStringLiteral("\"worker_timeout\" ") + range),
             qPrintable(json.err));
    QVERIFY2(cli.err.contains(QStringLiteral("--worker-timeout ") + range), qPrintable(cli.err));
    // 2^32 + 1 epochs is refused as what it is, not as -2147483648.
    QVERIFY(testutil::writeFile(cfg, R"({"model": "mlp", "epochs": 4294967297})"));
    json = runTandem({QStringLiteral("train"), QStringLiteral("--config"), cfg});
    QCOMPARE(json.exitCode, 2);
    QVERIFY2(json.err.contains(QStringLiteral("4294967297")) &&
                 !json.err.contains(QStringLiteral("-2147483648")),
             qPrintable(json.err));
}

void TestCli::tooManyThreadsAreCapped() {
    const Result r =
        runTandem({QStringLiteral("train"), QStringLiteral("--model=mlp"),
                   QStringLiteral("--data=mnist:") + m_tmp.filePath(QStringLiteral("tiny")),
                   QStringLiteral("--threads=1024"), QStringLiteral("--max-steps=2"),
                   QStringLiteral("--out=") + m_tmp.filePath(QStringLiteral("threads"))});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const int cores = QThread::idealThreadCount();
    QVERIFY2(r.err.contains(QStringLiteral("1024 threads is more than 4 per core")) &&
                 r.err.contains(QStringLiteral("using %1").arg(cores)) &&
                 r.err.contains(QStringLiteral("%1 thread(s)").arg(cores)),
             qPrintable(r.err));
}

void TestCli::pathsThatAreNotTextAreRefused() {
    // Bytes that are not UTF-8 cannot pass through Qt's argument list unchanged (they become
    // U+FFFD, a different folder): refused, and nothing is written anywhere.
    QDir base(m_tmp.filePath(QStringLiteral("latin1")));
    QVERIFY(base.mkpath(QStringLiteral(".")));
    for (const char* option : {"--out", "--home"}) {
        QProcess p;
        p.setProgram(QStringLiteral("/bin/sh"));
        p.setArguments(
            {QStringLiteral("-c"),
             QStringLiteral("exec \"$0\" train --model=mlp --data=mnist:\"$1\" --max-steps=1 "
                            "%1 \"$2/$(printf 'r\\351sultats')\"")
                 .arg(QLatin1String(option)),
             tandemBinary(), m_tmp.filePath(QStringLiteral("tiny")), base.path()});
        p.start();
        QVERIFY(p.waitForFinished(120000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QCOMPARE(p.exitCode(), 2);
        QVERIFY2(err.contains(QStringLiteral("is not valid text")), qPrintable(err));
        QVERIFY2(
            base.entryList(QDir::AllEntries | QDir::NoDotAndDotDot).isEmpty(),
            qPrintable(
                base.entryList(QDir::AllEntries | QDir::NoDotAndDotDot).join(QLatin1Char(','))));
    }
}

void TestCli::typedEvents() {
    // --events FILE: every start, step, evaluation, checkpoint and the end as JSON lines.
    const QString tiny = QStringLiteral("--data=mnist:") + m_tmp.filePath(QStringLiteral("tiny"));
    const QString events = m_tmp.filePath(QStringLiteral("events.jsonl"));
    Result r = runTandem({QStringLiteral("train"), QStringLiteral("--model=mlp"), tiny,
                          QStringLiteral("--batch=50"), QStringLiteral("--threads=1"),
                          QStringLiteral("--checkpoint-every=2"), QStringLiteral("--events"),
                          events, QStringLiteral("--out=") + m_tmp.filePath(QStringLiteral("ev"))});
    QCOMPARE(r.exitCode, 0);
    QStringList kinds;
    QJsonObject last;
    for (const QByteArray& l : readAll(events).trimmed().split('\n')) {
        last = QJsonDocument::fromJson(l).object();
        kinds << last.value(QStringLiteral("event")).toString();
    }
    QCOMPARE(kinds.first(), QStringLiteral("started"));
    QCOMPARE(kinds.count(QStringLiteral("step")), 4); // 200 samples, batch 50
    QCOMPARE(kinds.count(QStringLiteral("evaluated")), 1);
    QVERIFY(kinds.count(QStringLiteral("checkpoint_written")) >= 2);
    QCOMPARE(kinds.last(), QStringLiteral("finished"));
    QCOMPARE(last.value(QStringLiteral("steps")).toInt(), 4);
    QVERIFY(last.value(QStringLiteral("test_accuracy")).isDouble());

    // "-": on stdout, before the summary, which stays the last line; a failure says its code.
    r = runTandem({QStringLiteral("train"), QStringLiteral("--model=resnet8"), tiny,
                   QStringLiteral("--events=-"),
                   QStringLiteral("--out=") + m_tmp.filePath(QStringLiteral("ev-bad"))});
    QCOMPARE(r.exitCode, 1);
    const QJsonObject failed =
        QJsonDocument::fromJson(r.out.trimmed().split(QLatin1Char('\n')).last().toUtf8()).object();
    QCOMPARE(failed.value(QStringLiteral("event")).toString(), QStringLiteral("failed"));
    QCOMPARE(failed.value(QStringLiteral("code")).toString(), QStringLiteral("incompatible"));
    QCOMPARE(failed.value(QStringLiteral("subject")).toString(), QStringLiteral("model"));
    // A run that stops at its step limit writes its checkpoint once, with its test figures: the
    // run's end does not write the same step again.
    r = runTandem({QStringLiteral("train"), QStringLiteral("--model=mlp"), tiny,
                   QStringLiteral("--threads=1"), QStringLiteral("--events=-"),
                   QStringLiteral("--max-steps=3"),
                   QStringLiteral("--out=") + m_tmp.filePath(QStringLiteral("ev-out"))});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(!r.summary().contains(QStringLiteral("event")));
    QCOMPARE(r.summary().value(QStringLiteral("steps")).toInt(), 3);
    QList<qint64> written;
    for (const QString& l : r.out.split(QLatin1Char('\n'))) {
        const QJsonObject o = QJsonDocument::fromJson(l.toUtf8()).object();
        if (o.value(QStringLiteral("event")).toString() == QLatin1String("checkpoint_written"))
            written << o.value(QStringLiteral("step")).toInteger();
    }
    QCOMPARE(written, QList<qint64>{3});
    QCOMPARE(QJsonDocument::fromJson(r.out.section(QLatin1Char('\n'), 0, 0).toUtf8())
                 .object()
                 .value(QStringLiteral("event"))
                 .toString(),
             QStringLiteral("started"));
}

void TestCli::metricsReachTheFileAsTheyHappen() {
    // A run long enough that no epoch ends (which used to be when the log was flushed): the
    // lines of the steps done so far are in metrics.jsonl when the process is killed.
    const QString out = m_tmp.filePath(QStringLiteral("killed"));
    QProcess p;
    p.start(tandemBinary(), {QStringLiteral("train"), QStringLiteral("--model=mnist-cnn"),
                             QStringLiteral("--data=fashion-mnist:") + fashionDir(),
                             QStringLiteral("--limit-train=6400"), QStringLiteral("--threads=1"),
                             QStringLiteral("--out=") + out});
    QByteArray err;
    QVERIFY(QTest::qWaitFor(
        [&] {
            err += p.readAllStandardError();
            return err.contains("step 1/100") || p.state() == QProcess::NotRunning;
        },
        120000));
    QVERIFY2(err.contains("step 1/100"), err.constData());
    QTest::qWait(300);
    p.kill();
    QVERIFY(p.waitForFinished(30000));
    const QList<QByteArray> lines = readAll(out + QStringLiteral("/metrics.jsonl")).split('\n');
    int steps = 0;
    for (const QByteArray& l : lines) {
        if (l.isEmpty())
            continue;
        const QJsonObject o = QJsonDocument::fromJson(l).object();
        QVERIFY2(!o.isEmpty(), l.constData()); // every line is whole
        steps += o.value(QStringLiteral("type")).toString() == QLatin1String("step");
    }
    QVERIFY2(steps >= 1, qPrintable(QString::number(steps)));
}

void TestCli::fullDiskSaysSoAndKeepsTheCheckpoint() {
    // A 3 MB volume holds one checkpoint of the mlp (about 2.5 MB with Adam's state) but not
    // the second one written beside it.
    const QString mnt = m_tmp.filePath(QStringLiteral("small-disk"));
    QVERIFY(QDir().mkpath(mnt));
    QProcess mount;
    mount.start(QStringLiteral("mount"),
                {QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"),
                 QStringLiteral("size=3m"), QStringLiteral("tmpfs"), mnt});
    if (!mount.waitForFinished(30000) || mount.exitStatus() != QProcess::NormalExit ||
        mount.exitCode() != 0)
        QSKIP("cannot mount a small tmpfs here (needs root)");
    struct Unmount {
        QString at;
        ~Unmount() { QProcess::execute(QStringLiteral("umount"), {at}); }
    } unmount{mnt};
    const QString out = mnt + QStringLiteral("/run");
    const Result r =
        runTandem({QStringLiteral("train"), QStringLiteral("--model=mlp"),
                   QStringLiteral("--data=mnist:") + m_tmp.filePath(QStringLiteral("tiny")),
                   QStringLiteral("--batch=10"), QStringLiteral("--checkpoint-every=3"),
                   QStringLiteral("--threads=1"), QStringLiteral("--out=") + out});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains(QStringLiteral("no space left on")) &&
                 r.err.contains(QStringLiteral("needs about 3 MB")) &&
                 r.err.contains(QStringLiteral("The checkpoint of step 3")) &&
                 r.err.contains(QStringLiteral("is kept")),
             qPrintable(r.err));
    QVERIFY(!r.err.contains(QStringLiteral("Unknown error")));
    // The kept checkpoint is whole: the run resumes from it elsewhere.
    QVERIFY(QFile::copy(out + QStringLiteral("/checkpoint.tandem"),
                        m_tmp.filePath(QStringLiteral("kept.tandem"))));
    const Result resumed =
        runTandem({QStringLiteral("train"), QStringLiteral("--resume"),
                   m_tmp.filePath(QStringLiteral("kept.tandem")), QStringLiteral("--max-steps=5"),
                   QStringLiteral("--out=") + m_tmp.filePath(QStringLiteral("resumed"))});
    QVERIFY2(resumed.exitCode == 0, qPrintable(resumed.err));
    QVERIFY2(resumed.err.contains(QStringLiteral("resuming at step 3")), qPrintable(resumed.err));
}

void TestCli::damagedTrustStoreIsNamed() {
    const QString home = m_tmp.filePath(QStringLiteral("damaged-home"));
    QVERIFY(QDir().mkpath(home));
    const QString file = home + QStringLiteral("/trusted-devices.json");
    QVERIFY(testutil::writeFile(file, "{\"devices\": [ {\"id\": 12"));
    const Result list = runTandem(
        {QStringLiteral("trust"), QStringLiteral("list"), QStringLiteral("--home"), home});
    QCOMPARE(list.exitCode, 1);
    QVERIFY2(list.err.contains(file) && list.err.contains(QStringLiteral("damaged")),
             qPrintable(list.err));
}

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
