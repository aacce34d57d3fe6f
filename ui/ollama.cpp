#include "ui/ollama.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace tandem::ui {

OllamaRegistrar::OllamaRegistrar(QObject* parent)
    : QObject(parent) {
    m_process.setProcessChannelMode(QProcess::MergedChannels);
}

QString OllamaRegistrar::program() {
    return QStandardPaths::findExecutable(QStringLiteral("ollama"));
}

void OllamaRegistrar::add(const QString& gguf) {
    const QFileInfo f(gguf);
    const QString name = f.completeBaseName().toLower();
    const QString modelfile =
        f.absoluteDir().filePath(f.completeBaseName() + QStringLiteral(".Modelfile"));
    disconnect(&m_process, nullptr, this, nullptr);
    connect(&m_process, &QProcess::finished, this, [this, name](int code, QProcess::ExitStatus s) {
        const QString output = QString::fromUtf8(m_process.readAll()).trimmed();
        Q_EMIT finished(s == QProcess::NormalExit && code == 0, name, output);
    });
    connect(&m_process, &QProcess::errorOccurred, this, [this, name](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            Q_EMIT finished(false, name, m_process.errorString());
    });
    // From the file's folder: the Modelfile names the GGUF file relative to itself.
    m_process.setWorkingDirectory(f.absolutePath());
    m_process.start(program(), {QStringLiteral("create"), name, QStringLiteral("-f"), modelfile});
}

} // namespace tandem::ui
