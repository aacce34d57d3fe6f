// The corruption sweep: every kind of file Tandem reads, cut short at 100 random lengths, with
// 100 random single-bit flips and with 50 random tails. Each damaged copy is refused with a message
// that names the file, or, where the format has no way to tell (raw images, CSV text, tensor bytes
// without a checksum), loads exactly what its bytes say. Never a crash, a hang or a silent wrong
// result: formats that carry a checksum (checkpoints, dataset caches, TorchScript archives) never
// load a changed file.

#include "chatdata.h"
#include "common/files.h"
#include "engine/record/runcheckpoint.h"
#include "engine/training.h"
#include "formats/chattemplate.h"
#include "formats/dataset.h"
#include "formats/tensorfile.h"
#include "formats/tokenizer.h"
#include "hffolder.h"
#include "imageutil.h"
#include "model/hf/hfmodel.h"
#include "model/hf/transformer.h"
#include "model/openmodel.h"
#include "model/scriptmodel.h"
#include "net/identity.h"
#include "net/truststore.h"
#include "proc.h"
#include "sweep/sweepconfig.h"
#include "testutil.h"
#include "ui/appsettings.h"

#include <QDir>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <functional>
#include <optional>
#include <random>

using namespace tandem;

namespace {

// What one load did: refused (with its message), or loaded, with whether the result equals
// the undamaged file's.
struct Outcome {
    std::optional<QString> error;
    bool sameAsOriginal = false;
};

struct Tally {
    int refused = 0, exact = 0, changed = 0;
};

// The same parameters, shapes and values.
bool sameParams(const ModelTensors& a, const ModelTensors& b) {
    if (a.params.size() != b.params.size())
        return false;
    for (size_t i = 0; i < a.params.size(); ++i)
        if (a.params[i].sizes() != b.params[i].sizes() || !a.params[i].equal(b.params[i]))
            return false;
    return true;
}

// A load's outcome: refused with its message, or compared with the original by `same`.
template <typename T, typename Same> Outcome judged(const Expected<T>& loaded, Same same) {
    if (!loaded)
        return {loaded.error().message};
    return {std::nullopt, same(*loaded)};
}

// Loads a dataset spec; the same content is the same hash.
std::function<Outcome()> datasetLoad(const QString& spec, const QByteArray& want) {
    return [spec, want]() -> Outcome {
        return judged(loadDataset(spec), [&](const auto& d) { return d.contentHash == want; });
    };
}

} // namespace

class TestCorruption : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void runCheckpoint();
    void torchScriptExport();
    void safetensorsExport();
    void runDescription();
    void sweepDescription();
    void trustStore();
    void appSettings();
    void identity();
    void datasetCache();
    void idxImages();
    void csvTable();
    void cifarBatch();
    void textAndTokenFiles();
    void numpyArrays();
    void imageFile();
    void huggingFaceFolder();
    void chatFile();

private:
    QString path(const QString& n) const { return m_tmp.filePath(n); }
    // Damages `file` 250 ways, loading each; `canTell` says whether a load of changed bytes
    // must be refused. Restores the file at the end.
    // A refusal names the damaged file, or `orNames` where it is not empty: the model folder
    // whose files disagree.
    void sweep(const QString& file, const std::function<Outcome()>& load, bool canTell,
               const QString& orNames = {});

    QTemporaryDir m_tmp;
    QString m_run;
};

void TestCorruption::initTestCase() {
    QVERIFY(m_tmp.isValid());
    // Tokens of text files are cached by their bytes: here, not in the user's cache.
    qputenv("TANDEM_TOKEN_CACHE", path(QStringLiteral("token-cache")).toUtf8());
    testutil::writeIdxDataset(path(QStringLiteral("tiny")), 200, 50, false);
    m_run = path(QStringLiteral("run"));
    TandemProcess t({QStringLiteral("train"), QStringLiteral("--model=mlp"),
                     QStringLiteral("--data=mnist:") + path(QStringLiteral("tiny")),
                     QStringLiteral("--threads=1"), QStringLiteral("--epochs=1"),
                     QStringLiteral("--batch=50"), QStringLiteral("--out=") + m_run});
    QVERIFY(t.finish());
    QVERIFY2(t.exitCode() == 0, qPrintable(t.err()));
}

void TestCorruption::sweep(const QString& file, const std::function<Outcome()>& load, bool canTell,
                           const QString& orNames) {
    const QByteArray original = readRegularFile(file, qint64(1) << 30).value();
    QVERIFY(!original.isEmpty());
    // Put back however the sweep ends, so that a failure is reported for this file alone.
    const auto restore = qScopeGuard([&] { testutil::writeFile(file, original); });
    const Outcome clean = load();
    QVERIFY2(!clean.error, qPrintable(clean.error.value_or(QString())));
    std::mt19937_64 rng(qHash(QFileInfo(file).fileName()));
    const QString name = QFileInfo(file).fileName();
    Tally t;
    for (int i = 0; i < 250; ++i) {
        QByteArray damaged = original;
        QString how;
        if (i < 100) {
            damaged.truncate(qsizetype(rng() % quint64(original.size())));
            how = QStringLiteral("cut to %1 bytes").arg(damaged.size());
        } else if (i >= 200) {
            const int extra = 1 + int(rng() % 64);
            for (int k = 0; k < extra; ++k)
                damaged += char(rng() % 256);
            how = QStringLiteral("%1 bytes added").arg(extra);
        } else {
            const auto bit = rng() % (quint64(original.size()) * 8);
            damaged[qsizetype(bit / 8)] = char(damaged[qsizetype(bit / 8)] ^ (1 << (bit % 8)));
            how = QStringLiteral("bit %1 flipped").arg(bit);
        }
        QVERIFY(testutil::writeFile(file, damaged));
        const Outcome o = load();
        if (o.error) {
            QVERIFY2(o.error->contains(name) || (!orNames.isEmpty() && o.error->contains(orNames)),
                     qPrintable(QStringLiteral("%1, %2: the message does not name the file: %3")
                                    .arg(name, how, *o.error)));
            ++t.refused;
        } else if (o.sameAsOriginal) {
            ++t.exact;
        } else {
            QVERIFY2(
                !canTell,
                qPrintable(QStringLiteral("%1, %2: loaded, and not as it was").arg(name, how)));
            ++t.changed;
        }
    }
    QVERIFY(testutil::writeFile(file, original));
    qInfo("%s: %d refused, %d loaded exactly as before, %d loaded as their bytes say",
          qPrintable(name), t.refused, t.exact, t.changed);
}

void TestCorruption::runCheckpoint() {
    const QString file = m_run + QStringLiteral("/checkpoint.tandem");
    const auto first = loadRunCheckpoint(file);
    QVERIFY(first);
    const ModelTensors want = modelTensors(first->module);
    sweep(
        file,
        [&]() -> Outcome {
            return judged(loadRunCheckpoint(file),
                          [&](const auto& c) { return sameParams(modelTensors(c.module), want); });
        },
        true);
}

void TestCorruption::torchScriptExport() {
    const QString file = m_run + QStringLiteral("/model.pt");
    const auto first = loadScriptModule(file);
    QVERIFY(first);
    const ModelTensors want = modelTensors(*first);
    sweep(
        file,
        [&]() -> Outcome {
            return judged(loadScriptModule(file),
                          [&](const auto& m) { return sameParams(modelTensors(m), want); });
        },
        true);
}

void TestCorruption::safetensorsExport() {
    const QString file = m_run + QStringLiteral("/model.safetensors");
    const QList<TensorRecord> want =
        parseSafetensors(readRegularFile(file, 1 << 30).value(), file).value();
    sweep(
        file,
        [&]() -> Outcome {
            auto bytes = readRegularFile(file, 1 << 30);
            if (!bytes)
                return {bytes.error().message};
            auto r = parseSafetensors(*bytes, file);
            if (!r)
                return {r.error().message};
            bool same = r->size() == want.size();
            for (qsizetype i = 0; same && i < r->size(); ++i)
                same = (*r)[i].name == want[i].name && (*r)[i].data == want[i].data &&
                       (*r)[i].shape == want[i].shape;
            return {std::nullopt, same};
        },
        false); // safetensors has no checksum: a flipped weight byte is a different weight
}

void TestCorruption::runDescription() {
    const QString file = path(QStringLiteral("run.json"));
    QVERIFY(testutil::writeFile(
        file, R"({"model": "mlp", "data": "fashion-mnist", "epochs": 3, "batch": 64,
                  "lr": 0.001, "optimizer": "adam", "mode": "sync", "seed": 7})"));
    const QJsonObject want = RunConfig::readFile(file).value().toJson();
    sweep(
        file,
        [&]() -> Outcome {
            return judged(RunConfig::readFile(file),
                          [&](const auto& c) { return c.toJson() == want; });
        },
        false); // JSON text: "epochs": 2 is as valid as 3
}

void TestCorruption::sweepDescription() {
    const QString file = path(QStringLiteral("sweep.json"));
    QVERIFY(testutil::writeFile(file, R"({"model": "mlp", "data": "fashion-mnist", "epochs": 3,
                  "sweep": {"trials": 4, "space": {"lr": {"log_uniform": [0.0001, 0.1]}}}})"));
    const QJsonObject want = SweepConfig::readFile(file).value().toJson();
    sweep(
        file,
        [&]() -> Outcome {
            return judged(SweepConfig::readFile(file),
                          [&](const auto& c) { return c.toJson() == want; });
        },
        false);
}

void TestCorruption::trustStore() {
    const QString home = path(QStringLiteral("trust"));
    TrustStore store(home);
    QVERIFY(store.add(QString(64, QLatin1Char('a')), QStringLiteral("laptop")).ok());
    QVERIFY(store.add(QString(64, QLatin1Char('b')), QStringLiteral("desktop")).ok());
    const auto want = store.load().value();
    sweep(
        store.path(),
        [&]() -> Outcome {
            auto l = store.load();
            if (!l)
                return {l.error().message};
            bool same = l->size() == want.size();
            for (qsizetype i = 0; same && i < l->size(); ++i)
                same = (*l)[i].id == want[i].id && (*l)[i].name == want[i].name;
            return {std::nullopt, same};
        },
        false); // a renamed device is still JSON; a changed ID is checked against certificates
}

void TestCorruption::appSettings() {
    // settings.ini is text that QSettings reads line by line: whatever parses is taken, the rest
    // falls back to the defaults (ports out of range among them), and nothing is refused.
    const QString home = path(QStringLiteral("settings"));
    ui::AppSettings a;
    a.language = QStringLiteral("de");
    a.nodeName = QStringLiteral("desk");
    a.listenPort = 47001;
    a.runPort = 47002;
    a.runsFolder = path(QStringLiteral("runs"));
    a.wizardDone = true;
    a.save(home);
    const auto same = [&](const ui::AppSettings& b) {
        return b.language == a.language && b.nodeName == a.nodeName &&
               b.discoveryPort == a.discoveryPort && b.listenPort == a.listenPort &&
               b.runPort == a.runPort && b.runsFolder == a.runsFolder &&
               b.cacheFolder == a.cacheFolder && b.acceptWork == a.acceptWork &&
               b.wizardDone == a.wizardDone;
    };
    QVERIFY(same(ui::AppSettings::load(home)));
    sweep(
        home + QStringLiteral("/settings.ini"),
        [&]() -> Outcome {
            return {std::nullopt, same(ui::AppSettings::load(home))};
        },
        false);
}

void TestCorruption::identity() {
    // The private key and certificate: damaged ones are refused, never silently replaced by a
    // new identity (which would unpair the machine from every other).
    const QString home = path(QStringLiteral("id"));
    const QString id = Identity::loadOrCreate(home).value().deviceId();
    const QDir files(home + QStringLiteral("/identity"));
    QVERIFY(!files.entryList(QDir::Files).isEmpty());
    for (const QString& f : files.entryList(QDir::Files)) {
        const QString file = files.filePath(f);
        sweep(
            file,
            [&]() -> Outcome {
                return judged(Identity::loadOrCreate(home),
                              [&](const auto& i) { return i.deviceId() == id; });
            },
            true);
    }
}

void TestCorruption::datasetCache() {
    auto data = loadDataset(QStringLiteral("mnist:") + path(QStringLiteral("tiny")));
    QVERIFY(data);
    const QString file = path(QStringLiteral("cache.tandem"));
    QVERIFY(testutil::writeFile(file, datasetToContainer(*data).value()));
    sweep(
        file,
        [&]() -> Outcome {
            auto bytes = readRegularFile(file, 1 << 30);
            if (!bytes)
                return {bytes.error().message};
            auto d = datasetFromContainer(*bytes, file);
            if (!d)
                return {d.error().message};
            return {std::nullopt, d->contentHash == data->contentHash};
        },
        true);
}

void TestCorruption::idxImages() {
    // Raw pixels have no checksum; headers, sizes and labels are checked.
    const QString dir = path(QStringLiteral("tiny"));
    const QString spec = QStringLiteral("mnist:") + dir;
    const QByteArray want = loadDataset(spec).value().contentHash;
    for (const QString& f : QDir(dir).entryList(QDir::Files))
        sweep(QDir(dir).filePath(f), datasetLoad(spec, want), false);
}

void TestCorruption::csvTable() {
    const QString file = path(QStringLiteral("iris.csv"));
    QByteArray text = "sepal,petal,species\n";
    for (int i = 0; i < 60; ++i)
        text += QByteArray::number(4.0 + i * 0.05) + ',' + QByteArray::number(1.0 + i * 0.1) + ',' +
                (i % 3 == 0   ? "setosa"
                 : i % 3 == 1 ? "versicolor"
                              : "virginica") +
                '\n';
    QVERIFY(testutil::writeFile(file, text));
    const QString spec = QStringLiteral("csv:%1,label=species").arg(file);
    const QByteArray want = loadDataset(spec).value().contentHash;
    sweep(file, datasetLoad(spec, want), false);
}

void TestCorruption::cifarBatch() {
    const QString dir = path(QStringLiteral("cifar"));
    QVERIFY(QDir().mkpath(dir));
    std::mt19937 rng(5);
    for (const char* f : {"data_batch_1.bin", "test_batch.bin"}) {
        QByteArray b;
        for (int r = 0; r < 20; ++r) {
            b += char(rng() % 10);
            for (int i = 0; i < 3072; ++i)
                b += char(rng() & 0xff);
        }
        QVERIFY(testutil::writeFile(QDir(dir).filePath(QLatin1String(f)), b));
    }
    const QString spec = QStringLiteral("cifar10:") + dir;
    const QByteArray want = loadDataset(spec).value().contentHash;
    sweep(QDir(dir).filePath(QStringLiteral("data_batch_1.bin")), datasetLoad(spec, want), false);
}

void TestCorruption::textAndTokenFiles() {
    // Any bytes are text, and any whole number of uint16 tokens is a token file: what cannot
    // be told apart loads, what is cut short of a window or of a token is refused by name.
    const QString text = path(QStringLiteral("story.txt")), tokens = path(QStringLiteral("t.bin"));
    QByteArray t, b;
    for (int i = 0; i < 600; ++i) {
        t += "word " + QByteArray::number(i % 17) + (i % 9 == 0 ? ".\n" : " ");
        b += char(i % 251) + QByteArray(1, char(i % 3));
    }
    QVERIFY(testutil::writeFile(text, t));
    QVERIFY(testutil::writeFile(tokens, b));
    const QString textSpec = QStringLiteral("text:%1,context=64").arg(text);
    sweep(text, datasetLoad(textSpec, loadDataset(textSpec).value().contentHash), false);
    const QString tokenSpec = QStringLiteral("tokens:%1,context=32").arg(tokens);
    sweep(tokens, datasetLoad(tokenSpec, loadDataset(tokenSpec).value().contentHash), false);
}

void TestCorruption::numpyArrays() {
    // An .npy array's header and length are checked; an .npz archive is a zip with CRCs.
    const QString dir = path(QStringLiteral("arrays"));
    QVERIFY(QDir().mkpath(dir));
    QByteArray header = "{'descr': '<f4', 'fortran_order': False, 'shape': (40, 3), }";
    while ((10 + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    QByteArray x = QByteArray("\x93NUMPY\x01\x00", 8) + char(header.size()) + '\0' + header;
    for (int i = 0; i < 120; ++i) {
        const float v = float(i) * 0.25f;
        x.append(reinterpret_cast<const char*>(&v), 4);
    }
    QByteArray yh = "{'descr': '<i8', 'fortran_order': False, 'shape': (40,), }";
    while ((10 + yh.size() + 1) % 64 != 0)
        yh += ' ';
    yh += '\n';
    QByteArray y = QByteArray("\x93NUMPY\x01\x00", 8) + char(yh.size()) + '\0' + yh;
    for (int64_t i = 0; i < 40; ++i) {
        const int64_t v = i % 4;
        y.append(reinterpret_cast<const char*>(&v), 8);
    }
    QVERIFY(testutil::writeFile(dir + QStringLiteral("/x_train.npy"), x));
    QVERIFY(testutil::writeFile(dir + QStringLiteral("/y_train.npy"), y));
    const QString spec = QStringLiteral("npy:") + dir;
    const QByteArray want = loadDataset(spec).value().contentHash;
    sweep(dir + QStringLiteral("/x_train.npy"), datasetLoad(spec, want), false);
    sweep(dir + QStringLiteral("/y_train.npy"), datasetLoad(spec, want), false);
    if (!QFileInfo::exists(QStringLiteral("/usr/bin/python3")))
        return;
    // The same arrays in a compressed archive written by NumPy.
    const QString npz = path(QStringLiteral("arrays.npz"));
    QProcess p;
    p.start(QStringLiteral("/usr/bin/python3"),
            {QStringLiteral("-c"),
             QStringLiteral("import numpy as n,sys; n.savez_compressed(sys.argv[1], "
                            "x_train=n.load(sys.argv[2]), y_train=n.load(sys.argv[3]))"),
             npz, dir + QStringLiteral("/x_train.npy"), dir + QStringLiteral("/y_train.npy")});
    if (!p.waitForFinished(60000) || p.exitCode() != 0)
        QSKIP("NumPy is not installed for /usr/bin/python3");
    const QString zspec = QStringLiteral("npz:") + npz;
    sweep(npz, datasetLoad(zspec, loadDataset(zspec).value().contentHash), false);
}

void TestCorruption::imageFile() {
    const QString dir = path(QStringLiteral("pictures"));
    QVERIFY(testutil::writeImageFolder(dir, 5));
    const QString spec = QStringLiteral("images:%1,size=8").arg(dir);
    const QByteArray want = loadDataset(spec).value().contentHash;
    sweep(dir + QStringLiteral("/red/0.png"), datasetLoad(spec, want), false);
    sweep(dir + QStringLiteral("/blue/1.jpg"), datasetLoad(spec, want), false);
}

namespace {

// A model folder as a run opens it: its model's logits for fixed ids, its tokenizer's ids for a
// text with its special token, and its chat template's rendering of a conversation.
struct FolderReading {
    at::Tensor logits;
    std::vector<int32_t> ids;
    QString chat;
    bool operator==(const FolderReading& o) const {
        return ids == o.ids && chat == o.chat && logits.sizes() == o.logits.sizes() &&
               logits.equal(o.logits);
    }
};

Expected<FolderReading> readFolder(const QString& dir) {
    auto m = openModel(ModelSource::hfFolder(dir), {});
    if (!m)
        return m.error();
    auto tok = Tokenizer::fromFolder(dir);
    if (!tok)
        return tok.error();
    auto tmpl =
        ChatTemplate::parse((*tok)->chatTemplate(), dir + QStringLiteral("/tokenizer_config.json"));
    if (!tmpl)
        return tmpl.error();
    auto chat = tmpl->render({{QStringLiteral("user"), QStringLiteral("Hi?")},
                              {QStringLiteral("assistant"), QStringLiteral("Yes.")}},
                             true, (*tok)->bosToken(), (*tok)->eosToken());
    if (!chat)
        return chat.error();
    FolderReading r;
    at::NoGradGuard noGrad;
    m->eval();
    r.logits = transformerOf(*m)->logits(at::arange(12, at::kLong).reshape({1, 12}));
    r.ids = (*tok)->encode(QStringLiteral("A plum is purple.</s>"), true);
    r.chat = *chat;
    return r;
}

} // namespace

void TestCorruption::huggingFaceFolder() {
    // A downloaded folder, its weights in two shards: every file of it cut short, flipped and
    // extended. Nothing but the safetensors headers can be checked, so each damaged file is
    // refused by name or loads what its bytes say; the model and the tokenizer are read as a run
    // reads them (logits, ids, a chat rendered).
    const QString dir = path(QStringLiteral("hf"));
    hffolder::Spec spec;
    spec.layers = 2;
    QVERIFY(QDir().mkpath(dir) && hffolder::writeTokenizer(dir));
    QFile config(dir + QStringLiteral("/config.json"));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write(QJsonDocument(hffolder::config(spec)).toJson());
    config.close();
    const QList<TensorRecord> all = hffolder::weights(spec);
    const QString shard[2] = {QStringLiteral("model-00001-of-00002.safetensors"),
                              QStringLiteral("model-00002-of-00002.safetensors")};
    QList<TensorRecord> parts[2];
    QJsonObject map;
    for (const TensorRecord& t : all) {
        const int k = t.name.contains(QLatin1String("layers.1.")) ? 1 : 0;
        parts[k] << t;
        map.insert(t.name, shard[k]);
    }
    for (int k = 0; k < 2; ++k)
        QVERIFY(writeSafetensors(dir + QLatin1Char('/') + shard[k], parts[k]));
    QVERIFY(testutil::writeFile(
        dir + QStringLiteral("/model.safetensors.index.json"),
        QJsonDocument(QJsonObject{{QStringLiteral("weight_map"), map}}).toJson()));
    const auto want = readFolder(dir);
    QVERIFY2(want, qPrintable(want ? QString() : want.error().message));
    const auto load = [&]() -> Outcome {
        return judged(readFolder(dir), [&](const FolderReading& r) { return r == *want; });
    };
    for (const char* file :
         {"config.json", "model.safetensors.index.json", "model-00001-of-00002.safetensors",
          "model-00002-of-00002.safetensors", "tokenizer.json", "tokenizer_config.json"})
        sweep(dir + QLatin1Char('/') + QLatin1String(file), load, false, dir);
}

void TestCorruption::chatFile() {
    // A chat: file, each line a conversation: a damaged line is refused naming the file and the
    // line, or (a changed letter) loads what it says.
    const QString dir = path(QStringLiteral("chat-model")),
                  file = path(QStringLiteral("chat.jsonl"));
    QVERIFY(QDir().mkpath(dir) && hffolder::writeTokenizer(dir));
    QVERIFY(testutil::writeFile(file, chatdata::chatLines(40, 5)));
    const QString spec = QStringLiteral("chat:%1,context=32,tokenizer=%2").arg(file, dir);
    const auto first = loadDataset(spec);
    QVERIFY2(first, qPrintable(first ? QString() : first.error().message));
    sweep(file, datasetLoad(spec, first->contentHash), false);
}

QTEST_GUILESS_MAIN(TestCorruption)
#include "test_corruption.moc"
