#pragma once

// "Try it…", the playground: a language model from History answers. A Hugging Face model
// answers as a chat, through its tokenizer and chat template: a system message, several turns,
// Enter to send and Shift+Enter for a new line, Stop, Regenerate and New chat. With "Answer as
// in a chat" off, or for a byte-level model, it continues the text. Generation runs on a thread
// of its own; the window stays responsive and Enter never closes it. A model to compare with
// (the base of a LoRA run, the model a full or preference run started from) answers the same
// messages beside it, with its own conversation. The sampling settings and the system message
// are kept between openings when the dialog is given a file to keep them in.

#include "engine/generation.h"

#include <QDialog>
#include <QList>
#include <QString>
#include <QStringDecoder>

#include <atomic>
#include <memory>

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QThread;

namespace tandem::ui {

class TryDialog : public QDialog {
    Q_OBJECT

public:
    // `checkpoint` is the run's checkpoint.tandem; `tokenizer`: a Hugging Face model's, whose
    // folder has a tokenizer (tokens, not bytes, a chat answer, top-p). `reference`: the model
    // to answer beside it, as --model names it, or empty. `statePath`: an INI file that keeps
    // the settings (empty: not kept).
    TryDialog(const QString& checkpoint, const QString& runName, bool tokenizer = false,
              QWidget* parent = nullptr, const QString& reference = QString(),
              const QString& statePath = QString());
    ~TryDialog() override;

    // What the panes show (the conversation, or the prompt and its continuation), and the
    // finished turns of the chat; for tests.
    QString text() const;
    QString referenceText() const;
    QList<GenerateTurn> conversation() const { return m_turns; }
    QList<GenerateTurn> referenceConversation() const { return m_referenceTurns; }
    bool generating() const { return bool(m_thread); }

public Q_SLOTS:
    // Sends the prompt field's message (or continues its text); nothing when it is empty or an
    // answer is being made.
    void generate();
    // The last message answered again, in place of its answer.
    void regenerate();
    void newChat();
    void stop();

Q_SIGNALS:
    // Generation ended: finished, stopped, or failed with `error` (empty otherwise).
    void done(const QString& error);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;

private:
    void start(const QString& message);
    void append(const QByteArray& bytes, bool reference);
    void finished(const QString& error, qint64 tokens, double tokensPerS, bool stopped);
    bool chatting() const;
    void showTranscripts();
    void updateButtons();
    void saveState() const;

    QString m_checkpoint;
    QString m_statePath;
    QPlainTextEdit* m_prompt;
    QLineEdit* m_system;
    QSpinBox* m_tokens;
    QDoubleSpinBox* m_temperature;
    QDoubleSpinBox* m_topP;
    QCheckBox* m_chat;
    QPlainTextEdit* m_output;
    QString m_reference;                         // the model answering beside it; empty: none
    QPlainTextEdit* m_referenceOutput = nullptr; // its answer
    QLabel* m_status; // generating, then done or stopped, with the tokens and their speed
    QPushButton* m_generate;
    QPushButton* m_regenerate;
    QPushButton* m_newChat;
    QPushButton* m_stop;
    // The chat so far on each side, the message being answered and the answers as they come.
    QList<GenerateTurn> m_turns, m_referenceTurns;
    QString m_message, m_answer, m_referenceAnswer;
    QStringDecoder m_decoder{QStringDecoder::Utf8};
    QStringDecoder m_referenceDecoder{QStringDecoder::Utf8};
    std::shared_ptr<std::atomic<bool>> m_cancel;
    std::unique_ptr<QThread> m_thread;
};

} // namespace tandem::ui
