#pragma once

// Handing a GGUF export on to Ollama: where the `ollama` program is installed (on PATH), the
// file's Modelfile (written beside it) is registered with `ollama create NAME -f FILE`, its
// output kept for the message; where it is not, the caller says how to do it by hand.

#include <QObject>
#include <QProcess>
#include <QString>

namespace tandem::ui {

class OllamaRegistrar : public QObject {
    Q_OBJECT

public:
    explicit OllamaRegistrar(QObject* parent = nullptr);

    // The `ollama` program on PATH; empty when it is not installed.
    static QString program();
    // Registers `gguf` under its file's base name, from the Modelfile beside it; emits finished.
    void add(const QString& gguf);

Q_SIGNALS:
    // `name`: the model's name in Ollama; `output`: what ollama said (its error when !ok).
    void finished(bool ok, const QString& name, const QString& output);

private:
    QProcess m_process;
};

} // namespace tandem::ui
