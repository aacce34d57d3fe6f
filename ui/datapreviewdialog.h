#pragma once

// The New run form's Preview: chat: and jsonl: data as the model will read it, before a run
// (formats/datapreview.h). The first documents written with the chat template, the trained
// tokens (the assistant's) highlighted and the rest greyed; a histogram of the documents'
// lengths against the context; what the windows cut and leave out; and each line that cannot
// be read, with why. It reads on a thread of its own: a large file takes a few seconds.

#include "common/expected.h"
#include "formats/datapreview.h"

#include <QDialog>

#include <memory>

class QLabel;
class QListWidget;
class QTextBrowser;
class QThread;

namespace tandem::ui {

class LiveChart;

class DataPreviewDialog : public QDialog {
    Q_OBJECT

public:
    // `spec`: the data as --data names it; `tokenizerDir`: the model's folder.
    DataPreviewDialog(const QString& spec, const QString& tokenizerDir, QWidget* parent = nullptr);
    ~DataPreviewDialog() override;

    // For tests: what is shown.
    QString summary() const;
    QString documentsHtml() const;
    QStringList refusedLines() const;
    LiveChart* histogram() const { return m_histogram; }

Q_SIGNALS:
    void ready(bool ok);

private:
    void present(const Expected<DataPreview>& p);

    QLabel* m_summary;
    QTextBrowser* m_documents;
    LiveChart* m_histogram;
    QListWidget* m_refused;
    std::unique_ptr<QThread> m_thread;
};

} // namespace tandem::ui
