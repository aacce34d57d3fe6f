#include "ui/trydialog.h"

#include <QApplication>
#include <QCheckBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QThread>
#include <QVBoxLayout>

namespace tandem::ui {

namespace {
bool isEnter(const QKeyEvent* e) {
    return e->key() == Qt::Key_Return || e->key() == Qt::Key_Enter;
}
} // namespace

TryDialog::TryDialog(const QString& checkpoint, const QString& runName, bool tokenizer,
                     QWidget* parent, const QString& reference, const QString& statePath)
    : QDialog(parent)
    , m_checkpoint(checkpoint)
    , m_statePath(statePath)
    , m_prompt(new QPlainTextEdit)
    , m_system(new QLineEdit)
    , m_tokens(new QSpinBox)
    , m_temperature(new QDoubleSpinBox)
    , m_topP(new QDoubleSpinBox)
    , m_chat(new QCheckBox(tr("Answer as in a chat")))
    , m_output(new QPlainTextEdit)
    , m_reference(reference)
    , m_status(new QLabel)
    , m_generate(new QPushButton(tr("Send")))
    , m_regenerate(new QPushButton(tr("Regenerate")))
    , m_newChat(new QPushButton(tr("New chat")))
    , m_stop(new QPushButton(tr("Stop"))) {
    setWindowTitle(tr("Try %1").arg(runName));
    setObjectName(QStringLiteral("tryDialog"));
    m_prompt->setObjectName(QStringLiteral("tryPrompt"));
    m_prompt->setPlaceholderText(
        tokenizer ? tr("A message for the model, or text to continue. Enter sends; Shift+Enter "
                       "starts a new line.")
                  : tr("Text for the model to continue. Enter sends; Shift+Enter starts a new "
                       "line."));
    m_prompt->setTabChangesFocus(true);
    m_prompt->setMaximumHeight(m_prompt->fontMetrics().lineSpacing() * 4 + 12);
    m_prompt->installEventFilter(this);
    m_system->setObjectName(QStringLiteral("trySystem"));
    m_system->setPlaceholderText(tr("Optional: how the model should answer"));
    m_tokens->setObjectName(QStringLiteral("tryLength"));
    m_tokens->setRange(1, 4096);
    m_tokens->setValue(200);
    m_tokens->setSuffix(tokenizer ? tr(" tokens") : tr(" bytes"));
    m_topP->setObjectName(QStringLiteral("tryTopP"));
    m_topP->setRange(0.05, 1);
    m_topP->setSingleStep(0.05);
    m_topP->setValue(0.9);
    m_topP->setToolTip(tr("Only the likeliest tokens that together make up this much "
                          "probability are drawn from."));
    m_chat->setObjectName(QStringLiteral("tryChat"));
    m_chat->setChecked(tokenizer);
    m_chat->setToolTip(tr("Writes your messages with the model's chat template and shows the "
                          "assistant's answers; off, the model continues your text."));
    m_temperature->setObjectName(QStringLiteral("tryTemperature"));
    m_temperature->setRange(0, 5);
    m_temperature->setSingleStep(0.1);
    m_temperature->setValue(0.8);
    m_temperature->setToolTip(
        tr("0 always takes the likeliest next token; higher values vary more."));
    if (!m_statePath.isEmpty()) {
        QSettings s(m_statePath, QSettings::IniFormat);
        s.beginGroup(QStringLiteral("try"));
        m_tokens->setValue(s.value(QStringLiteral("length"), m_tokens->value()).toInt());
        m_temperature->setValue(
            s.value(QStringLiteral("temperature"), m_temperature->value()).toDouble());
        m_topP->setValue(s.value(QStringLiteral("topP"), m_topP->value()).toDouble());
        m_system->setText(s.value(QStringLiteral("system")).toString());
    }
    m_output->setObjectName(QStringLiteral("tryOutput"));
    m_output->setReadOnly(true);
    m_status->setObjectName(QStringLiteral("tryStatus"));
    m_generate->setObjectName(QStringLiteral("tryGenerate"));
    m_regenerate->setObjectName(QStringLiteral("tryRegenerate"));
    m_newChat->setObjectName(QStringLiteral("tryNewChat"));
    m_stop->setObjectName(QStringLiteral("tryStop"));
    auto* form = new QFormLayout;
    if (tokenizer) {
        form->addRow(QString(), m_chat);
        form->addRow(tr("System"), m_system);
    } else {
        m_chat->hide();
        m_chat->setChecked(false);
        m_system->hide();
    }
    form->addRow(tr("Length"), m_tokens);
    form->addRow(tr("Temperature"), m_temperature);
    if (tokenizer)
        form->addRow(tr("Top-p"), m_topP);
    else
        m_topP->hide();
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    // Qt ships no translation of its own buttons for every language here.
    buttons->button(QDialogButtonBox::Close)->setText(tr("Close"));
    for (QPushButton* b : {m_generate, m_stop, m_regenerate, m_newChat})
        buttons->addButton(b, QDialogButtonBox::ActionRole);
    // Enter belongs to the prompt: no button is the dialog's default.
    for (QPushButton* b : buttons->findChildren<QPushButton*>()) {
        b->setAutoDefault(false);
        b->setDefault(false);
    }
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
    layout->addWidget(m_prompt);
    layout->addWidget(m_status);
    layout->addWidget(buttons);
    connect(m_generate, &QPushButton::clicked, this, &TryDialog::generate);
    connect(m_regenerate, &QPushButton::clicked, this, &TryDialog::regenerate);
    connect(m_newChat, &QPushButton::clicked, this, &TryDialog::newChat);
    connect(m_stop, &QPushButton::clicked, this, &TryDialog::stop);
    connect(m_chat, &QCheckBox::toggled, this, &TryDialog::newChat);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    resize(m_referenceOutput ? 900 : 640, 480);
    updateButtons();
    m_prompt->setFocus();
}

TryDialog::~TryDialog() {
    saveState();
    stop();
    if (m_thread)
        m_thread->wait();
}

void TryDialog::saveState() const {
    if (m_statePath.isEmpty())
        return;
    QSettings s(m_statePath, QSettings::IniFormat);
    s.beginGroup(QStringLiteral("try"));
    s.setValue(QStringLiteral("length"), m_tokens->value());
    s.setValue(QStringLiteral("temperature"), m_temperature->value());
    s.setValue(QStringLiteral("topP"), m_topP->value());
    s.setValue(QStringLiteral("system"), m_system->text());
}

bool TryDialog::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_prompt && event->type() == QEvent::KeyPress) {
        auto* key = static_cast<QKeyEvent*>(event);
        if (isEnter(key)) {
            if (key->modifiers() & Qt::ShiftModifier)
                m_prompt->insertPlainText(QStringLiteral("\n"));
            else
                generate();
            return true;
        }
    }
    return QDialog::eventFilter(watched, event);
}

void TryDialog::keyPressEvent(QKeyEvent* event) {
    if (isEnter(event)) { // never closes the dialog, nor clicks a button
        event->accept();
        return;
    }
    QDialog::keyPressEvent(event);
}

QString TryDialog::text() const {
    return m_output->toPlainText();
}

QString TryDialog::referenceText() const {
    return m_referenceOutput ? m_referenceOutput->toPlainText() : QString();
}

bool TryDialog::chatting() const {
    return m_chat->isChecked();
}

void TryDialog::generate() {
    const QString message = m_prompt->toPlainText();
    if (m_thread || message.trimmed().isEmpty())
        return;
    if (chatting())
        m_prompt->clear();
    start(message);
}

void TryDialog::regenerate() {
    if (m_thread || m_message.isEmpty())
        return;
    if (chatting() && !m_turns.isEmpty()) {
        m_turns.removeLast();
        if (!m_referenceTurns.isEmpty())
            m_referenceTurns.removeLast();
    }
    start(m_message);
}

void TryDialog::newChat() {
    if (m_thread)
        return;
    m_turns.clear();
    m_referenceTurns.clear();
    m_message.clear();
    showTranscripts();
    m_status->clear();
    updateButtons();
}

void TryDialog::showTranscripts() {
    const auto transcript = [this](const QList<GenerateTurn>& turns) {
        QStringList parts;
        for (const GenerateTurn& t : turns)
            parts << tr("You: %1").arg(t.user) + QLatin1Char('\n') + t.assistant;
        return parts.join(QStringLiteral("\n\n"));
    };
    m_output->setPlainText(transcript(m_turns));
    if (m_referenceOutput)
        m_referenceOutput->setPlainText(transcript(m_referenceTurns));
}

void TryDialog::updateButtons() {
    const bool busy = bool(m_thread);
    m_generate->setEnabled(!busy);
    m_stop->setEnabled(busy);
    m_regenerate->setEnabled(!busy && !m_message.isEmpty());
    m_newChat->setEnabled(!busy && chatting() && !m_turns.isEmpty());
    m_chat->setEnabled(!busy);
    m_system->setEnabled(!busy && chatting());
}

void TryDialog::start(const QString& message) {
    GenerateOptions o;
    o.model = m_checkpoint;
    o.prompt = message.toUtf8();
    o.tokens = m_tokens->value();
    o.temperature = m_temperature->value();
    o.topP = m_topP->isHidden() ? 1.0 : m_topP->value();
    o.chat = chatting();
    o.system = o.chat ? m_system->text() : QString();
    o.history = o.chat ? m_turns : QList<GenerateTurn>();
    o.seed = quint64(QDateTime::currentMSecsSinceEpoch());
    m_message = message;
    m_answer.clear();
    m_referenceAnswer.clear();
    m_decoder.resetState();
    m_referenceDecoder.resetState();
    // The panes: the conversation and the new message, or the text to continue.
    if (o.chat) {
        showTranscripts();
        const QString head = (m_turns.isEmpty() ? QString() : QStringLiteral("\n\n")) +
                             tr("You: %1").arg(message) + QLatin1Char('\n');
        for (QPlainTextEdit* pane : {m_output, m_referenceOutput})
            if (pane) {
                pane->moveCursor(QTextCursor::End);
                pane->insertPlainText(head);
            }
    } else {
        m_output->setPlainText(message);
        if (m_referenceOutput)
            m_referenceOutput->setPlainText(message);
    }
    GenerateOptions r = o;
    r.model = m_reference;
    r.history = o.chat ? m_referenceTurns : QList<GenerateTurn>();
    m_status->setText(tr("Generating…"));
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    auto cancel = m_cancel;
    QPointer<TryDialog> self(this);
    m_thread.reset(QThread::create([self, o, r, cancel] {
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
        // The same messages and settings (and seed) through the model to compare with.
        if (st && !r.model.isEmpty() && !cancel->load()) {
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
    updateButtons();
}

void TryDialog::stop() {
    if (m_cancel)
        m_cancel->store(true);
}

void TryDialog::append(const QByteArray& bytes, bool reference) {
    QPlainTextEdit* out = reference && m_referenceOutput ? m_referenceOutput : m_output;
    const QString text = reference ? m_referenceDecoder.decode(bytes) : m_decoder.decode(bytes);
    (reference ? m_referenceAnswer : m_answer) += text;
    out->moveCursor(QTextCursor::End);
    out->insertPlainText(text);
}

void TryDialog::finished(const QString& error, qint64 tokens, double tokensPerS, bool stopped) {
    m_thread->wait(); // it has just returned
    m_thread.reset();
    // A stopped answer stays in the conversation as far as it came; a failed one does not.
    if (chatting() && error.isEmpty()) {
        m_turns.append({m_message, m_answer});
        if (m_referenceOutput)
            m_referenceTurns.append({m_message, m_referenceAnswer});
    }
    updateButtons();
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
