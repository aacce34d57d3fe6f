#pragma once

// "Try it…": a language model from History continues a prompt, its text appearing as it is
// made; a Hugging Face model answers it as a chat, through its tokenizer and chat template.
// Generation runs on a thread of its own; the window stays responsive and Stop ends it. A
// preference-tuned run's answer is shown beside the one of the model it started from (DPO's
// reference), for the same prompt and settings.

#include <QDialog>
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
    // to answer beside it (a preference run's starting model, as --model names it), or empty.
    TryDialog(const QString& checkpoint, const QString& runName, bool tokenizer = false,
              QWidget* parent = nullptr, const QString& reference = QString());
    ~TryDialog() override;

    // The text so far (prompt and continuation), and the reference's beside it; for tests.
    QString text() const;
    QString referenceText() const;
    bool generating() const { return bool(m_thread); }

public Q_SLOTS:
    void generate();
    void stop();

Q_SIGNALS:
    // Generation ended: finished, stopped, or failed with `error` (empty otherwise).
    void done(const QString& error);

private:
    void append(const QByteArray& bytes, bool reference);
    void finished(const QString& error, qint64 tokens, double tokensPerS, bool stopped);

    QString m_checkpoint;
    QLineEdit* m_prompt;
    QSpinBox* m_tokens;
    QDoubleSpinBox* m_temperature;
    QDoubleSpinBox* m_topP;
    QCheckBox* m_chat;
    QPlainTextEdit* m_output;
    QString m_reference;                         // the model answering beside it; empty: none
    QPlainTextEdit* m_referenceOutput = nullptr; // its answer
    QStringDecoder m_referenceDecoder{QStringDecoder::Utf8};
    QLabel* m_status; // generating, then done or stopped, with the tokens and their speed
    QPushButton* m_generate;
    QPushButton* m_stop;
    QStringDecoder m_decoder{QStringDecoder::Utf8};
    std::shared_ptr<std::atomic<bool>> m_cancel;
    std::unique_ptr<QThread> m_thread;
};

} // namespace tandem::ui
