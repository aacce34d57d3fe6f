#pragma once

// One file from the Hub into its blob in the cache: the request to `resolve/`, its redirect to
// the file store (followed by hand, so that the access token never goes to another host), a
// resume from what an earlier attempt left (`<blob>.incomplete`, a Range request), retries
// after a cut, and the check of the size and hash the Hub published for it before the blob is
// put in place.

#include <QFile>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QUrl>

#include <memory>

class QLockFile;
class QNetworkAccessManager;
class QNetworkReply;

namespace tandem::hub {

struct HubFile {
    QString name; // its path in the repository ("model.safetensors")
    qint64 size = 0;
    QString hash; // a Git LFS file's SHA-256, otherwise its Git blob SHA-1 (the Hub's ETag)
    bool lfs = false;
};

// The HTTP answer as a sentence for a person; `what` names the model or file asked for.
QString hubProblem(QNetworkReply* reply, const QString& what, bool haveToken);

// The hash the Hub publishes for `file`'s content at `path`: SHA-256 for LFS files, the Git
// blob SHA-1 otherwise. Empty when the file cannot be read.
QString contentHash(const QString& path, bool lfs);

class FileFetch : public QObject {
    Q_OBJECT

public:
    FileFetch(QNetworkAccessManager* net, const HubFile& file, const QUrl& url,
              const QString& blobPath, const QString& token, QObject* parent = nullptr);
    ~FileFetch() override;
    void start();
    void abort();

    // Attempts after a cut connection before giving up.
    static constexpr int kAttempts = 6;

Q_SIGNALS:
    void progressed(qint64 bytesOfThisFile);
    // An empty `error` when the blob is in place.
    void finished(const QString& error);

private:
    void request(const QUrl& url, bool withToken, int redirects);
    void onReadyRead();
    void onFinished();
    void retryOrFail(const QString& why);
    void complete();
    void fail(const QString& error);
    bool restartFromZero();

    QNetworkAccessManager* m_net;
    HubFile m_file;
    QUrl m_url;
    QString m_blob;
    QString m_token;
    QFile m_part;
    std::unique_ptr<QLockFile> m_lock;
    QPointer<QNetworkReply> m_reply;
    qint64 m_offset = 0;        // bytes in the partial file
    bool m_bodyChecked = false; // the answer's status and range were looked at
    int m_attempt = 0;
    bool m_done = false;
};

} // namespace tandem::hub
