#pragma once

// The Hugging Face Hub's HTTP API, as its published client (huggingface_hub) speaks it:
//   GET  /api/models?search=TEXT&sort=downloads&direction=-1&limit=N    the search
//   GET  /api/models/ORG/NAME/revision/REV?blobs=true                   the files, their sizes
//                                                                       and hashes, the commit
//   GET  /ORG/NAME/resolve/COMMIT/FILE                                  a file (LFS files by a
//                                                                       redirect to the store)
// against $HF_ENDPOINT, or https://huggingface.co. A download takes the files a training folder
// needs (configuration, tokenizer, safetensors weights), checks each against the Hub's size and
// hash, and lays them out in the Hub's cache (hubcache.h), resuming what an earlier attempt left.

#include "hub/hubfetch.h"

#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QUrl>

class QNetworkAccessManager;
class QNetworkReply;

namespace tandem::hub {

struct HubModel {
    QString id;
    qint64 downloads = 0;
    qint64 likes = 0;
    QString task;  // "text-generation"
    QString gated; // "auto" or "manual" (a token is needed), "no", or empty where not said
};

// Which of a repository's files a training folder needs: top-level configuration, tokenizer and
// safetensors files, their index, chat templates, README and licence. PyTorch .bin weights are
// taken only where there are no safetensors; ONNX, GGUF, TensorFlow, Flax and the
// original-format subfolders are left out.
QList<HubFile> filesToFetch(const QList<HubFile>& all);

class HubClient : public QObject {
    Q_OBJECT

public:
    explicit HubClient(QObject* parent = nullptr);

    // $HF_ENDPOINT, or https://huggingface.co.
    static QUrl defaultEndpoint();
    void setEndpoint(const QUrl& url) { m_endpoint = url; }
    void setToken(const QString& token) { m_token = token; }
    void setCacheDir(const QString& dir) { m_cache = dir; }

    void search(const QString& text, int limit = 40);
    void download(const QString& repoId, const QString& revision = QStringLiteral("main"));
    // Stops a download; what came is kept to resume from.
    void cancel();
    bool busy() const { return m_busy; }

Q_SIGNALS:
    void searched(const QList<tandem::hub::HubModel>& models);
    void progressed(qint64 done, qint64 total, const QString& file);
    // The snapshot folder, ready for `hf:`; `fetched` of `files` were downloaded, the rest were
    // in the cache already.
    void downloaded(const QString& folder, int files, int fetched, qint64 bytes);
    void failed(const QString& message);

private:
    QNetworkReply* getJson(const QString& path, const QList<std::pair<QString, QString>>& query);
    void onInfo(QNetworkReply* reply);
    void next();
    bool linkIntoSnapshot(const HubFile& f, const QString& blob);
    void finish(const QString& error);

    QNetworkAccessManager* m_net;
    QUrl m_endpoint;
    QString m_token;
    QString m_cache;
    bool m_busy = false;

    // the download in progress
    QString m_repo, m_revision, m_commit, m_repoDir;
    QList<HubFile> m_files;
    int m_index = 0, m_fetched = 0;
    qint64 m_done = 0, m_total = 0;
    QPointer<QNetworkReply> m_pending;
    QPointer<FileFetch> m_fetch;
};

} // namespace tandem::hub

Q_DECLARE_METATYPE(QList<tandem::hub::HubModel>)
