// The New run form's Context field: how many tokens a window of text holds, for the text kinds
// (text, tokens, JSON Lines and chat), and the tokens a step takes beside the batch.

#include "ui/runform.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QRegularExpression>
#include <QSpinBox>

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
                                   QStringLiteral("jsonl:"), QStringLiteral("chat:")};
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
    QString text;
    if (c == Check::Checking)
        text = tr("Checking…");
    else if (c == Check::Ok)
        text = QStringLiteral("✔ ") + message;
    else if (c == Check::Failed)
        text = QStringLiteral("✘ ") + message;
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

} // namespace tandem::ui
