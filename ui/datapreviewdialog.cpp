#include "ui/datapreviewdialog.h"

#include "ui/livechart.h"

#include <QApplication>
#include <QDialogButtonBox>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QPointF>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QTextBrowser>
#include <QThread>
#include <QVBoxLayout>

#include <algorithm>

namespace tandem::ui {

namespace {
// The documents' lengths as a histogram drawn as a line: the count in each of about twenty
// buckets of equal width, at the bucket's middle.
QList<QPointF> histogramOf(const std::vector<int64_t>& lengths, int64_t context) {
    const int64_t longest =
        lengths.empty() ? context : *std::max_element(lengths.begin(), lengths.end());
    const int64_t width = std::max<int64_t>(1, (std::max(longest, context) + 19) / 20);
    const int n = int(std::max(longest, context) / width + 1);
    QList<QPointF> points;
    for (int i = 0; i < n; ++i)
        points << QPointF(double(i * width) + double(width) / 2, 0);
    for (int64_t len : lengths)
        points[int(std::clamp<int64_t>(len / width, 0, n - 1))].ry() += 1;
    return points;
}
} // namespace

DataPreviewDialog::DataPreviewDialog(const QString& spec, const QString& tokenizerDir,
                                     QWidget* parent)
    : QDialog(parent)
    , m_summary(new QLabel(tr("Reading the data…")))
    , m_documents(new QTextBrowser)
    , m_histogram(new LiveChart(LiveChart::Kind::Lines))
    , m_refused(new QListWidget) {
    setObjectName(QStringLiteral("dataPreview"));
    setWindowTitle(tr("Preview of the data"));
    m_summary->setObjectName(QStringLiteral("previewSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_documents->setObjectName(QStringLiteral("previewDocuments"));
    m_histogram->setObjectName(QStringLiteral("previewHistogram"));
    m_histogram->setTitles(tr("Tokens per document"), tr("Tokens"), tr("Documents"));
    m_histogram->addSeries(tr("Documents"), QColor(0x1f, 0x77, 0xb4));
    m_histogram->addSeries(tr("The context"), QColor(0xd6, 0x27, 0x28));
    m_histogram->setPointsVisible(true);
    m_histogram->setLegendVisible(true);
    m_refused->setObjectName(QStringLiteral("previewRefused"));
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_documents);
    split->addWidget(m_histogram);
    split->addWidget(m_refused);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setStretchFactor(2, 1);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    // Qt ships no translation of its own buttons for every language here.
    buttons->button(QDialogButtonBox::Close)->setText(tr("Close"));
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(split, 1);
    layout->addWidget(buttons);
    resize(820, 720);
    QPointer<DataPreviewDialog> self(this);
    m_thread.reset(QThread::create([self, spec, tokenizerDir] {
        const Expected<DataPreview> p = previewData(spec, tokenizerDir);
        QMetaObject::invokeMethod(
            qApp,
            [self, p] {
                if (self)
                    self->present(p);
            },
            Qt::QueuedConnection);
    }));
    m_thread->start();
}

DataPreviewDialog::~DataPreviewDialog() {
    if (m_thread)
        m_thread->wait();
}

QString DataPreviewDialog::summary() const {
    return m_summary->text();
}

QString DataPreviewDialog::documentsHtml() const {
    return m_documents->toHtml();
}

QStringList DataPreviewDialog::refusedLines() const {
    QStringList out;
    for (int i = 0; i < m_refused->count(); ++i)
        out << m_refused->item(i)->text();
    return out;
}

void DataPreviewDialog::present(const Expected<DataPreview>& read) {
    if (!read) {
        m_summary->setText(tr("The data cannot be previewed: %1").arg(read.error().message));
        Q_EMIT ready(false);
        return;
    }
    const DataPreview& p = *read;
    const QLocale l;
    const bool chat = p.kind == QLatin1String("chat");
    int64_t tokens = 0;
    for (int64_t n : p.lengths)
        tokens += n;
    QStringList parts;
    parts << (chat ? tr("%n conversation(s)", nullptr, int(p.lengths.size()))
                   : tr("%n document(s)", nullptr, int(p.lengths.size()))) +
                 tr(", %1 tokens").arg(l.toString(qint64(tokens)));
    parts << tr("%1 longer than the context of %2 tokens (each is split across windows)")
                 .arg(l.toString(qint64(p.longer)), l.toString(qint64(p.context)));
    parts << tr("%1 cut by a window's edge").arg(l.toString(qint64(p.cut)));
    parts << tr("%1 windows of %2 tokens, %3 of them left out for holding nothing to learn")
                 .arg(l.toString(qint64(p.windows)), l.toString(qint64(p.context)),
                      l.toString(qint64(p.leftOut)));
    if (!p.refused.isEmpty())
        parts << tr("%n line(s) cannot be read (listed below); a run stops at the first", nullptr,
                    int(p.refused.size()));
    m_summary->setText(parts.join(QStringLiteral("; ")) + QLatin1Char('.'));
    // The documents: trained tokens on green, the rest grey.
    QString html;
    for (const DataPreview::Document& d : p.first) {
        html += QStringLiteral("<p><b>%1</b></p><pre style=\"white-space: pre-wrap\">")
                    .arg(tr("Line %1: %2 tokens, %3 trained")
                             .arg(d.line)
                             .arg(l.toString(qint64(d.tokens)), l.toString(qint64(d.trained))));
        for (const auto& [text, trained] : d.pieces)
            html += trained ? QStringLiteral("<span style=\"background-color:#c8eec0\">%1</span>")
                                  .arg(text.toHtmlEscaped())
                            : QStringLiteral("<span style=\"color:#777777\">%1</span>")
                                  .arg(text.toHtmlEscaped());
        html += QStringLiteral("</pre>");
    }
    m_documents->setHtml(html);
    // The counts, and the context as an upright line: what lies right of it is split.
    double most = 0;
    for (const QPointF& pt : histogramOf(p.lengths, p.context)) {
        m_histogram->append(0, pt.x(), pt.y());
        most = std::max(most, pt.y());
    }
    m_histogram->append(1, double(p.context), 0);
    m_histogram->append(1, double(p.context), most);
    m_refused->addItems(p.refused);
    m_refused->setVisible(!p.refused.isEmpty());
    Q_EMIT ready(true);
}

} // namespace tandem::ui
