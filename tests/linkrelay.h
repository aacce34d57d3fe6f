#pragma once

// bench/linkrelay.py for the end-to-end tests: a userspace relay on loopback in front of a port,
// at a fixed rate and delay. SIGUSR1 slows it to a second rate; SIGUSR2 cuts it (nothing moves
// either way, and the connections stay open, as when Wi-Fi drops) and the next one restores it.

#include "testpaths.h"

#include <QProcess>
#include <QRegularExpression>
#include <QtTest/QtTest>

#include <csignal>

class LinkRelay {
public:
    // `listenPort`: where the relay listens; any free port where empty. A relay in front of a
    // port that is not bound yet must be given one: the port it would take may be that one.
    LinkRelay(const QString& toPort, double mbit, double delayMs, double usr1Mbit = 0,
              const QString& listenPort = {}) {
        m_p.setProcessChannelMode(QProcess::MergedChannels);
        m_p.start(testpaths::python(),
                  {testpaths::relay(), QStringLiteral("--listen"),
                   QStringLiteral("127.0.0.1:") +
                       (listenPort.isEmpty() ? QStringLiteral("0") : listenPort),
                   QStringLiteral("--to"), QStringLiteral("127.0.0.1:") + toPort,
                   QStringLiteral("--rate-mbit"), QString::number(mbit),
                   QStringLiteral("--delay-ms"), QString::number(delayMs),
                   QStringLiteral("--usr1-rate-mbit"), QString::number(usr1Mbit)});
    }
    ~LinkRelay() {
        m_p.kill();
        m_p.waitForFinished(10000);
    }
    LinkRelay(const LinkRelay&) = delete;
    LinkRelay& operator=(const LinkRelay&) = delete;

    // The relay's port, once it listens; empty if it never does.
    QString port() { return waitFor(QStringLiteral("relay listening on 127\\.0\\.0\\.1:(\\d+)")); }
    // The first capture (or the whole match) of `pattern` in what the relay said, once it says
    // it; empty if it ends or 30 s pass first.
    QString waitFor(const QString& pattern) {
        const QRegularExpression re(pattern);
        QString cap;
        (void)QTest::qWaitFor(
            [&] {
                m_out += m_p.readAll();
                const auto m = re.match(QString::fromUtf8(m_out));
                if (m.hasMatch())
                    cap = m.captured(1).isEmpty() ? m.captured(0) : m.captured(1);
                return m.hasMatch() || m_p.state() == QProcess::NotRunning;
            },
            30000);
        return cap;
    }
    void slowDown() { ::kill(pid_t(m_p.processId()), SIGUSR1); }
    // Cuts the link, or restores it when it is cut.
    void cutOrRestore() { ::kill(pid_t(m_p.processId()), SIGUSR2); }
    QString said() {
        m_out += m_p.readAll();
        return QString::fromUtf8(m_out);
    }

private:
    QProcess m_p;
    QByteArray m_out;
};
