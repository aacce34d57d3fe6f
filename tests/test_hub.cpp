// The Hugging Face Hub client against a stand-in Hub on loopback (fakehub.h): search, a
// download laid out as huggingface_hub lays out its cache, resume after a cut connection, a
// file whose hash is wrong, a gated model and its token (which never reaches the file store),
// the models other tools downloaded, and where the token is kept.

#include "fakehub.h"
#include "hub/hubcache.h"
#include "hub/hubclient.h"
#include "hub/hubtoken.h"
#include "testpaths.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLockFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <random>

#if defined(Q_OS_UNIX)
#include <unistd.h>
#endif

using namespace tandem::hub;

namespace {

QByteArray randomBytes(int n, unsigned seed) {
    std::mt19937 rng(seed);
    QByteArray b(n, Qt::Uninitialized);
    for (char& c : b)
        c = char(rng());
    return b;
}

QMap<QString, FakeHub::File> modelFiles(int weightBytes, unsigned seed) {
    return {{QStringLiteral("config.json"), {"{\"model_type\": \"llama\"}", false}},
            {QStringLiteral("tokenizer.json"), {"{\"version\": \"1.0\"}", false}},
            {QStringLiteral("model.safetensors"), {randomBytes(weightBytes, seed), true}},
            {QStringLiteral("pytorch_model.bin"), {randomBytes(1000, seed + 1), true}},
            {QStringLiteral("onnx/model.onnx"), {randomBytes(1000, seed + 2), true}},
            {QStringLiteral(".gitattributes"), {"*.safetensors filter=lfs", false}}};
}

struct Result {
    QString folder, error;
    int files = 0, fetched = 0;
};

Result download(HubClient& c, const QString& repo, QList<qint64>* progress = nullptr) {
    Result r;
    QObject ctx;
    QObject::connect(&c, &HubClient::downloaded, &ctx,
                     [&](const QString& folder, int files, int fetched, qint64) {
                         r.folder = folder;
                         r.files = files;
                         r.fetched = fetched;
                     });
    QObject::connect(&c, &HubClient::failed, &ctx, [&](const QString& e) { r.error = e; });
    if (progress)
        QObject::connect(&c, &HubClient::progressed, &ctx,
                         [&](qint64 done, qint64, const QString&) { progress->append(done); });
    c.download(repo);
    QTest::qWaitFor([&] { return !c.busy(); }, 60000);
    return r;
}

} // namespace

class TestHub : public QObject {
    Q_OBJECT

    QTemporaryDir m_cache;
    FakeHub m_hub;

    HubClient* client(const QString& token = QString()) {
        auto* c = new HubClient(this);
        c->setEndpoint(m_hub.endpoint());
        c->setCacheDir(m_cache.path());
        c->setToken(token);
        return c;
    }

private Q_SLOTS:
    void initTestCase() {
        m_hub.addRepo(QStringLiteral("tiny/llama-small"), modelFiles(300000, 1), false, 50);
        m_hub.addRepo(QStringLiteral("tiny/llama-cut"), modelFiles(400000, 2), false, 900);
        m_hub.addRepo(QStringLiteral("tiny/llama-bad"), modelFiles(1000, 3), false, 10);
        m_hub.addRepo(QStringLiteral("gated/llama"), modelFiles(2000, 4), true, 5);
    }

    void searchFindsModelsMostDownloadedFirst() {
        HubClient* c = client();
        QSignalSpy got(c, &HubClient::searched);
        c->search(QStringLiteral("LLAMA"));
        QVERIFY(got.wait(30000));
        const auto models = got.first().first().value<QList<HubModel>>();
        QCOMPARE(models.size(), 4);
        QCOMPARE(models.first().id, QStringLiteral("tiny/llama-cut"));
        QCOMPARE(models.first().downloads, qint64(900));
        QCOMPARE(models.first().task, QStringLiteral("text-generation"));
        QCOMPARE(models.first().gated, QStringLiteral("no"));
        QCOMPARE(models.at(3).id, QStringLiteral("gated/llama"));
        QCOMPARE(models.at(3).gated, QStringLiteral("manual"));
        QVERIFY(m_hub.log.last().contains(QStringLiteral("/api/models")));
    }

    // Git's own hash of a file (git hash-object) is the ETag the Hub gives small files.
    void aSmallFilesHashIsGits() {
        QTemporaryDir d;
        const QString path = d.filePath(QStringLiteral("f"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"model_type\": \"llama\"}\n");
        f.close();
        QProcess git;
        git.start(QStringLiteral("git"), {QStringLiteral("hash-object"), path});
        if (!git.waitForStarted(10000))
            QSKIP("git is not installed");
        QVERIFY(git.waitForFinished(30000));
        QCOMPARE(contentHash(path, false),
                 QString::fromLatin1(git.readAllStandardOutput().trimmed()));
    }

    void aDownloadIsLaidOutAsTheHubsCache() {
        HubClient* c = client();
        QList<qint64> progress;
        const Result r = download(*c, QStringLiteral("tiny/llama-small"), &progress);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        const FakeHub::Repo& repo = m_hub.repo(QStringLiteral("tiny/llama-small"));
        const QString root = m_cache.filePath(QStringLiteral("models--tiny--llama-small"));
        QCOMPARE(r.folder, root + QStringLiteral("/snapshots/") + repo.commit);
        // what a training folder needs, and not the ONNX copy, the .bin beside safetensors or
        // the repository's own files
        QCOMPARE(r.files, 3);
        QCOMPARE(QDir(r.folder).entryList(QDir::Files, QDir::Name),
                 QStringList({QStringLiteral("config.json"), QStringLiteral("model.safetensors"),
                              QStringLiteral("tokenizer.json")}));
        const QByteArray weights = repo.files.value(QStringLiteral("model.safetensors")).body;
        const QFileInfo link(r.folder + QStringLiteral("/model.safetensors"));
        QVERIFY(link.isSymLink());
        QCOMPARE(QFile::symLinkTarget(link.filePath()),
                 root + QStringLiteral("/blobs/") + FakeHub::sha256(weights));
        QFile read(link.filePath());
        QVERIFY(read.open(QIODevice::ReadOnly));
        QCOMPARE(read.readAll(), weights);
#if defined(Q_OS_UNIX)
        // links are relative, as huggingface_hub writes them, so that the cache can move
        char target[512];
        const ssize_t n =
            readlink(QFile::encodeName(link.filePath()).constData(), target, sizeof target);
        QCOMPARE(QByteArray(target, int(std::max<ssize_t>(n, 0))),
                 "../../blobs/" + FakeHub::sha256(weights).toLatin1());
#endif
        QCOMPARE(QFile(r.folder + QStringLiteral("/config.json")).symLinkTarget(),
                 root + QStringLiteral("/blobs/") +
                     FakeHub::gitSha1(repo.files.value(QStringLiteral("config.json")).body));
        QFile ref(root + QStringLiteral("/refs/main"));
        QVERIFY(ref.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromLatin1(ref.readAll()), repo.commit);
        QVERIFY(!progress.isEmpty());
        qint64 bytes = 0;
        for (const char* name : {"config.json", "tokenizer.json", "model.safetensors"})
            bytes += repo.files.value(QLatin1String(name)).body.size();
        QCOMPARE(progress.last(), bytes); // every byte counted
        // the token went nowhere, and LFS files came from the store
        QVERIFY(!m_hub.tokenWentToStore);
        // again: nothing is fetched
        const int requests = int(m_hub.log.size());
        const Result again = download(*c, QStringLiteral("tiny/llama-small"));
        QVERIFY(again.error.isEmpty());
        QCOMPARE(again.fetched, 0);
        QCOMPARE(m_hub.log.size(), requests + 1); // the metadata only
    }

    void aCutDownloadResumesWhereItStopped() {
        m_hub.cutAfter = 150000;
        const int before = int(m_hub.log.size());
        const Result r = download(*client(), QStringLiteral("tiny/llama-cut"));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        const QStringList asked = m_hub.log.mid(before);
        QVERIFY2(asked.filter(QStringLiteral("/stored/")).size() == 2,
                 qPrintable(asked.join(QLatin1Char('\n'))));
        // the store sent 150,000 bytes and closed; the second request asks for the rest, from
        // what came (all of it, unless the connection lost some on its way)
        const QStringList resumed =
            asked.filter(QRegularExpression(QStringLiteral("^GET /stored/.* range=bytes=\\d+-")));
        QVERIFY2(resumed.size() == 1, qPrintable(asked.join(QLatin1Char('\n'))));
        const qint64 from = QRegularExpression(QStringLiteral("bytes=(\\d+)-"))
                                .match(resumed.first())
                                .captured(1)
                                .toLongLong();
        QVERIFY2(from > 0 && from <= 150000, qPrintable(resumed.first()));
        QFile w(r.folder + QStringLiteral("/model.safetensors"));
        QVERIFY(w.open(QIODevice::ReadOnly));
        QCOMPARE(w.readAll(), m_hub.repo(QStringLiteral("tiny/llama-cut"))
                                  .files.value(QStringLiteral("model.safetensors"))
                                  .body);
        QVERIFY(QDir(m_cache.filePath(QStringLiteral("models--tiny--llama-cut/blobs")))
                    .entryList({QStringLiteral("*.incomplete")}, QDir::Files)
                    .isEmpty());
    }

    void aFileWithTheWrongHashIsNotKept() {
        m_hub.corrupt = QStringLiteral("model.safetensors");
        const Result r = download(*client(), QStringLiteral("tiny/llama-bad"));
        m_hub.corrupt.clear();
        QVERIFY(r.folder.isEmpty());
        QVERIFY2(r.error.contains(QStringLiteral("did not match the hash")), qPrintable(r.error));
        QVERIFY(r.error.contains(QStringLiteral("model.safetensors")));
        const QDir blobs(m_cache.filePath(QStringLiteral("models--tiny--llama-bad/blobs")));
        const QString hash = FakeHub::sha256(m_hub.repo(QStringLiteral("tiny/llama-bad"))
                                                 .files.value(QStringLiteral("model.safetensors"))
                                                 .body);
        QVERIFY(!blobs.exists(hash));
        QVERIFY(!blobs.exists(hash + QStringLiteral(".incomplete")));
        QVERIFY(!QDir(m_cache.filePath(QStringLiteral("models--tiny--llama-bad/refs")))
                     .exists(QStringLiteral("main")));
        // served right, it downloads
        const Result again = download(*client(), QStringLiteral("tiny/llama-bad"));
        QVERIFY2(again.error.isEmpty(), qPrintable(again.error));
    }

    // A file another program is downloading (its lock held) is left to it; a revision that
    // would name a file outside refs/ is refused.
    void aFileBeingDownloadedElsewhereIsLeftAlone() {
        QTemporaryDir cache;
        const QString weights =
            FakeHub::sha256(m_hub.repo(QStringLiteral("tiny/llama-bad"))
                                .files.value(QStringLiteral("model.safetensors"))
                                .body);
        const QString blobs = cache.filePath(QStringLiteral("models--tiny--llama-bad/blobs"));
        QVERIFY(QDir().mkpath(blobs));
        QLockFile other(blobs + QLatin1Char('/') + weights + QStringLiteral(".lock"));
        QVERIFY(other.tryLock(0));
        HubClient* c = client();
        c->setCacheDir(cache.path());
        const Result held = download(*c, QStringLiteral("tiny/llama-bad"));
        QVERIFY2(held.error.contains(QStringLiteral("being downloaded by another program")),
                 qPrintable(held.error));
        other.unlock();
        const Result after = download(*c, QStringLiteral("tiny/llama-bad"));
        QVERIFY2(after.error.isEmpty(), qPrintable(after.error));
        for (const char* bad : {"../../x", "/etc", "a/../b", "main branch"}) {
            QSignalSpy failed(c, &HubClient::failed);
            c->download(QStringLiteral("tiny/llama-bad"), QLatin1String(bad));
            QCOMPARE(failed.size(), 1);
            QVERIFY(failed.first().first().toString().contains(QStringLiteral("not a branch")));
        }
    }

    void aGatedModelNeedsTheToken() {
        const Result none = download(*client(), QStringLiteral("gated/llama"));
        QVERIFY2(none.error.contains(QStringLiteral("gated model")), qPrintable(none.error));
        QVERIFY(none.error.contains(QStringLiteral("none is set")));
        const Result wrong =
            download(*client(QStringLiteral("hf_wrong")), QStringLiteral("gated/llama"));
        QVERIFY2(wrong.error.contains(QStringLiteral("refused")), qPrintable(wrong.error));
        const Result right = download(*client(m_hub.token), QStringLiteral("gated/llama"));
        QVERIFY2(right.error.isEmpty(), qPrintable(right.error));
        QVERIFY(!m_hub.tokenWentToStore); // dropped at the redirect to the other origin
        const Result missing = download(*client(), QStringLiteral("nobody/nothing"));
        QVERIFY2(missing.error.contains(QStringLiteral("no model nobody/nothing")),
                 qPrintable(missing.error));
        const Result bad = download(*client(), QStringLiteral("../etc"));
        QVERIFY(bad.error.contains(QStringLiteral("is not a model's name")));
    }

    // A cache as huggingface_hub leaves it, made by hand: its models are listed, with the
    // snapshot the ref names first.
    void modelsOtherToolsDownloadedAreListed() {
        QTemporaryDir cache;
        const QDir root(cache.path());
        const QString repo = QStringLiteral("models--Org--Other");
        QVERIFY(root.mkpath(repo + QStringLiteral("/blobs")));
        QVERIFY(root.mkpath(repo + QStringLiteral("/refs")));
        for (const char* commit : {"1111111111111111111111111111111111111111",
                                   "2222222222222222222222222222222222222222"})
            QVERIFY(root.mkpath(repo + QStringLiteral("/snapshots/") + QLatin1String(commit)));
        auto write = [&](const QString& path, const QByteArray& b) {
            QFile f(root.filePath(path));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(b);
        };
        write(repo + QStringLiteral("/blobs/aa"), "{}");
        write(repo + QStringLiteral("/blobs/bb"), QByteArray(5000, 'x'));
        write(repo + QStringLiteral("/refs/main"), "1111111111111111111111111111111111111111");
        const QString snap =
            repo + QStringLiteral("/snapshots/1111111111111111111111111111111111111111/");
        QVERIFY(QFile::link(QStringLiteral("../../blobs/aa"),
                            root.filePath(snap + QStringLiteral("config.json"))));
        QVERIFY(QFile::link(QStringLiteral("../../blobs/bb"),
                            root.filePath(snap + QStringLiteral("model.safetensors"))));
        const QList<CachedModel> models = cachedModels(cache.path());
        QCOMPARE(models.size(), 2);
        QCOMPARE(models[0].repoId, QStringLiteral("Org/Other"));
        QCOMPARE(models[0].revision, QStringLiteral("main"));
        QVERIFY(models[0].usable);
        QCOMPARE(models[0].files, 2);
        QCOMPARE(models[0].bytes, qint64(5002));
        QCOMPARE(models[0].folder, root.filePath(snap).chopped(1));
        QVERIFY(!models[1].usable); // an empty snapshot
        // and the ones downloaded above, from the shared cache
        QStringList ids;
        for (const CachedModel& m : cachedModels(m_cache.path()))
            ids.append(m.repoId);
        QVERIFY2(ids.contains(QStringLiteral("tiny/llama-small")),
                 qPrintable(ids.join(QLatin1Char(' '))));
    }

    // `tandem hub`: search, download and list, against the same stand-in.
    void theCommandLineSearchesDownloadsAndLists() {
        QTemporaryDir cache;
        auto run = [&](const QStringList& args, QString* out) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("HF_ENDPOINT"), m_hub.endpoint().toString());
            env.insert(QStringLiteral("HF_HUB_CACHE"), cache.path());
            env.insert(QStringLiteral("HF_HOME"), cache.path());
            env.remove(QStringLiteral("HF_TOKEN"));
            p.setProcessEnvironment(env);
            p.start(testpaths::binary(), QStringList{QStringLiteral("hub")} + args);
            // the stand-in answers from this thread's event loop: wait by spinning it
            if (!QTest::qWaitFor([&] { return p.state() == QProcess::NotRunning; }, 60000))
                p.kill();
            *out = QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
            return p.exitCode();
        };
        QString out;
        QCOMPARE(run({QStringLiteral("search"), QStringLiteral("llama-")}, &out), 0);
        QVERIFY2(out.startsWith(QStringLiteral("tiny/llama-cut")), qPrintable(out));
        QCOMPARE(run({QStringLiteral("download"), QStringLiteral("tiny/llama-small")}, &out), 0);
        const QString folder =
            snapshotFolder(cache.path(), QStringLiteral("tiny/llama-small"),
                           m_hub.repo(QStringLiteral("tiny/llama-small")).commit);
        QVERIFY2(out.contains(QDir::toNativeSeparators(folder)), qPrintable(out));
        QVERIFY(QFile::exists(folder + QStringLiteral("/model.safetensors")));
        QCOMPARE(run({QStringLiteral("list")}, &out), 0);
        QVERIFY2(out.contains(QStringLiteral("tiny/llama-small")), qPrintable(out));
        QCOMPARE(run({QStringLiteral("download"), QStringLiteral("gated/llama")}, &out), 1);
        QVERIFY2(out.contains(QStringLiteral("gated model")), qPrintable(out));
        QCOMPARE(run({QStringLiteral("download")}, &out), 2);
    }

    void theCacheIsWhereTheHubsToolsLook() {
        qputenv("HF_HOME", "/tmp/hfhome");
        qunsetenv("HF_HUB_CACHE");
        qunsetenv("HUGGINGFACE_HUB_CACHE");
        QCOMPARE(cacheDir(), QStringLiteral("/tmp/hfhome/hub"));
        qputenv("HF_HUB_CACHE", "/tmp/elsewhere");
        QCOMPARE(cacheDir(), QStringLiteral("/tmp/elsewhere"));
        qunsetenv("HF_HUB_CACHE");
        qunsetenv("HF_HOME");
        QVERIFY(isRepoId(QStringLiteral("meta-llama/Llama-3.2-1B")));
        QVERIFY(isRepoId(QStringLiteral("gpt2")));
        for (const char* bad : {"../x", "a/b/c", "a//b", ".hidden/x", "a/..", "a--b/c", ""})
            QVERIFY2(!isRepoId(QLatin1String(bad)), bad);
    }

    void theTokenIsKeptInTheKeychainOrItsFile() {
#if !defined(Q_OS_LINUX)
        QSKIP("the keychain here is the system's own; only Linux's is stood in for");
#endif
        QTemporaryDir home;
        qputenv("HF_HOME", home.path().toUtf8());
        qunsetenv("HF_TOKEN");
        qunsetenv("HF_TOKEN_PATH");
        const QByteArray path = qgetenv("PATH");
        // no keychain: the token file huggingface-cli uses, readable by its owner only
        qputenv("PATH", home.path().toUtf8());
        QVERIFY(!saveToken(QStringLiteral("bad token")).ok());
        auto where = saveToken(QStringLiteral("hf_abc123"));
        QVERIFY(where.ok());
        QCOMPARE(*where, home.filePath(QStringLiteral("token")));
        QCOMPARE(QFile(*where).permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther),
                 QFileDevice::Permissions());
        QCOMPARE(findToken().value, QStringLiteral("hf_abc123"));
        qputenv("HF_TOKEN", "hf_from_env");
        QCOMPARE(findToken().where, QStringLiteral("HF_TOKEN"));
        qunsetenv("HF_TOKEN");
        forgetToken();
        QVERIFY(findToken().value.isEmpty());
        // a Secret Service (secret-tool, given the token on its standard input)
        const QString tool = home.filePath(QStringLiteral("secret-tool"));
        QFile script(tool);
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write("#!/bin/sh\nstore=\"$(dirname \"$0\")/kept\"\n"
                     "case \"$1\" in\n"
                     "store) cat > \"$store\" ;;\n"
                     "lookup) cat \"$store\" 2>/dev/null || exit 1 ;;\n"
                     "clear) rm -f \"$store\" ;;\n"
                     "esac\n");
        script.close();
        QVERIFY(script.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                      QFileDevice::ExeOwner));
        qputenv("PATH", home.path().toUtf8() + ":/usr/bin:/bin");
        qputenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent");
        where = saveToken(QStringLiteral("hf_kept"));
        QVERIFY(where.ok());
        QCOMPARE(*where, QStringLiteral("keychain"));
        QVERIFY(!QFile::exists(home.filePath(QStringLiteral("token"))));
        QCOMPARE(findToken().value, QStringLiteral("hf_kept"));
        QCOMPARE(findToken().where, QStringLiteral("keychain"));
        forgetToken();
        QVERIFY(findToken().value.isEmpty());
        qputenv("PATH", path);
        qunsetenv("DBUS_SESSION_BUS_ADDRESS");
        qunsetenv("HF_HOME");
    }
};

QTEST_GUILESS_MAIN(TestHub)
#include "test_hub.moc"
