#pragma once

// A tandem process under test: collects its output and lets a test wait for a line.

#include "net/identity.h"
#include "net/truststore.h"
#include "testpaths.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

#include <memory>
#include <utility>
#include <vector>

#include <signal.h>
#include <sys/types.h>

class TandemProcess {
public:
    static QString binary() {
        const QString other = qEnvironmentVariable("TANDEM_TEST_BINARY");
        return other.isEmpty() ? testpaths::binary() : other;
    }

    // TANDEM_TEST_BINARY runs the tests against another build (an older one, to show that a
    // regression test fails there).
    // `env`: NAME=VALUE entries added to this process's environment.
    explicit TandemProcess(const QStringList& args, bool keepStdin = false,
                           const QStringList& env = {}) {
        if (!env.isEmpty()) {
            QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
            for (const QString& kv : env)
                e.insert(kv.section(QLatin1Char('='), 0, 0), kv.section(QLatin1Char('='), 1));
            m_p.setProcessEnvironment(e);
        }
        QObject::connect(&m_p, &QProcess::readyReadStandardError,
                         [this] { m_err += m_p.readAllStandardError(); });
        QObject::connect(&m_p, &QProcess::readyReadStandardOutput,
                         [this] { m_out += m_p.readAllStandardOutput(); });
        m_p.start(binary(), args);
        if (!keepStdin)
            m_p.closeWriteChannel();
    }
    ~TandemProcess() {
        if (m_p.state() != QProcess::NotRunning) {
            m_p.kill();
            m_p.waitForFinished(10000);
        }
    }

    // Waits (running the event loop) until stderr matches; returns the first capture group.
    QString waitForErr(const QString& pattern, int timeoutMs = 120000) {
        const QRegularExpression re(pattern);
        QString cap;
        (void)QTest::qWaitFor(
            [&] {
                const auto m = re.match(QString::fromUtf8(m_err));
                if (m.hasMatch())
                    cap = m.lastCapturedIndex() >= 1 ? m.captured(1) : m.captured(0);
                return m.hasMatch() || m_p.state() == QProcess::NotRunning;
            },
            timeoutMs);
        if (cap.isEmpty()) { // the process may have printed it just before exiting
            m_err += m_p.readAllStandardError();
            const auto m = re.match(QString::fromUtf8(m_err));
            if (m.hasMatch())
                cap = m.lastCapturedIndex() >= 1 ? m.captured(1) : m.captured(0);
        }
        return cap;
    }
    bool finish(int timeoutMs = 300000) {
        const bool done =
            QTest::qWaitFor([&] { return m_p.state() == QProcess::NotRunning; }, timeoutMs);
        m_err += m_p.readAllStandardError();
        m_out += m_p.readAllStandardOutput();
        return done;
    }
    void kill9() { m_p.kill(); }
    void write(const QByteArray& b) { m_p.write(b); }
    // Waits until stdout matches; returns the first capture group.
    QString waitForOut(const QString& pattern, int timeoutMs = 60000) {
        const QRegularExpression re(pattern);
        QString cap;
        (void)QTest::qWaitFor(
            [&] {
                const auto m = re.match(QString::fromUtf8(m_out));
                if (m.hasMatch())
                    cap = m.captured(1);
                return m.hasMatch() || m_p.state() == QProcess::NotRunning;
            },
            timeoutMs);
        return cap;
    }
    void signal(int sig) { ::kill(pid_t(m_p.processId()), sig); }
    qint64 pid() const { return m_p.processId(); }
    bool running() const { return m_p.state() != QProcess::NotRunning; }
    int exitCode() const { return m_p.exitStatus() == QProcess::NormalExit ? m_p.exitCode() : -1; }
    QString err() const { return QString::fromUtf8(m_err); }
    QString out() const { return QString::fromUtf8(m_out); }
    QJsonObject summary() const {
        const QList<QByteArray> lines = m_out.trimmed().split('\n');
        return QJsonDocument::fromJson(lines.last()).object();
    }

private:
    QProcess m_p;
    QByteArray m_err, m_out;
};

// Runs `tandem ARGS` to the end; returns its standard output, trimmed.
inline QString tandemOutput(const QStringList& args) {
    TandemProcess p(args);
    p.finish();
    return p.out().trimmed();
}

// The device ID of the node at `home` (made on first use), as `tandem identity --home HOME`
// prints it. Made in this process: a test's setup need not start `tandem` (most of a second
// each here, LibTorch's loading) for what test_cli checks through the command line.
inline QString identityAt(const QString& home) {
    auto id = tandem::Identity::loadOrCreate(home);
    return id ? id->deviceId() : QString();
}

// What pairing leaves behind, without the ceremony: the node at `home` gets an identity and
// it and the node `coordId` at `coordHome` trust each other. Returns `home`'s device ID, empty
// when a node's files could not be written.
inline QString trustEachOther(const QString& coordHome, const QString& coordId,
                              const QString& home) {
    const QString id = identityAt(home);
    if (id.isEmpty() || !tandem::TrustStore(coordHome).add(id) ||
        !tandem::TrustStore(home).add(coordId))
        return {};
    return id;
}

// The same through `tandem identity` and `tandem trust add`, for a test whose own process must
// not write a node's files (its in-process failpoints are armed).
inline QString trustEachOtherByCommand(const QString& coordHome, const QString& coordId,
                                       const QString& home) {
    const QString id = tandemOutput({QStringLiteral("identity"), QStringLiteral("--home"), home});
    tandemOutput(
        {QStringLiteral("trust"), QStringLiteral("add"), id, QStringLiteral("--home"), coordHome});
    tandemOutput(
        {QStringLiteral("trust"), QStringLiteral("add"), coordId, QStringLiteral("--home"), home});
    return id;
}

// A coordinator's node at `coordHome` and a worker's at `workerHome`, each with an identity,
// trusting each other. Returns their device IDs, coordinator first.
inline std::pair<QString, QString> pairHomes(const QString& coordHome, const QString& workerHome) {
    const QString coordId = identityAt(coordHome);
    return {coordId, trustEachOther(coordHome, coordId, workerHome)};
}

// Workers joining the coordinator listening on 127.0.0.1:`port`, one for each home, each on
// one thread.
inline std::vector<std::unique_ptr<TandemProcess>> startWorkers(const QString& port,
                                                                const QStringList& homes) {
    std::vector<std::unique_ptr<TandemProcess>> workers;
    for (const QString& home : homes)
        workers.push_back(std::make_unique<TandemProcess>(
            QStringList{QStringLiteral("worker"), QStringLiteral("--connect"),
                        QStringLiteral("127.0.0.1:") + port, QStringLiteral("--home"), home,
                        QStringLiteral("--threads=1")}));
    return workers;
}

// The loss of a run's first step, from its metrics.jsonl; 0 when there is none.
inline double firstLoss(const QString& metrics) {
    QFile f(metrics);
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    return QJsonDocument::fromJson(f.readLine()).object().value(QStringLiteral("loss")).toDouble();
}

// The mean loss of a run's last `steps` steps, from its metrics.jsonl; 0 when there is none.
inline double lastLoss(const QString& metrics, int steps = 1) {
    QFile f(metrics);
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    QList<double> losses;
    for (const QByteArray& line : f.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        if (o.value(QStringLiteral("type")).toString() == QLatin1String("step") &&
            o.value(QStringLiteral("loss")).isDouble())
            losses << o.value(QStringLiteral("loss")).toDouble();
    }
    losses = losses.mid(std::max<qsizetype>(0, losses.size() - steps));
    double sum = 0;
    for (double l : losses)
        sum += l;
    return losses.isEmpty() ? 0 : sum / double(losses.size());
}

inline int countLines(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    return int(f.readAll().count('\n'));
}

// A run's sample ledger (TANDEM_SAMPLE_LEDGER): the samples of each step applied, by step, as
// the steps stand at the end (a process that goes on from a checkpoint's step writes "from", and
// the steps after it are taken again), and each process's "from" in the order written.
struct SampleLedger {
    QMap<qint64, QJsonArray> steps;
    QList<qint64> froms;
    // How many samples the steps hold, and how many of them are distinct.
    std::pair<qint64, qint64> counts() const {
        qint64 all = 0;
        QSet<qint64> seen;
        for (const QJsonArray& a : steps)
            for (const QJsonValue& v : a) {
                ++all;
                seen.insert(v.toInteger());
            }
        return {all, qint64(seen.size())};
    }
};

inline SampleLedger readSampleLedger(const QString& path) {
    SampleLedger l;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return l;
    for (const QByteArray& line : f.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        if (o.contains(QLatin1String("from"))) {
            const qint64 from = o.value(QLatin1String("from")).toInteger();
            l.froms << from;
            while (!l.steps.isEmpty() && l.steps.lastKey() > from)
                l.steps.remove(l.steps.lastKey());
        } else if (!o.isEmpty()) {
            l.steps.insert(o.value(QLatin1String("step")).toInteger(),
                           o.value(QLatin1String("samples")).toArray());
        }
    }
    return l;
}
