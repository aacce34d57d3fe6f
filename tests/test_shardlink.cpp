// The links between a sharded run's machines (engine/shard/shardlink.h), over TLS on loopback:
// a member the coordinator introduced gets in with the run's token; a stranger, a machine with
// another run's token, a machine that says nothing and one the introduction no longer names do
// not; and a member that dials refuses a machine other than the one introduced at that address.

#include "engine/shard/shardlink.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace tandem;

class TestShardLink : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void anIntroducedMemberLinks();
    void whoIsNotIntroducedWithTheTokenIsRefused();
    void theDialerChecksTheMachineItReaches();
    void aSilentOrDroppedMemberIsClosed();

private:
    ShardIntroduction introduction(const std::vector<const Identity*>& members) const;
    // Dials `to` as `from`; returns the error, or an empty string once linked (the link in
    // `link`, when given).
    QString dial(const Identity& from, const ShardIntroduction& intro, const ShardMember& to,
                 Connection** link = nullptr);

    QTemporaryDir m_tmp;
    Identity m_a, m_b, m_c;
};

void TestShardLink::initTestCase() {
    QVERIFY(m_tmp.isValid());
    m_a = Identity::loadOrCreate(m_tmp.filePath(QStringLiteral("a"))).value();
    m_b = Identity::loadOrCreate(m_tmp.filePath(QStringLiteral("b"))).value();
    m_c = Identity::loadOrCreate(m_tmp.filePath(QStringLiteral("c"))).value();
}

ShardIntroduction TestShardLink::introduction(const std::vector<const Identity*>& members) const {
    ShardIntroduction intro;
    intro.runId = QStringLiteral("run-7");
    intro.token = ShardIntroduction::newToken();
    for (const Identity* m : members)
        intro.members.push_back({m->deviceId(), QStringLiteral("127.0.0.1"), 0});
    return intro;
}

QString TestShardLink::dial(const Identity& from, const ShardIntroduction& intro,
                            const ShardMember& to, Connection** link) {
    ShardDial d(from, intro, to);
    QSignalSpy linked(&d, &ShardDial::linked);
    QSignalSpy failed(&d, &ShardDial::failed);
    if (!QTest::qWaitFor([&] { return !linked.isEmpty() || !failed.isEmpty(); }, 30000))
        return QStringLiteral("neither linked nor failed");
    if (!failed.isEmpty())
        return failed.first().first().toString();
    if (link) {
        *link = linked.first().first().value<Connection*>();
        (*link)->setParent(this);
    }
    return QString();
}

// The member that listens admits the introduced one; the link then carries messages both ways.
void TestShardLink::anIntroducedMemberLinks() {
    ShardIntroduction intro = introduction({&m_a, &m_b});
    QCOMPARE(intro.token.size(), kShardTokenBytes);
    QVERIFY(intro.token != ShardIntroduction::newToken());
    ShardListener a(m_a);
    QVERIFY(a.listen(QHostAddress::LocalHost).ok());
    a.introduce(intro);
    intro.members[0].port = a.port();
    QSignalSpy linked(&a, &ShardListener::linked);
    Connection* fromB = nullptr;
    const QString why = dial(m_b, intro, intro.members[0], &fromB);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QTRY_COMPARE_WITH_TIMEOUT(linked.size(), 1, 30000);
    auto* atA = linked.first().first().value<Connection*>();
    QCOMPARE(linked.first().at(1).toString(), m_b.deviceId());
    QCOMPARE(atA->peerId(), m_b.deviceId());
    QCOMPARE(fromB->peerId(), m_a.deviceId());
    atA->setParent(this);
    QSignalSpy atAReceived(atA, &Connection::received);
    QSignalSpy atBReceived(fromB, &Connection::received);
    fromB->send(wire::WorkError{3, QStringLiteral("from b")});
    atA->send(wire::WorkError{4, QStringLiteral("from a")});
    QTRY_VERIFY_WITH_TIMEOUT(!atAReceived.isEmpty() && !atBReceived.isEmpty(), 30000);
    QCOMPARE(std::get<wire::WorkError>(atAReceived.first().first().value<wire::Message>()).step, 3);
    QCOMPARE(std::get<wire::WorkError>(atBReceived.first().first().value<wire::Message>()).step, 4);
    delete atA;
    delete fromB;
}

// A device the coordinator did not introduce, even with the run's token; an introduced one with
// another token or another run's id; any device before an introduction: refused, each saying
// why, on both ends.
void TestShardLink::whoIsNotIntroducedWithTheTokenIsRefused() {
    ShardListener a(m_a);
    QVERIFY(a.listen(QHostAddress::LocalHost).ok());
    QSignalSpy linked(&a, &ShardListener::linked);
    QSignalSpy refused(&a, &ShardListener::refused);
    ShardIntroduction intro = introduction({&m_a, &m_b});
    intro.members[0].port = a.port();

    QString why = dial(m_b, intro, intro.members[0]);
    QVERIFY2(why.contains(QLatin1String("refused the link: this machine is in no sharded run")),
             qPrintable(why));
    a.introduce(intro);
    why = dial(m_c, intro, intro.members[0]);
    QVERIFY2(
        why.contains(QStringLiteral("device %1 is not a member of run run-7").arg(m_c.deviceId())),
        qPrintable(why));
    ShardIntroduction forged = intro;
    forged.token = ShardIntroduction::newToken();
    why = dial(m_b, forged, intro.members[0]);
    QVERIFY2(why.contains(QLatin1String("does not hold run run-7's token")), qPrintable(why));
    forged = intro;
    forged.runId = QStringLiteral("run-6");
    why = dial(m_b, forged, intro.members[0]);
    QVERIFY2(why.contains(QLatin1String("does not hold run run-7's token")), qPrintable(why));
    QTRY_COMPARE_WITH_TIMEOUT(refused.size(), 4, 30000);
    QVERIFY2(refused.at(1).first().toString().contains(m_c.deviceId()),
             qPrintable(refused.at(1).first().toString()));
    QCOMPARE(linked.size(), 0);
    // The same member, with the token, still gets in.
    why = dial(m_b, intro, intro.members[0]);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QTRY_COMPARE_WITH_TIMEOUT(linked.size(), 1, 30000);
}

// The address the coordinator gave is another machine's (it moved, or something answers in its
// place): the dialer hangs up before it sends the run's token.
void TestShardLink::theDialerChecksTheMachineItReaches() {
    ShardListener c(m_c);
    QVERIFY(c.listen(QHostAddress::LocalHost).ok());
    ShardIntroduction intro = introduction({&m_a, &m_b, &m_c});
    c.introduce(intro);
    QSignalSpy linked(&c, &ShardListener::linked);
    ShardMember a = intro.members[0];
    a.port = c.port(); // a's address, where c answers
    const QString why = dial(m_b, intro, a);
    QVERIFY2(why.contains(QStringLiteral("is device %1, not %2, which the coordinator introduced")
                              .arg(m_c.deviceId(), m_a.deviceId())),
             qPrintable(why));
    QTest::qWait(200);
    QCOMPARE(linked.size(), 0);
}

// A member that connects and says nothing is closed after the join timeout; one that is joining
// when a new introduction leaves it out is closed at once.
void TestShardLink::aSilentOrDroppedMemberIsClosed() {
    ShardListener a(m_a);
    a.setJoinTimeout(300);
    QVERIFY(a.listen(QHostAddress::LocalHost).ok());
    ShardIntroduction intro = introduction({&m_a, &m_b, &m_c});
    a.introduce(intro);
    QSignalSpy refused(&a, &ShardListener::refused);
    Connection* silent = Connection::connectTo(QStringLiteral("127.0.0.1"), a.port(), m_b, this);
    QSignalSpy silentClosed(silent, &Connection::closed);
    QVERIFY(silentClosed.wait(30000));
    QTRY_COMPARE_WITH_TIMEOUT(refused.size(), 1, 30000);
    QVERIFY2(refused.first().first().toString().contains(
                 QLatin1String("did not say which run it joins within 0.3 s")),
             qPrintable(refused.first().first().toString()));
    delete silent;

    a.setJoinTimeout(30000);
    Connection* dropped = Connection::connectTo(QStringLiteral("127.0.0.1"), a.port(), m_c, this);
    QSignalSpy droppedClosed(dropped, &Connection::closed);
    QSignalSpy secured(dropped, &Connection::secured);
    QVERIFY(secured.wait(30000));
    QTRY_COMPARE_WITH_TIMEOUT(a.joining(), 1, 30000); // the listener's end is secured too
    intro.members.pop_back();
    a.introduce(intro);
    QVERIFY(droppedClosed.wait(30000));
    QTRY_COMPARE_WITH_TIMEOUT(refused.size(), 2, 30000);
    QVERIFY2(
        refused.at(1).first().toString().contains(
            QStringLiteral("device %1 is no longer a member of run run-7").arg(m_c.deviceId())),
        qPrintable(refused.at(1).first().toString()));
    delete dropped;
}

QTEST_GUILESS_MAIN(TestShardLink)
#include "test_shardlink.moc"
