// The New run form's sizes: the batch, the epochs and the training samples; the Context field,
// how many tokens a window of text holds for the text kinds (text, tokens, JSON Lines and
// chat), with the tokens a step takes beside the batch; and the check's notes under the fields.

#include "ui/runform.h"

#include "ui/datapreviewdialog.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>

#include <algorithm>
#include <limits>

namespace tandem::ui {

namespace {

// What the readers use where a spec names no context (formats/textdata.cpp, tokenstream.cpp).
constexpr int kDefaultContext = 256;
constexpr int kMaxContext = 1 << 16;

const QRegularExpression& contextOption() {
    static const QRegularExpression re(QStringLiteral(",\\s*context\\s*=\\s*(\\d+)"));
    return re;
}

} // namespace

void RunForm::addSizeRows(QFormLayout* form) {
    m_batch = new QSpinBox;
    m_batch->setObjectName(QStringLiteral("batchSpin"));
    m_batch->setRange(1, 1 << 20);
    m_epochs = new QSpinBox;
    m_epochs->setObjectName(QStringLiteral("epochsSpin"));
    m_epochs->setRange(1, 100000);
    auto* sizeRow = new QHBoxLayout;
    sizeRow->addWidget(m_batch);
    sizeRow->addWidget(new QLabel(tr("Epochs")));
    sizeRow->addWidget(m_epochs);
    m_tokensPerStep = new QLabel;
    m_tokensPerStep->setObjectName(QStringLiteral("tokensPerStep"));
    sizeRow->addWidget(m_tokensPerStep);
    sizeRow->addStretch(1);
    form->addRow(tr("Batch (all machines)"), sizeRow);
    // What a check said of too few steps (and the batch it set) is of the old sizes.
    connect(m_batch, &QSpinBox::valueChanged, this, [this] {
        m_batchChosen = m_batchChosen || !m_settingBatch;
        if (!m_settingBatch)
            setCheck(Check::NotChecked, QString());
        updateTokensPerStep();
    });
    connect(m_epochs, &QSpinBox::valueChanged, this,
            [this] { setCheck(Check::NotChecked, QString()); });
    // Part of the data, for a quick first run (the command line's --limit-train).
    m_limitTrain = new QSpinBox;
    m_limitTrain->setObjectName(QStringLiteral("limitTrainSpin"));
    m_limitTrain->setRange(0, std::numeric_limits<int>::max());
    m_limitTrain->setSingleStep(1000);
    m_limitTrain->setSpecialValueText(tr("all of them"));
    m_limitTrain->setToolTip(tr("Train on the first N training samples only; 0 uses them all."));
    form->addRow(tr("Training samples"), m_limitTrain);
    connect(m_limitTrain, &QSpinBox::valueChanged, this,
            [this] { setCheck(Check::NotChecked, QString()); });
}

void RunForm::addContextRow(QFormLayout* form) {
    m_context = new QSpinBox;
    m_context->setObjectName(QStringLiteral("contextSpin"));
    m_context->setRange(1, kMaxContext);
    m_context->setValue(kDefaultContext);
    m_context->setSuffix(tr(" tokens"));
    m_context->setToolTip(tr("How many tokens the model sees at once: each training window holds "
                             "this many, and predicts each next one."));
    form->addRow(tr("Context"), m_context);
    connect(m_context, &QSpinBox::valueChanged, this, [this] {
        setCheck(Check::NotChecked, QString());
        updateTokensPerStep();
    });
    connect(m_dataPath, &QLineEdit::editingFinished, this, &RunForm::takeContextFromPath);
}

bool RunForm::takesContext() const {
    static const QStringList kinds{QStringLiteral("text:"), QStringLiteral("tokens:"),
                                   QStringLiteral("jsonl:"), QStringLiteral("chat:"),
                                   QStringLiteral("prefs:")};
    return kinds.contains(dataPrefix());
}

void RunForm::takeContextFromPath() {
    QString path = m_dataPath->text();
    const QString before = path;
    setContextFromSpec(path);
    if (path != before)
        m_dataPath->setText(path);
}

void RunForm::setContextFromSpec(QString& path) {
    const QRegularExpressionMatch m = contextOption().match(path);
    if (!m.hasMatch()) {
        m_context->setValue(kDefaultContext);
        return;
    }
    m_context->setValue(std::clamp(m.captured(1).toInt(), 1, kMaxContext));
    path.remove(m.capturedStart(), m.capturedLength());
}

QString RunForm::withContext(const QString& path) const {
    if (!takesContext() || m_context->value() == kDefaultContext ||
        contextOption().match(path).hasMatch())
        return path;
    return path + QStringLiteral(",context=%1").arg(m_context->value());
}

QString RunForm::adoptCheck(const RunCheck& r) {
    const QString summary =
        r.preview.isEmpty() ? r.summary : r.summary + QLatin1Char('\n') + r.preview;
    if (r.warning.isEmpty())
        return summary;
    QString text = summary + QStringLiteral("\n⚠ ") + r.warning;
    if (!m_batchChosen && r.proposedBatch > 0 && r.proposedBatch < m_batch->value()) {
        m_settingBatch = true;
        m_batch->setValue(r.proposedBatch);
        m_settingBatch = false;
        text += QStringLiteral("\n✔ ") +
                tr("Batch set to %1 for this data; set it yourself to keep another.")
                    .arg(r.proposedBatch);
    }
    return text;
}

void RunForm::showCheckNote(Check c, const QString& message, ErrorSubject subject) {
    if (!m_modelNote || !m_dataNote)
        return;
    const ErrorSubject field =
        subject == ErrorSubject::Model || subject == ErrorSubject::Dataset ? subject : m_lastChosen;
    QLabel* note = field == ErrorSubject::Model ? m_modelNote : m_dataNote;
    for (QLabel* l : {m_modelNote, m_dataNote}) {
        l->clear();
        l->setVisible(false);
        l->setWordWrap(true);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    // Only a refusal: a note that came and went with every check would move the fields below
    // it under the pointer. The form's foot says the rest.
    const QString text = c == Check::Failed ? QStringLiteral("✘ ") + message : QString();
    note->setText(text);
    note->setVisible(!text.isEmpty());
}

void RunForm::updateTokensPerStep() {
    if (!m_tokensPerStep || !m_batch || !m_context)
        return;
    const bool text = takesContext();
    m_context->setEnabled(text);
    m_tokensPerStep->setVisible(text);
    if (text)
        m_tokensPerStep->setText(
            tr("= %1 tokens a step")
                .arg(QLocale().toString(qint64(m_batch->value()) * m_context->value())));
}

QPushButton* RunForm::makePreviewButton() {
    m_preview = new QPushButton(tr("Preview…"));
    m_preview->setObjectName(QStringLiteral("previewButton"));
    m_preview->setToolTip(tr("The first conversations as the model will read them, the tokens "
                             "that train, the lengths against the context, and any line that "
                             "cannot be read."));
    const auto update = [this] {
        const QString prefix = dataPrefix();
        m_preview->setEnabled(
            (prefix == QLatin1String("chat:") || prefix == QLatin1String("jsonl:")) &&
            m_model->currentData().toString() == kModelHfItem);
    };
    connect(m_data, &QComboBox::currentIndexChanged, this, update);
    connect(m_model, &QComboBox::currentIndexChanged, this, update);
    connect(m_preview, &QPushButton::clicked, this, &RunForm::previewData);
    update();
    return m_preview;
}

DataPreviewDialog* RunForm::previewData() {
    auto* dialog = new DataPreviewDialog(dataSpec(), m_modelPath->text().trimmed(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
    return dialog;
}

} // namespace tandem::ui
