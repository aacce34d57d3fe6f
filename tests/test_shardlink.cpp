// The links between a sharded run's machines (engine/shard/shardlink.h), over TLS on loopback:
// a member the coordinator introduced gets in with the run's token; a stranger, a machine with
// another run's token, a machine that says nothing and one the introduction no longer names do
// not; and a member that dials refuses a machine other than the one introduced at that address.
// A machine that would join probes the members: it learns which it reaches, and joins nothing.
// Then sync steps over such a link (engine/shard/shardnode.h), against a one-owner run.

#include "engine/modes/fragments.h"
#include "engine/shard/shardlink.h"
#include "engine/shard/shardnode.h"
#include "engine/shard/shardpart.h"
#include "engine/step/optimizer.h"
#include "engine/wire/wiretensors.h"
#include "enginetestutil.h"

#include <QSignalSpy>
#include <QTcpServer>
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
    void aProbeReachesEachMemberAndJoinsNone();
    void stepsCrossTheLinks();
    void streamingRoundsLandBesideTheReplica();
    void anOwnerQueuesABoundedPartOfItsRange();
    void aWorkersReplicaIsRoundedAsTheWireCarriesWeights();
    void anOwnerKeepsItsRangeWhereItArrived();

private:
    ShardIntroduction introduction(const std::vector<const Identity*>& members) const;
    // Dials `to` as `from`; returns the error, or an empty string once linked (the link in
    // `link`, when given).
    QString dial(const Identity& from, const ShardIntroduction& intro, const ShardMember& to,
                 Connection** link = nullptr);
    // b dials a, which listens on `listener` (introduced to both): each end of the admitted link.
    void linkBToA(ShardListener& listener, Connection** atA, Connection** fromB);
    // linkBToA, then each end of the link to its node: A's (this test's m_a) and B's; B's end
    // in `fromB`.
    void linkNodes(ShardListener& listener, ShardNode& nodeA, ShardNode& nodeB, Connection** fromB);
    // A copy of `params` in each of `copies`.
    // Four trainable tensors of 3,610 values in all, drawn from `seed`.
    static std::vector<at::Tensor> fourTensors(uint64_t seed);
    static void copyInto(const std::vector<at::Tensor>& params,
                         std::initializer_list<std::vector<at::Tensor>*> copies);

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

void TestShardLink::linkBToA(ShardListener& listener, Connection** atA, Connection** fromB) {
    ShardIntroduction intro = introduction({&m_a, &m_b});
    QVERIFY(listener.listen(QHostAddress::LocalHost).ok());
    listener.introduce(intro);
    intro.members[0].port = listener.port();
    QSignalSpy linked(&listener, &ShardListener::linked);
    const QString why = dial(m_b, intro, intro.members[0], fromB);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QTRY_COMPARE_WITH_TIMEOUT(linked.size(), 1, 30000);
    QCOMPARE(linked.first().at(1).toString(), m_b.deviceId());
    *atA = linked.first().first().value<Connection*>();
    (*atA)->setParent(this);
}

void TestShardLink::linkNodes(ShardListener& listener, ShardNode& nodeA, ShardNode& nodeB,
                              Connection** fromB) {
    Connection* atA = nullptr;
    linkBToA(listener, &atA, fromB);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(nodeA.addLink(atA, m_b.deviceId()).ok());
    QVERIFY(nodeB.addLink(*fromB, m_a.deviceId()).ok());
}

std::vector<at::Tensor> TestShardLink::fourTensors(uint64_t seed) {
    at::manual_seed(seed);
    std::vector<at::Tensor> params;
    for (const std::vector<int64_t>& shape :
         std::vector<std::vector<int64_t>>{{64, 33}, {33}, {17, 5, 9}, {700}})
        params.push_back(at::randn(shape));
    return params;
}

void TestShardLink::copyInto(const std::vector<at::Tensor>& params,
                             std::initializer_list<std::vector<at::Tensor>*> copies) {
    for (std::vector<at::Tensor>* c : copies)
        for (const at::Tensor& p : params)
            c->push_back(p.clone());
}

// The member that listens admits the introduced one; the link then carries messages both ways.
void TestShardLink::anIntroducedMemberLinks() {
    const ShardIntroduction intro = introduction({&m_a, &m_b});
    QCOMPARE(intro.token.size(), kShardTokenBytes);
    QVERIFY(intro.token != ShardIntroduction::newToken());
    ShardListener a(m_a);
    Connection *atA = nullptr, *fromB = nullptr;
    linkBToA(a, &atA, &fromB);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(atA->peerId(), m_b.deviceId());
    QCOMPARE(fromB->peerId(), m_a.deviceId());
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

// A machine that would join a sharded run asks whether it reaches every member before the
// run is set up for it (ShardPart::probe): each member that proves who it is at its address
// counts as reached, whether or not it is in a run that names the prober; a port where nothing
// listens, or another device at a member's address, is named with why. No listener hands out a
// link, and the prober's report names the first member it could not reach, or none.
void TestShardLink::aProbeReachesEachMemberAndJoinsNone() {
    ShardListener a(m_a), c(m_c);
    QVERIFY(a.listen(QHostAddress::LocalHost).ok());
    QVERIFY(c.listen(QHostAddress::LocalHost).ok());
    a.introduce(introduction({&m_a, &m_c})); // a run without b
    QSignalSpy linkedA(&a, &ShardListener::linked);
    QSignalSpy linkedC(&c, &ShardListener::linked); // c is in no run at all
    quint16 nobody = 0;                             // a port where nothing listens
    {
        QTcpServer s;
        QVERIFY(s.listen(QHostAddress::LocalHost));
        nobody = s.serverPort();
    }
    const auto probe = [&](const QList<wire::ShardSetup::Peer>& members) {
        ShardPart b(m_b, nullptr, DType::F32, OptimizerConfig{});
        QSignalSpy reports(&b, &ShardPart::report);
        wire::ShardSetup setup;
        setup.probe = true;
        setup.runId = QStringLiteral("run-7");
        setup.members = members;
        b.probe(setup);
        const bool answered =
            QTest::qWaitFor([&] { return !reports.isEmpty(); }, ShardPart::kProbeMs + 20000);
        QTest::qWait(100); // a second report would be a fault
        return answered && reports.size() == 1
                   ? reports.first().first().value<wire::ShardReport>()
                   : wire::ShardReport{wire::ShardReport::Kind::Lost, 0, {}, {}};
    };
    const QString host = QStringLiteral("127.0.0.1");
    const wire::ShardSetup::Peer atA{m_a.deviceId(), host, a.port()};
    const wire::ShardSetup::Peer atC{m_c.deviceId(), host, c.port()};
    const wire::ShardSetup::Peer self{m_b.deviceId(), host, 1};

    wire::ShardReport r = probe({atA, self, atC});
    QCOMPARE(r.kind, wire::ShardReport::Kind::Probed);
    QVERIFY2(r.worker.isEmpty(), qPrintable(r.worker + QStringLiteral(": ") + r.why));

    r = probe({atA, {m_c.deviceId(), host, nobody}});
    QCOMPARE(r.kind, wire::ShardReport::Kind::Probed);
    QCOMPARE(r.worker, m_c.deviceId());
    QVERIFY2(r.why.contains(QStringLiteral("%1:%2").arg(host).arg(nobody)), qPrintable(r.why));

    r = probe({{m_a.deviceId(), host, c.port()}, atC}); // c answers at a's address
    QCOMPARE(r.kind, wire::ShardReport::Kind::Probed);
    QCOMPARE(r.worker, m_a.deviceId());
    QVERIFY2(
        r.why.contains(QStringLiteral("is device %1, not %2").arg(m_c.deviceId(), m_a.deviceId())),
        qPrintable(r.why));

    r = probe({self}); // no one else: nothing to reach
    QCOMPARE(r.kind, wire::ShardReport::Kind::Probed);
    QVERIFY(r.worker.isEmpty());
    QTest::qWait(200);
    QCOMPARE(linkedA.size(), 0);
    QCOMPARE(linkedC.size(), 0);
}

// Two machines, each a worker and the owner of one range, linked as shardlink.h admits them:
// three steps, each worker's bundle streamed as its backward pass fills it, each owner closed
// with both workers' weights (after the gradients, then before them, as a sharded run's step
// starts). B computes through each step: the weights that reach it meanwhile wait until it is
// done, in the part of its bundle that has left. Both replicas hold what a one-owner run of the
// same gradients and weights trained. A
// range sent for a step that is not open is refused and changes nothing, and a bundle call of a
// step that is over sends nothing.
void TestShardLink::stepsCrossTheLinks() {
    const std::vector<at::Tensor> params = fourTensors(5);
    const ModelLayout modelLayout = testing::namedLayout(params);
    const ShardLayout layout = ShardLayout::of(params);
    OptimizerConfig cfg;
    cfg.kind = OptimizerKind::AdamW;
    const QString a = m_a.deviceId(), b = m_b.deviceId();
    const std::vector<ShardRange> ranges{{0, 1900, a}, {1900, layout.values, b}};
    ShardOwner ownerA = ShardOwner::fromParams(layout, 0, 1900, params, cfg);
    ShardOwner ownerB = ShardOwner::fromParams(layout, 1900, layout.values, params, cfg);
    std::vector<at::Tensor> replicaA, replicaB, one;
    copyInto(params, {&replicaA, &replicaB, &one});
    Optimizer oneOpt(cfg, one);
    ShardNode nodeA(a, layout, ranges, DType::F32, &ownerA, &replicaA);
    ShardNode nodeB(b, layout, ranges, DType::F32, &ownerB, &replicaB);
    // Ranges of 7,600 and 6,840 bytes cross in parts as the bundle grows.
    nodeA.setPartBytes(1000);
    nodeB.setPartBytes(1000);

    ShardListener listener(m_a);
    Connection* fromB = nullptr;
    linkNodes(listener, nodeA, nodeB, &fromB);
    if (QTest::currentTestFailed())
        return;

    QSignalSpy heldA(&nodeA, &ShardNode::held), heldB(&nodeB, &ShardNode::held);
    QSignalSpy updatedA(&nodeA, &ShardNode::updated), updatedB(&nodeB, &ShardNode::updated);
    QSignalSpy refusedA(&nodeA, &ShardNode::refused);
    QSignalSpy lost(&nodeA, &ShardNode::linkLost);
    const std::vector<std::pair<QString, double>> counted{{a, 0.25}, {b, 0.75}};
    for (int step = 0; step < 3; ++step) {
        nodeA.open(step);
        nodeB.open(step);
        // The close comes as the step starts (step 1: after the gradients, as protocol 10 sent
        // it); B computes meanwhile, so the weights that reach it wait until it is done.
        if (step > 0) {
            QVERIFY(nodeA.close(step, counted, 0.01).ok());
            QVERIFY(nodeB.close(step, counted, 0.01).ok());
            const auto twice = nodeA.close(step, counted, 0.01);
            QVERIFY(!twice && twice.error().message.contains(QLatin1String("a second time")));
        }
        nodeB.setReplicaBusy(true);
        std::vector<at::Tensor> replicaBefore;
        for (const at::Tensor& t : replicaB)
            replicaBefore.push_back(t.clone());
        const qint64 receivedBefore = nodeB.linkBytes().second;
        std::vector<at::Tensor> sum(params.size());
        QByteArray bundleOfA, bundleOfB;
        for (ShardNode* node : {&nodeA, &nodeB}) {
            std::vector<at::Tensor> grads;
            for (const at::Tensor& p : params)
                grads.push_back(at::randn(p.sizes()));
            const double weight = node == &nodeA ? 0.25 : 0.75;
            for (size_t i = 0; i < params.size(); ++i)
                sum[i] = sum[i].defined() ? sum[i].add(grads[i], weight) : grads[i].mul(weight);
            GradientBundle bundle(modelLayout, DType::F32);
            const QByteArray bytes = bundle.begin();
            for (size_t k = grads.size(); k-- > 0;) {
                bundle.add(k, grads[k]);
                node->gradientsReady(step, bytes, bundle.ready());
            }
            (node == &nodeA ? bundleOfA : bundleOfB) = bytes;
        }
        QTRY_VERIFY_WITH_TIMEOUT(heldA.size() == 2 * (step + 1) && heldB.size() == 2 * (step + 1),
                                 30000);
        oneOpt.step(sum, 0.01);
        if (step == 0) {
            QVERIFY(nodeA.close(step, counted, 0.01).ok());
            QVERIFY(nodeB.close(step, counted, 0.01).ok());
        }
        // Both owners stepped; A holds both ranges' weights, and B's replica is as it was until
        // B is done, though A's range has reached it.
        QTRY_VERIFY_WITH_TIMEOUT(updatedA.size() == step + 1, 30000);
        // A's gradients for B's range, then A's weights.
        const qint64 bothRanges = layout.values * qint64(sizeof(float));
        QTRY_VERIFY_WITH_TIMEOUT(nodeB.linkBytes().second >= receivedBefore + bothRanges, 30000);
        QCOMPARE(updatedB.size(), step);
        for (size_t i = 0; i < params.size(); ++i)
            QVERIFY(at::equal(replicaB[i], replicaBefore[i]));
        nodeB.setReplicaBusy(false);
        QCOMPARE(updatedB.size(), step + 1);
        // The weights waited in B's bundle, where its gradients had left from: they took no
        // memory of their own.
        GradientBundle packed(modelLayout, DType::F32);
        const QByteArray weights = packed.begin();
        packed.finish(replicaB, {});
        QVERIFY(bundleOfB.left(bothRanges) == weights.left(bothRanges));
        // A's last call for the step comes after its replica moved on: it sends nothing, and
        // its own range of the next step is not taken from it.
        QCOMPARE(nodeA.gradientsReady(step, bundleOfA, bundleOfA.size()), qint64(0));
        QCOMPARE(heldA.size(), 2 * (step + 1));
    }
    for (size_t i = 0; i < params.size(); ++i) {
        const double scale = std::max(1.0, one[i].abs().max().item<double>());
        for (const auto* replica : {&replicaA, &replicaB})
            QVERIFY2(((*replica)[i] - one[i]).abs().max().item<double>() <= 1e-6 * scale,
                     qPrintable(QString::number(i)));
    }
    QVERIFY((replicaA[0] - params[0]).abs().max().item<double>() > 0); // it trained

    // Gradients for step 2 again, after it closed: refused at the owner, which stays as it is. The
    // replica holds step 2's weights, so step 3 is open by itself.
    const at::Tensor before = ownerA.masters().clone();
    const uint64_t blob = fromB->sendBlob(wire::BlobKind::Tensors, QByteArray(1900 * 4, '\0'));
    fromB->send(wire::ShardGrads{2, blob});
    QTRY_COMPARE_WITH_TIMEOUT(refusedA.size(), 1, 30000);
    QVERIFY2(refusedA.first().at(2).toString().contains(QLatin1String("during step 4")),
             qPrintable(refusedA.first().at(2).toString()));
    QVERIFY(at::equal(before, ownerA.masters()));
    QCOMPARE(lost.size(), 0);
}

// Streaming local-SGD over the same two machines: the model is cut into two fragments, and step
// s exchanges fragment s mod 2 only, each worker sending that fragment's run of its bundle. A's
// range reaches into both fragments, B's into the first only, so that on odd steps B owns
// nothing of the step and closes it with no value. The new values land beside each replica,
// which trains on unchanged. B sends each round's delta as soon as the round is over, before
// the step before it is closed (its first two before its node opened the first step): each
// delta waits in B's node until the step before it has landed there. Each landing holds what a
// one-owner outer optimizer made of the fragment.
void TestShardLink::streamingRoundsLandBesideTheReplica() {
    const std::vector<at::Tensor> params = fourTensors(8);
    const ModelLayout modelLayout = testing::namedLayout(params);
    const ShardLayout layout = ShardLayout::of(params);
    const OptimizerConfig cfg = outerStepOptimizer(0.9);
    const QString a = m_a.deviceId(), b = m_b.deviceId();
    const std::vector<ShardRange> ranges{{0, 1900, a}, {1900, layout.values, b}};
    ShardOwner ownerA = ShardOwner::fromParams(layout, 0, 1900, params, cfg);
    ShardOwner ownerB = ShardOwner::fromParams(layout, 1900, layout.values, params, cfg);
    std::vector<at::Tensor> replicaA, replicaB, one;
    copyInto(params, {&replicaA, &replicaB, &one});
    Optimizer oneOpt(cfg, one);
    ShardNode nodeA(a, layout, ranges, DType::F32, &ownerA, &replicaA);
    ShardNode nodeB(b, layout, ranges, DType::F32, &ownerB, &replicaB);
    const std::vector<ShardWindow> windows = fragmentWindows(layout, 2);
    const std::vector<Fragment> fragments = cutFragments(paramNumels(params), 2);
    QCOMPARE(windows.size(), size_t(2));
    QCOMPARE(windows[1].end, windows[0].begin); // the second fragment's tensors come first
    nodeA.setWindows(windows);
    nodeB.setWindows(windows);
    nodeA.setPartBytes(1000);
    nodeB.setPartBytes(1000);
    ShardListener listener(m_a);
    Connection* fromB = nullptr;
    linkNodes(listener, nodeA, nodeB, &fromB);
    if (QTest::currentTestFailed())
        return;
    QSignalSpy updatedA(&nodeA, &ShardNode::updated), updatedB(&nodeB, &ShardNode::updated);
    QSignalSpy refusedA(&nodeA, &ShardNode::refused), refusedB(&nodeB, &ShardNode::refused);
    QSignalSpy lost(&nodeA, &ShardNode::linkLost);
    const std::vector<std::pair<QString, double>> counted{{a, 0.4}, {b, 0.6}};
    // Each worker's delta for each step, and its fragment's run of the bundle.
    std::vector<std::array<std::vector<at::Tensor>, 2>> deltas;
    const auto windowBundle = [&](int step, int w) {
        GradientBundle bundle(modelLayout, DType::F32);
        const QByteArray whole = bundle.begin();
        bundle.finish(deltas[size_t(step)][size_t(w)], {});
        const ShardWindow& win = windows[size_t(step % 2)];
        return whole.mid(win.begin * 4, (win.end - win.begin) * 4);
    };
    for (int step = 0; step < 5; ++step) {
        std::array<std::vector<at::Tensor>, 2> d;
        for (auto& g : d)
            for (const at::Tensor& p : params)
                g.push_back(at::randn(p.sizes()));
        deltas.push_back(d);
    }
    // B's first two rounds end before its node has opened the first step: both wait, and go in
    // turn.
    nodeB.gradientsReady(0, windowBundle(0, 1), windowBundle(0, 1).size());
    nodeB.gradientsReady(1, windowBundle(1, 1), windowBundle(1, 1).size());
    nodeA.open(0);
    nodeB.open(0);
    for (int step = 0; step < 4; ++step) {
        const Fragment& f = fragments[size_t(step % 2)];
        nodeA.gradientsReady(step, windowBundle(step, 0), windowBundle(step, 0).size());
        // B's next round is over before this step closes: its delta waits for the step.
        const QByteArray next = windowBundle(step + 1, 1);
        QCOMPARE(nodeB.gradientsReady(step + 1, next, next.size()), qint64(0));
        QVERIFY(nodeA.close(step, counted, 0.7).ok());
        QVERIFY(nodeB.close(step, counted, 0.7).ok());
        QTRY_VERIFY_WITH_TIMEOUT(updatedA.size() == step + 1 && updatedB.size() == step + 1, 30000);
        std::vector<at::Tensor> sum(params.size());
        for (size_t i = f.firstParam; i < f.endParam; ++i)
            sum[i] = deltas[size_t(step)][0][i].mul(0.4).add_(deltas[size_t(step)][1][i], 0.6);
        oneOpt.step(sum, 0.7);
        for (ShardNode* node : {&nodeA, &nodeB}) {
            auto landed = node->takeLanded(step % 2);
            QVERIFY(landed.has_value());
            QCOMPARE(landed->step, int64_t(step));
            for (size_t i = 0; i < params.size(); ++i) {
                const bool inside = i >= f.firstParam && i < f.endParam;
                QCOMPARE(landed->values[i].defined(), inside);
                if (inside)
                    QVERIFY2((landed->values[i] - one[i]).abs().max().item<double>() <=
                                 1e-6 * std::max(1.0, one[i].abs().max().item<double>()),
                             qPrintable(QString::number(i)));
            }
            QVERIFY(!node->takeLanded(step % 2).has_value()); // taken
        }
    }
    for (size_t i = 0; i < params.size(); ++i) // the replicas trained on, untouched
        QVERIFY(at::equal(replicaA[i], params[i]) && at::equal(replicaB[i], params[i]));
    QCOMPARE(ownerA.stepCount(), int64_t(4));
    QCOMPARE(ownerB.stepCount(), int64_t(4));
    QCOMPARE(refusedA.size(), 0);
    QCOMPARE(refusedB.size(), 0);
    QCOMPARE(lost.size(), 0);
}

// An owner steps its range faster than a link carries it. It queues its segments' weights while
// what it has queued is under its bound, and the rest as the link takes them, so a range of
// gigabytes is not held a second time, queued, on the owner's machine. The step still ends where
// a one-owner run's does.
void TestShardLink::anOwnerQueuesABoundedPartOfItsRange() {
    at::manual_seed(6);
    std::vector<at::Tensor> params{at::randn({2048, 1024}), at::randn({1000})};
    const ModelLayout modelLayout = ModelLayout::of({"w", "b"}, params, {}, {});
    const ShardLayout layout = ShardLayout::of(params);
    OptimizerConfig cfg;
    cfg.kind = OptimizerKind::AdamW;
    const QString a = m_a.deviceId(), b = m_b.deviceId();
    // A owns 8 MB of values, in segments of 1 MB (shardSegmentValues: an eighth); B the rest.
    const int64_t cut = layout.values - 1000;
    const std::vector<ShardRange> ranges{{0, cut, a}, {cut, layout.values, b}};
    ShardOwner ownerA = ShardOwner::fromParams(layout, 0, cut, params, cfg);
    ShardOwner ownerB = ShardOwner::fromParams(layout, cut, layout.values, params, cfg);
    const qint64 segment = ownerA.segmentEnds().front() * qint64(sizeof(float));
    QCOMPARE(segment, qint64(1) << 20);
    std::vector<at::Tensor> replicaA, replicaB, one;
    copyInto(params, {&replicaA, &replicaB, &one});
    Optimizer oneOpt(cfg, one);
    ShardNode nodeA(a, layout, ranges, DType::F32, &ownerA, &replicaA);
    ShardNode nodeB(b, layout, ranges, DType::F32, &ownerB, &replicaB);
    const qint64 bound = 2 * segment;
    nodeA.setMaxQueuedBytes(bound);

    ShardListener listener(m_a);
    Connection* fromB = nullptr;
    linkNodes(listener, nodeA, nodeB, &fromB);
    if (QTest::currentTestFailed())
        return;
    QSignalSpy heldA(&nodeA, &ShardNode::held);
    QSignalSpy updatedA(&nodeA, &ShardNode::updated), updatedB(&nodeB, &ShardNode::updated);
    QSignalSpy lost(&nodeA, &ShardNode::linkLost);

    const std::vector<std::pair<QString, double>> counted{{a, 0.5}, {b, 0.5}};
    nodeA.open(0);
    nodeB.open(0);
    std::vector<at::Tensor> sum(params.size());
    for (ShardNode* node : {&nodeA, &nodeB}) {
        std::vector<at::Tensor> grads;
        for (const at::Tensor& p : params)
            grads.push_back(at::randn(p.sizes()));
        for (size_t i = 0; i < params.size(); ++i)
            sum[i] = sum[i].defined() ? sum[i].add(grads[i], 0.5) : grads[i].mul(0.5);
        GradientBundle bundle(modelLayout, DType::F32);
        const QByteArray bytes = bundle.begin();
        for (size_t k = grads.size(); k-- > 0;)
            bundle.add(k, grads[k]);
        node->gradientsReady(0, bytes, bundle.ready());
    }
    QTRY_VERIFY_WITH_TIMEOUT(heldA.size() == 2, 30000);
    oneOpt.step(sum, 0.01);
    // Every gradient is in: A steps its whole range as soon as the close says how.
    QVERIFY(nodeB.close(0, counted, 0.01).ok());
    QVERIFY(nodeA.close(0, counted, 0.01).ok());
    QTRY_VERIFY_WITH_TIMEOUT(updatedA.size() == 1 && updatedB.size() == 1, 60000);
    QVERIFY2(nodeA.queuedPeak() >= segment && nodeA.queuedPeak() <= bound + segment,
             qPrintable(QStringLiteral("%1 bytes queued at most, against a bound of %2")
                            .arg(nodeA.queuedPeak())
                            .arg(bound)));
    for (size_t i = 0; i < params.size(); ++i)
        for (const auto* replica : {&replicaA, &replicaB})
            QVERIFY2(((*replica)[i] - one[i]).abs().max().item<double>() <= 1e-6,
                     qPrintable(QString::number(i)));
    QCOMPARE(lost.size(), 0);
}

// A fresh run's first step sends its workers no weights: each computes on the model it was
// admitted with, rounded as the setup reaches it. The rounding is the wire's: the replica
// holds, to the bit, what taking the whole model over that wire would have written into it.
// Over fp32 nothing changes, and a replica whose worker computes is not touched.
void TestShardLink::aWorkersReplicaIsRoundedAsTheWireCarriesWeights() {
    at::manual_seed(11);
    const std::vector<at::Tensor> model{at::randn({64, 33}) * 3, at::randn({7}) * 1e-3,
                                        at::randn({5, 5}) * 1e4};
    const ModelLayout layout = ModelLayout::of({"w", "b", "big"}, model, {}, {});
    const auto copy = [&] {
        std::vector<at::Tensor> out;
        for (const at::Tensor& t : model)
            out.push_back(t.clone());
        return out;
    };
    for (const DType wire : {DType::BF16, DType::F16}) {
        std::vector<at::Tensor> rounded = copy(), taken = copy(), none;
        ShardPart part(m_a, &rounded, wire, OptimizerConfig{});
        part.roundReplica();
        QVERIFY(unpackInto(packBundle(model, {}, wire), layout, wire, taken, none).ok());
        for (size_t i = 0; i < model.size(); ++i) {
            QVERIFY(at::equal(rounded[i], taken[i]));
            QVERIFY(!at::equal(rounded[i], model[i]));
        }
        std::vector<at::Tensor> busy = copy();
        ShardPart computing(m_b, &busy, wire, OptimizerConfig{});
        computing.setReplicaBusy(true);
        computing.roundReplica();
        for (size_t i = 0; i < model.size(); ++i)
            QVERIFY(at::equal(busy[i], model[i]));
    }
    std::vector<at::Tensor> fp32 = copy();
    ShardPart part(m_c, &fp32, DType::F32, OptimizerConfig{});
    part.roundReplica();
    for (size_t i = 0; i < model.size(); ++i)
        QVERIFY(at::equal(fp32[i], model[i]));
}

// The weights of a machine's range come in one blob of the setup: its owner keeps them there,
// not in a copy (a range of gigabytes would be held twice while the owner is made), and steps
// them as any owner does. A resumed range's state follows its weights in the blob; that owner
// copies its weights out, so the state's bytes go with the blob.
void TestShardLink::anOwnerKeepsItsRangeWhereItArrived() {
    at::manual_seed(12);
    const std::vector<at::Tensor> model{at::randn({40, 10}), at::randn({30})};
    std::vector<at::Tensor> replica;
    copyInto(model, {&replica});
    ShardPart part(m_a, &replica, DType::F32, OptimizerConfig{});
    QVERIFY(bool(part.listen(QHostAddress::LocalHost)));
    wire::ShardSetup setup;
    setup.runId = QStringLiteral("run-8");
    setup.token = QByteArray(32, 't');
    setup.members = {{m_a.deviceId(), QStringLiteral("127.0.0.1"), 1},
                     {m_b.deviceId(), QStringLiteral("127.0.0.1"), 2}};
    setup.ranges = {{0, 250, m_a.deviceId()}, {250, 430, m_b.deviceId()}};
    const at::Tensor mine =
        at::cat({model[0].reshape({-1}), model[1].reshape({-1})}).narrow(0, 0, 250);
    QByteArray range(reinterpret_cast<const char*>(mine.data_ptr<float>()), 250 * sizeof(float));
    const void* arrived = range.constData();
    QVERIFY(part.setup(setup, range).ok());
    range = QByteArray(); // the caller's share goes, as the worker's session lets its blob go
    QVERIFY(part.owner());
    QCOMPARE(part.owner()->masters().data_ptr(), arrived);
    QVERIFY(at::equal(part.owner()->masters(), mine));

    // Resumed: the state after the weights, three of Adam's steps.
    ShardOwner source(ShardLayout::of(replica), 0, 250, mine, OptimizerConfig{});
    for (int i = 0; i < 3; ++i) {
        QVERIFY(source.add(source.cut({at::ones({40, 10}), at::ones({30})}), 1.0).ok());
        source.apply(0.1);
    }
    ShardPart resumed(m_a, &replica, DType::F32, OptimizerConfig{});
    QVERIFY(bool(resumed.listen(QHostAddress::LocalHost)));
    setup.optimizerSteps = 3;
    const QByteArray withState =
        QByteArray(reinterpret_cast<const char*>(source.masters().data_ptr<float>()),
                   250 * sizeof(float)) +
        source.rangeStateBytes();
    const auto st = resumed.setup(setup, withState);
    QVERIFY2(st.ok(), qPrintable(st.ok() ? QString() : st.error().message));
    QVERIFY(resumed.owner()->masters().data_ptr() !=
            static_cast<const void*>(withState.constData()));
    QVERIFY(at::equal(resumed.owner()->masters(), source.masters()));
    QCOMPARE(resumed.owner()->stepCount(), 3);
    QVERIFY(!at::equal(source.masters(), mine));
}

QTEST_GUILESS_MAIN(TestShardLink)
#include "test_shardlink.moc"
