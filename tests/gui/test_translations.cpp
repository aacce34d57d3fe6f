// Every shipped translation is complete, keeps its placeholders, and Arabic reads right to
// left.

#include "testpaths.h"
#include "ui/format.h"
#include "ui/language.h"
#include "ui/mainwindow.h"

#include <QApplication>
#include <QDir>
#include <QDomDocument>
#include <QFile>
#include <QPushButton>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QTextLayout>

using namespace tandem::ui;

class TestTranslations : public QObject {
    Q_OBJECT

    static QSet<QString> placeholders(const QString& s) {
        QSet<QString> out;
        static const QRegularExpression re(QStringLiteral("%(\\d|n)"));
        for (auto it = re.globalMatch(s); it.hasNext();)
            out << it.next().captured(0);
        return out;
    }

private Q_SLOTS:
    void complete_data() {
        QTest::addColumn<QString>("file");
        for (const Language& l : supportedLanguages())
            if (l.code != QLatin1String("en"))
                QTest::newRow(qPrintable(l.code))
                    << testpaths::tsDir() + QStringLiteral("/tandem_%1.ts").arg(l.code);
    }

    void complete() {
        QFETCH(QString, file);
        QFile f(file);
        QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(file));
        QDomDocument doc;
        QVERIFY(doc.setContent(&f));
        const QDomNodeList messages = doc.elementsByTagName(QStringLiteral("message"));
        QVERIFY2(messages.size() > 150, qPrintable(QString::number(messages.size())));
        QStringList problems;
        for (int i = 0; i < messages.size(); ++i) {
            const QDomElement m = messages.at(i).toElement();
            const QString source = m.firstChildElement(QStringLiteral("source")).text();
            const QDomElement t = m.firstChildElement(QStringLiteral("translation"));
            const QString type = t.attribute(QStringLiteral("type"));
            if (!type.isEmpty()) {
                problems << QStringLiteral("%1: \"%2\"").arg(type, source);
                continue;
            }
            QStringList forms;
            const QDomNodeList nf = t.elementsByTagName(QStringLiteral("numerusform"));
            for (int k = 0; k < nf.size(); ++k)
                forms << nf.at(k).toElement().text();
            if (forms.isEmpty())
                forms << t.text();
            for (const QString& text : forms) {
                if (text.trimmed().isEmpty() && !source.trimmed().isEmpty())
                    problems << QStringLiteral("empty: \"%1\"").arg(source);
                else if (placeholders(text) != placeholders(source))
                    problems << QStringLiteral("placeholders differ: \"%1\" -> \"%2\"")
                                    .arg(source, text);
            }
        }
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
    }

    void arabicReadsRightToLeft() {
        auto* app = qobject_cast<QApplication*>(QCoreApplication::instance());
        QCOMPARE(applyLanguage(*app, QStringLiteral("ar")), QStringLiteral("ar"));
        QCOMPARE(QApplication::layoutDirection(), Qt::RightToLeft);
        QTemporaryDir home;
        WindowContext ctx;
        ctx.home = home.path();
        ctx.node.home = home.path();
        ctx.node.listenAddress = QHostAddress(QHostAddress::LocalHost);
        ctx.node.listenPort = 0;
        ctx.node.discoveryPort = 0;
        ctx.node.announceTo = QList<QHostAddress>{};
        MainWindow w(ctx);
        QCOMPARE(w.layoutDirection(), Qt::RightToLeft);
        auto* start = w.findChild<QPushButton*>(QStringLiteral("startButton"));
        QVERIFY(start->isRightToLeft());
        // The label is Arabic, not the English source.
        QVERIFY(start->text() != QLatin1String("Start"));
        QVERIFY(start->text().at(0).script() == QChar::Script_Arabic);

        // The pairing code reads left to right in Arabic text: "123 456", not "456 123".
        const QString sentence =
            QStringLiteral("تحقق من الرمز: ") + pairingCodeText(QStringLiteral("123456"));
        QTextLayout layout(sentence, start->font());
        QTextOption option;
        option.setTextDirection(Qt::RightToLeft);
        layout.setTextOption(option);
        layout.beginLayout();
        QTextLine line = layout.createLine();
        line.setLineWidth(1000);
        layout.endLayout();
        // Compare the middles of '2' and '5', inside each group (a group's first character
        // has its cursor at the run's boundary).
        auto middle = [&](QChar c) {
            const int i = int(sentence.indexOf(c));
            return (line.cursorToX(i) + line.cursorToX(i + 1)) / 2;
        };
        QVERIFY2(middle(QLatin1Char('2')) < middle(QLatin1Char('5')),
                 qPrintable(QStringLiteral("x(2)=%1 x(5)=%2")
                                .arg(middle(QLatin1Char('2')))
                                .arg(middle(QLatin1Char('5')))));

        applyLanguage(*app, QStringLiteral("de"));
        QCOMPARE(QApplication::layoutDirection(), Qt::LeftToRight);
        MainWindow german(ctx);
        QCOMPARE(german.findChild<QPushButton*>(QStringLiteral("startButton"))->text(),
                 QStringLiteral("Starten"));
        applyLanguage(*app, QStringLiteral("en"));
        QCOMPARE(QApplication::layoutDirection(), Qt::LeftToRight);
        // English plurals come from tandem_en.ts.
        tandem::DeviceInfo cpu;
        cpu.kind = tandem::DeviceKind::Cpu;
        cpu.name = QStringLiteral("Test CPU");
        cpu.cores = 2;
        QVERIFY2(describeDevice(cpu).contains(QStringLiteral("2 cores")),
                 qPrintable(describeDevice(cpu)));
        cpu.cores = 1;
        QVERIFY2(describeDevice(cpu).contains(QStringLiteral("1 core,")),
                 qPrintable(describeDevice(cpu)));
    }
};

QTEST_MAIN(TestTranslations)
#include "test_translations.moc"
