// A LoRA run's frozen base as it reaches a worker and a checkpoint: one safetensors file whose
// parts, joined, map back to the very tensors they came from (bf16 as stored, and nf4 with its
// quantization state); a manifest whose hash covers every part and which refuses any figure
// that does not add up; a cache that keeps what a cut transfer left, checks each part, cuts off
// a damaged tail and refuses a part that does not match its digest; a cached base that is
// damaged counted as a miss; refusals that name the folder for a cache that cannot be created
// and for a disk without the room; and a model rebuilt from its weightless archive and the
// cached base computing what the original computes.

#include "engine/step/basepack.h"
#include "hffolder.h"
#include "model/model.h"
#include "model/openmodel.h"

#include <QCryptographicHash>
#include <QFile>
#include <QStorageInfo>
#include <QTemporaryDir>
#include <QtTest>

using namespace tandem;

namespace {

bool sameTensors(const NamedTensors& a, const NamedTensors& b) {
    if (a.size() != b.size())
        return false;
    std::map<std::string, at::Tensor> byName(b.begin(), b.end());
    for (const auto& [name, t] : a) {
        auto it = byName.find(name);
        if (it == byName.end() || it->second.scalar_type() != t.scalar_type() ||
            !it->second.sizes().equals(t.sizes()) ||
            std::memcmp(it->second.contiguous().data_ptr(), t.contiguous().data_ptr(),
                        size_t(t.numel() * int64_t(t.element_size()))) != 0)
            return false;
    }
    return true;
}

NamedTensors frozenOf(const Model& m) {
    const ModelTensors t = modelTensors(m);
    NamedTensors out;
    for (size_t i = 0; i < t.frozen.size(); ++i)
        out.emplace_back(t.frozenNames[i], t.frozen[i]);
    return out;
}

} // namespace

class TestBasePack : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void thePartsJoinIntoTheBase_data();
    void thePartsJoinIntoTheBase();
    void aManifestThatDoesNotAddUpIsRefused();
    void aCutTransferResumesAtItsFirstMissingPart();
    void aDamagedCachedBaseIsAMiss();
    void aCacheWithoutRoomOrWritableFolderIsRefusedByName();
    void nothingFrozenMeansNoBase();

private:
    Model open(const QString& lora);
    std::shared_ptr<const BasePack> pack(const Model& m);

    QTemporaryDir m_tmp;
    QString m_folder;
};

void TestBasePack::initTestCase() {
    QVERIFY(m_tmp.isValid());
    m_folder = m_tmp.filePath(QStringLiteral("llama"));
    hffolder::Spec spec;
    spec.bf16 = true;
    spec.hidden = 64;
    spec.intermediate = 128;
    spec.vocab = 512;
    QVERIFY(hffolder::write(m_folder, spec));
}

Model TestBasePack::open(const QString& lora) {
    auto m = openModel(ModelSource::hfFolder(m_folder), {lora, false, 5});
    if (!m)
        qWarning().noquote() << m.error().message;
    return m ? *m : Model();
}

std::shared_ptr<const BasePack> TestBasePack::pack(const Model& m) {
    auto p = BasePack::of(m);
    if (!p)
        qWarning().noquote() << p.error().message;
    return p ? *p : nullptr;
}

void TestBasePack::thePartsJoinIntoTheBase_data() {
    QTest::addColumn<QString>("lora");
    QTest::newRow("bf16") << QStringLiteral("r=4");
    QTest::newRow("nf4") << QStringLiteral("r=4,base=nf4");
}

void TestBasePack::thePartsJoinIntoTheBase() {
    QFETCH(QString, lora);
    const Model model = open(lora);
    const auto p = pack(model);
    QVERIFY(p);
    const BaseManifest& m = p->manifest();
    QVERIFY2(m.parts() >= 3, qPrintable(QString::number(m.parts())));
    QCOMPARE(m.partBytes % (64 << 10), 0);

    // The manifest reads back as it was, under its own hash only.
    auto back = BaseManifest::parse(m.json(), m.hash);
    QVERIFY2(back, back ? "" : qPrintable(back.error().message));
    QCOMPARE(back->digests, m.digests);
    QCOMPARE(back->totalBytes, m.totalBytes);

    // Parts, each matching its digest, joined: a safetensors file of the frozen tensors.
    QByteArray file;
    for (int i = 0; i < m.parts(); ++i) {
        const QByteArray part = p->part(i);
        QCOMPARE(part.size(), m.partSize(i));
        QCOMPARE(QCryptographicHash::hash(part, QCryptographicHash::Blake2b_256), m.digests[i]);
        file += part;
    }
    QCOMPARE(file.size(), m.totalBytes);
    QVERIFY(p->part(m.parts()).isEmpty());
    const QString path =
        m_tmp.filePath(QLatin1String(QTest::currentDataTag()) + QStringLiteral(".safetensors"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly) && f.write(file) == file.size());
    f.close();
    auto mapped = mapSafetensorsFile(path);
    QVERIFY2(mapped, mapped ? "" : qPrintable(mapped.error().message));
    QVERIFY(sameTensors(*mapped, frozenOf(model)));

    // The same folder and options give the same hash; another quantization another one.
    QCOMPARE(pack(open(lora))->manifest().hash, m.hash);
    QVERIFY(pack(open(QStringLiteral("r=4,base=int8")))->manifest().hash != m.hash);

    // A weightless archive and the base rebuild a model that computes what the original does.
    NamedTensors base = std::move(*mapped);
    auto rebuilt = modelFromArchive(model.archive(false).value(), QStringLiteral("archive"), &base);
    QVERIFY2(rebuilt, rebuilt ? "" : qPrintable(rebuilt.error().message));
    const ModelTensors from = modelTensors(model);
    ModelTensors to = modelTensors(*rebuilt);
    QCOMPARE(to.params.size(), from.params.size());
    {
        at::NoGradGuard noGrad;
        for (size_t i = 0; i < to.params.size(); ++i)
            to.params[i].copy_(from.params[i]);
    }
    at::NoGradGuard noGrad;
    model.eval();
    rebuilt->eval();
    const at::Tensor ids = at::arange(0, 24, at::kLong).view({2, 12});
    QVERIFY(at::equal(rebuilt->forward(ids), model.forward(ids)));

    // A base that lacks a weight the archive needs is refused, naming it.
    base.pop_back();
    auto lacking = modelFromArchive(model.archive(false).value(), QStringLiteral("archive"), &base);
    QVERIFY(!lacking);
    QVERIFY2(lacking.error().message.contains(QLatin1String("lacks")),
             qPrintable(lacking.error().message));
}

void TestBasePack::aManifestThatDoesNotAddUpIsRefused() {
    const auto p = pack(open(QStringLiteral("r=4")));
    QVERIFY(p);
    const BaseManifest& m = p->manifest();
    auto refused = [](const QByteArray& json, const QString& hash, const char* says) {
        auto r = BaseManifest::parse(json, hash);
        if (r || !r.error().message.contains(QLatin1String(says))) {
            qWarning().noquote() << (r ? QStringLiteral("accepted") : r.error().message);
            return false;
        }
        return true;
    };
    auto hashOf = [](const QByteArray& json) {
        return QString::fromLatin1(
            QCryptographicHash::hash(json, QCryptographicHash::Blake2b_256).toHex());
    };
    QString otherHash = m.hash;
    otherHash[0] = m.hash[0] == QLatin1Char('0') ? QLatin1Char('1') : QLatin1Char('0');
    QVERIFY(refused(m.json(), otherHash, "does not match its hash"));
    BaseManifest fewer = m;
    fewer.digests.removeLast();
    QVERIFY(refused(fewer.json(), hashOf(fewer.json()), "parts where its size makes"));
    BaseManifest tiny = m;
    tiny.partBytes = 1024;
    QVERIFY(refused(tiny.json(), hashOf(tiny.json()), "64 KiB to 64 MiB"));
    BaseManifest huge = m;
    huge.totalBytes = qint64(1) << 41;
    QVERIFY(refused(huge.json(), hashOf(huge.json()), "1 TiB"));
    QByteArray short_ = m.json();
    short_.replace(m.digests[0].toHex(), m.digests[0].toHex().left(60));
    QVERIFY(refused(short_, hashOf(short_), "32 bytes of hex"));
    QVERIFY(refused(QByteArray("{}"), hashOf(QByteArray("{}")), "format"));
}

void TestBasePack::aCutTransferResumesAtItsFirstMissingPart() {
    const Model model = open(QStringLiteral("r=4,base=nf4"));
    const auto p = pack(model);
    QVERIFY(p);
    const BaseManifest& m = p->manifest();
    const BaseCache cache(m_tmp.filePath(QStringLiteral("cache-resume")));
    QVERIFY(!cache.find(m));
    QCOMPARE(cache.partsHeld(m), 0);
    QVERIFY(cache.prepare(m, 0));

    // A part that is not what the manifest says is refused and leaves nothing behind.
    QByteArray wrong = p->part(0);
    wrong[100] = char(wrong[100] ^ 1);
    auto st = cache.write(m, 0, wrong);
    QVERIFY(!st);
    QVERIFY2(st.error().message.contains(QLatin1String("part 1 of")) &&
                 st.error().message.contains(QLatin1String("does not match its digest")),
             qPrintable(st.error().message));
    QCOMPARE(cache.partsHeld(m), 0);

    // Three parts, then the link is cut: three are here.
    for (int i = 0; i < 3; ++i)
        QVERIFY(cache.write(m, i, p->part(i)));
    QCOMPARE(cache.partsHeld(m), 3);

    // A damaged third part (a crash mid-write): the first two are kept, the rest cut off.
    const QString partial = QDir(cache.dir()).filePath(m.hash + QStringLiteral(".partial"));
    {
        QFile f(partial);
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.seek(2 * m.partBytes + 7));
        QVERIFY(f.write("x", 1) == 1);
    }
    QCOMPARE(cache.partsHeld(m), 2);
    QCOMPARE(QFileInfo(partial).size(), 2 * m.partBytes);

    for (int i = 2; i < m.parts(); ++i)
        QVERIFY(cache.write(m, i, p->part(i)));
    QCOMPARE(cache.partsHeld(m), m.parts());
    auto done = cache.complete(m);
    QVERIFY2(done, done ? "" : qPrintable(done.error().message));
    QVERIFY(sameTensors(*done, frozenOf(model)));
    QVERIFY(!QFileInfo::exists(partial));
    auto found = cache.find(m);
    QVERIFY(found);
    QVERIFY(sameTensors(*found, frozenOf(model)));
}

void TestBasePack::aDamagedCachedBaseIsAMiss() {
    const auto p = pack(open(QStringLiteral("r=4")));
    const BaseManifest& m = p->manifest();
    const BaseCache cache(m_tmp.filePath(QStringLiteral("cache-damaged")));
    QVERIFY(cache.prepare(m, 0));
    for (int i = 0; i < m.parts(); ++i)
        QVERIFY(cache.write(m, i, p->part(i)));
    QVERIFY(cache.complete(m));
    const QString done = QDir(cache.dir()).filePath(m.hash + QStringLiteral(".safetensors"));
    {
        QFile f(done);
        QVERIFY(f.open(QIODevice::ReadWrite));
        QVERIFY(f.seek(m.totalBytes - 3));
        QVERIFY(f.write("zzz", 3) == 3);
    }
    QVERIFY(!cache.find(m));
    QVERIFY(!QFileInfo::exists(done)); // removed, so the next run receives it again
}

void TestBasePack::aCacheWithoutRoomOrWritableFolderIsRefusedByName() {
    const auto p = pack(open(QStringLiteral("r=4")));
    BaseManifest m = p->manifest();
    // Under a file: no folder can be made there.
    const QString file = m_tmp.filePath(QStringLiteral("a-file"));
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.close();
    const BaseCache blocked(file + QStringLiteral("/models"));
    auto st = blocked.prepare(m, 0);
    QVERIFY(!st);
    QVERIFY2(st.error().message.contains(blocked.dir()) &&
                 st.error().message.contains(QLatin1String("--cache")),
             qPrintable(st.error().message));

    // A base bigger than the disk: refused before a byte is written, saying what is free. Where
    // the system does not say what is free (a chroot, whose mounts lie outside it), the cache
    // cannot tell, and the write's own error says it later.
    if (QStorageInfo(m_tmp.path()).bytesAvailable() < 0)
        QSKIP("this system does not say how much room its disk has");
    m.totalBytes = qint64(1) << 40;
    const BaseCache cache(m_tmp.filePath(QStringLiteral("cache-full")));
    st = cache.prepare(m, 0);
    QVERIFY(!st);
    QVERIFY2(st.error().message.contains(QLatin1String(" free; the run's base model needs")) &&
                 st.error().message.contains(cache.dir()),
             qPrintable(st.error().message));
}

void TestBasePack::nothingFrozenMeansNoBase() {
    auto p = BasePack::of(open(QString()));
    QVERIFY(p);
    QVERIFY(!*p);
}

QTEST_GUILESS_MAIN(TestBasePack)
#include "test_basepack.moc"
