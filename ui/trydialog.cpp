#include "ui/trydialog.h"

#include "engine/generation.h"

#include <QApplication>
#include <QCheckBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>
#include <QThread>
#include <QVBoxLayout>

namespace tandem::ui {

TryDialog::TryDialog(const QString& checkpoint, const QString& runName, bool tokenizer,
                     QWidget* parent, const QString& reference)
    : QDialog(parent)
    , m_checkpoint(checkpoint)
    , m_prompt(new QLineEdit)
    , m_tokens(new QSpinBox)
    , m_temperature(new QDoubleSpinBox)
    , m_topP(new QDoubleSpinBox)
    , m_chat(new QCheckBox(tr("Answer as in a chat")))
    , m_output(new QPlainTextEdit)
    , m_reference(reference)
    , m_status(new QLabel)
    , m_generate(new QPushButton(tr("Generate")))
    , m_stop(new QPushButton(tr("Stop"))) {
    setWindowTitle(tr("Try %1").arg(runName));
    setObjectName(QStringLiteral("tryDialog"));
    m_prompt->setObjectName(QStringLiteral("tryPrompt"));
    m_prompt->setPlaceholderText(tokenizer ? tr("A message for the model, or text to continue")
                                           : tr("Text for the model to continue"));
    m_tokens->setRange(1, 4096);
    m_tokens->setValue(200);
    m_tokens->setSuffix(tokenizer ? tr(" tokens") : tr(" bytes"));
    m_topP->setRange(0.05, 1);
    m_topP->setSingleStep(0.05);
    m_topP->setValue(0.9);
    m_topP->setToolTip(tr("Only the likeliest tokens that together make up this much "
                          "probability are drawn from."));
    m_chat->setObjectName(QStringLiteral("tryChat"));
    m_chat->setChecked(tokenizer);
    m_chat->setToolTip(tr("Writes your message with the model's chat template and shows the "
                          "assistant's answer; off, the model continues your text."));
    m_temperature->setRange(0, 5);
    m_temperature->setSingleStep(0.1);
    m_temperature->setValue(0.8);
    m_temperature->setToolTip(
        tr("0 always takes the likeliest next byte; higher values vary more."));
    m_output->setObjectName(QStringLiteral("tryOutput"));
    m_output->setReadOnly(true);
    m_status->setObjectName(QStringLiteral("tryStatus"));
    m_generate->setObjectName(QStringLiteral("tryGenerate"));
    m_generate->setDefault(true);
    m_stop->setEnabled(false);
    auto* form = new QFormLayout;
    form->addRow(tr("Prompt"), m_prompt);
    form->addRow(tr("Length"), m_tokens);
    form->addRow(tr("Temperature"), m_temperature);
    if (tokenizer) {
        form->addRow(tr("Top-p"), m_topP);
        form->addRow(QString(), m_chat);
    } else {
        m_topP->hide();
        m_chat->hide();
    }
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    buttons->addButton(m_generate, QDialogButtonBox::ActionRole);
    buttons->addButton(m_stop, QDialogButtonBox::ActionRole);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    if (m_reference.isEmpty()) {
        layout->addWidget(m_output, 1);
    } else {
        // Side by side: the tuned model's answer, and the one it started from.
        m_referenceOutput = new QPlainTextEdit;
        m_referenceOutput->setObjectName(QStringLiteral("tryReferenceOutput"));
        m_referenceOutput->setReadOnly(true);
        auto* panes = new QGridLayout;
        panes->addWidget(new QLabel(tr("Tuned")), 0, 0);
        panes->addWidget(new QLabel(tr("Reference: the model before tuning")), 0, 1);
        panes->addWidget(m_output, 1, 0);
        panes->addWidget(m_referenceOutput, 1, 1);
        panes->setRowStretch(1, 1);
        layout->addLayout(panes, 1);
    }
    layout->addWidget(m_status);
    layout->addWidget(buttons);
    connect(m_generate, &QPushButton::clicked, this, &TryDialog::generate);
    connect(m_stop, &QPushButton::clicked, this, &TryDialog::stop);
    connect(m_prompt, &QLineEdit::returnPressed, this, &TryDialog::generate);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    resize(m_referenceOutput ? 900 : 640, 420);
}

TryDialog::~TryDialog() {
    stop();
    if (m_thread)
        m_thread->wait();
}

QString TryDialog::text() const {
    return m_output->toPlainText();
}

QString TryDialog::referenceText() const {
    return m_referenceOutput ? m_referenceOutput->toPlainText() : QString();
}

void TryDialog::generate() {
    if (m_thread)
        return;
    GenerateOptions o;
    o.model = m_checkpoint;
    o.prompt = m_prompt->text().toUtf8();
    o.tokens = m_tokens->value();
    o.temperature = m_temperature->value();
    o.topP = m_topP->isHidden() ? 1.0 : m_topP->value();
    o.chat = m_chat->isChecked();
    o.seed = quint64(QDateTime::currentMSecsSinceEpoch());
    m_output->setPlainText(o.chat ? QString() : m_prompt->text());
    m_decoder.resetState();
    if (m_referenceOutput) {
        m_referenceOutput->setPlainText(o.chat ? QString() : m_prompt->text());
        m_referenceDecoder.resetState();
    }
    m_generate->setEnabled(false);
    m_stop->setEnabled(true);
    m_status->setText(tr("Generating…"));
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    auto cancel = m_cancel;
    QPointer<TryDialog> self(this);
    m_thread.reset(QThread::create([self, o, cancel, reference = m_reference] {
        const auto sink = [self, cancel](bool toReference) {
            return [self, cancel, toReference](const QByteArray& bytes) {
                QMetaObject::invokeMethod(
                    qApp,
                    [self, bytes, toReference] {
                        if (self)
                            self->append(bytes, toReference);
                    },
                    Qt::QueuedConnection);
                return !cancel->load();
            };
        };
        GenerateStats stats;
        Status st = tandem::generate(o, sink(false), &stats);
        // The same prompt and settings (and seed) through the model the run started from.
        if (st && !reference.isEmpty() && !cancel->load()) {
            GenerateOptions r = o;
            r.model = reference;
            GenerateStats unused;
            st = tandem::generate(r, sink(true), &unused);
        }
        const QString error = st ? QString() : st.error().message;
        const bool stopped = cancel->load();
        QMetaObject::invokeMethod(
            qApp,
            [self, error, stats, stopped] {
                if (self)
                    self->finished(error, stats.tokens, stats.tokensPerSecond(), stopped);
            },
            Qt::QueuedConnection);
    }));
    m_thread->start();
}

void TryDialog::stop() {
    if (m_cancel)
        m_cancel->store(true);
}

void TryDialog::append(const QByteArray& bytes, bool reference) {
    QPlainTextEdit* out = reference && m_referenceOutput ? m_referenceOutput : m_output;
    out->moveCursor(QTextCursor::End);
    out->insertPlainText(reference ? m_referenceDecoder.decode(bytes) : m_decoder.decode(bytes));
}

void TryDialog::finished(const QString& error, qint64 tokens, double tokensPerS, bool stopped) {
    m_thread->wait(); // it has just returned
    m_thread.reset();
    m_generate->setEnabled(true);
    m_stop->setEnabled(false);
    const QString speed = tr("%n token(s), %1 tokens/s", nullptr, int(tokens))
                              .arg(QLocale().toString(tokensPerS, 'f', 1));
    m_status->setText(!error.isEmpty() ? tr("Could not generate.")
                      : stopped        ? tr("Stopped: %1.").arg(speed)
                                       : tr("Done: %1.").arg(speed));
    if (!error.isEmpty())
        m_output->appendPlainText(QLatin1Char('\n') + tr("Could not generate: %1").arg(error));
    Q_EMIT done(error);
}

} // namespace tandem::ui
