#pragma once

// Get a model: search the Hugging Face Hub and download a model into its cache, with progress,
// a stop that keeps what came (downloading again resumes), and each file checked against the
// Hub's size and hash (hub/hubclient.h); the models already on this computer, those other
// tools (huggingface-cli, transformers) downloaded among them; and the access token gated
// models need, kept in the system's keychain where there is one. "Use this model" puts the
// chosen model's folder in the New run form.

#include <QDialog>

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace tandem::hub {
class HubClient;
struct HubModel;
} // namespace tandem::hub

namespace tandem::ui {

class HubDialog : public QDialog {
    Q_OBJECT

public:
    explicit HubDialog(QWidget* parent = nullptr);

    // The folder "Use this model" chose.
    QString chosenFolder() const { return m_chosen; }
    hub::HubClient* client() const { return m_client; }

Q_SIGNALS:
    // A search's results are shown, or a download ended (`ok` false: the status says why).
    void searchShown();
    void downloadEnded(bool ok);

private:
    void search();
    void showResults(const QList<hub::HubModel>& models);
    void download();
    void refreshLocal(const QString& select = QString());
    void saveToken();
    void showTokenState();
    void setStatus(const QString& text, bool error);
    void updateButtons();

    hub::HubClient* m_client;
    QLineEdit* m_query;
    QPushButton* m_searchButton;
    QTableWidget* m_results;
    QPushButton* m_download;
    QPushButton* m_stop;
    QProgressBar* m_progress;
    QLabel* m_status;
    QTableWidget* m_local;
    QPushButton* m_use;
    QLineEdit* m_token;
    QPushButton* m_saveToken;
    QLabel* m_tokenState;
    QString m_chosen;
    bool m_downloading = false;
};

} // namespace tandem::ui
