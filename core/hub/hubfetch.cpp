#include "hub/hubfetch.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QLockFile>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QTimer>

namespace tandem::hub {

namespace {

bool sameOrigin(const QUrl& a, const QUrl& b) {
    return a.scheme() == b.scheme() && a.host().compare(b.host(), Qt::CaseInsensitive) == 0 &&
           a.port(a.scheme() == QLatin1String("https") ? 443 : 80) ==
               b.port(b.scheme() == QLatin1String("https") ? 443 : 80);
}

int statusOf(QNetworkReply* r) {
    return r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
}

} // namespace

QString hubProblem(QNetworkReply* reply, const QString& what, bool haveToken) {
    const int status = statusOf(reply);
    const QString code = QString::fromUtf8(reply->rawHeader("X-Error-Code"));
    const QString site = reply->url().adjusted(QUrl::RemovePath | QUrl::RemoveQuery).toString();
    if (status == 0)
        return QStringLiteral("could not reach the Hugging Face Hub at %1 (%2). Check this "
                              "machine's connection, and HF_ENDPOINT if it is set.")
            .arg(site, reply->errorString());
    if (code == QLatin1String("GatedRepo") || ((status == 401 || status == 403) && haveToken))
        return QStringLiteral("%1 is a gated model: sign in at %2/%1, accept its terms, and give "
                              "Tandem an access token that can read it (%3).")
            .arg(what, site,
                 haveToken ? QStringLiteral("the token given was refused")
                           : QStringLiteral("none is set"));
    if (code == QLatin1String("RevisionNotFound"))
        return QStringLiteral("%1: the Hub has no such revision (branch, tag or commit).")
            .arg(what);
    if (code == QLatin1String("EntryNotFound"))
        return QStringLiteral("%1: the Hub has no such file.").arg(what);
    if (code == QLatin1String("RepoNotFound") || status == 401 || status == 404)
        return haveToken ? QStringLiteral("there is no model %1 on the Hub, or the access token "
                                          "given cannot read it.")
                               .arg(what)
                         : QStringLiteral("there is no model %1 on the Hub; if it is private or "
                                          "gated, give Tandem an access token that can read it.")
                               .arg(what);
    const QString said = QString::fromUtf8(reply->rawHeader("X-Error-Message"));
    return QStringLiteral("the Hugging Face Hub answered %1 (HTTP %2) for %3%4")
        .arg(reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toString())
        .arg(status)
        .arg(what, said.isEmpty() ? QString() : QStringLiteral(": ") + said);
}

QString contentHash(const QString& path, bool lfs) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    QCryptographicHash h(lfs ? QCryptographicHash::Sha256 : QCryptographicHash::Sha1);
    if (!lfs) // Git hashes a blob with its header: "blob <size>\0"
        h.addData("blob " + QByteArray::number(f.size()) + '\0');
    if (!h.addData(&f))
        return {};
    return QString::fromLatin1(h.result().toHex());
}

FileFetch::FileFetch(QNetworkAccessManager* net, const HubFile& file, const QUrl& url,
                     const QString& blobPath, const QString& token, QObject* parent)
    : QObject(parent)
    , m_net(net)
    , m_file(file)
    , m_url(url)
    , m_blob(blobPath)
    , m_token(token)
    , m_part(blobPath + QStringLiteral(".incomplete")) {}

FileFetch::~FileFetch() = default;

void FileFetch::start() {
    QDir().mkpath(QFileInfo(m_blob).absolutePath());
    // Another download of the same file (a second window, huggingface-cli) would write into the
    // same partial file.
    m_lock = std::make_unique<QLockFile>(m_blob + QStringLiteral(".lock"));
    m_lock->setStaleLockTime(0);
    if (!m_lock->tryLock(0))
        return fail(QStringLiteral("%1 is being downloaded by another program (%2); try again "
                                   "when it has finished")
                        .arg(m_file.name, QDir::toNativeSeparators(m_lock->fileName())));
    if (!m_part.open(QIODevice::ReadWrite | QIODevice::Append))
        return fail(QStringLiteral("could not write %1: %2")
                        .arg(QDir::toNativeSeparators(m_part.fileName()), m_part.errorString()));
    m_offset = m_part.size();
    if (m_offset > m_file.size && !restartFromZero())
        return;
    if (m_offset == m_file.size && m_file.size > 0)
        return complete();
    request(m_url, true, 0);
}

void FileFetch::abort() {
    m_done = true;
    if (m_reply)
        m_reply->abort();
    m_part.close(); // what came stays, for the next attempt to resume from
    if (m_lock)
        m_lock->unlock();
}

bool FileFetch::restartFromZero() {
    if (!m_part.resize(0)) {
        fail(QStringLiteral("could not write %1: %2")
                 .arg(QDir::toNativeSeparators(m_part.fileName()), m_part.errorString()));
        return false;
    }
    m_part.seek(0);
    m_offset = 0;
    return true;
}

void FileFetch::request(const QUrl& url, bool withToken, int redirects) {
    QNetworkRequest req(url);
    req.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                     QNetworkRequest::ManualRedirectPolicy);
    req.setRawHeader("Accept-Encoding", "identity"); // byte ranges of the file itself
    req.setHeader(QNetworkRequest::UserAgentHeader, QStringLiteral("tandem"));
    req.setTransferTimeout(60000); // a link that stalls a minute counts as cut
    if (m_offset > 0)
        req.setRawHeader("Range", "bytes=" + QByteArray::number(m_offset) + '-');
    if (withToken && !m_token.isEmpty())
        req.setRawHeader("Authorization", "Bearer " + m_token.toUtf8());
    m_bodyChecked = false;
    m_reply = m_net->get(req);
    m_reply->setProperty("redirects", redirects);
    m_reply->setProperty("withToken", withToken);
    connect(m_reply, &QNetworkReply::readyRead, this, &FileFetch::onReadyRead);
    connect(m_reply, &QNetworkReply::finished, this, &FileFetch::onFinished);
}

void FileFetch::onReadyRead() {
    QNetworkReply* r = m_reply;
    if (!r || m_done)
        return;
    const int status = statusOf(r);
    if (status != 200 && status != 206)
        return; // a redirect or an error: read in onFinished
    if (!m_bodyChecked) {
        m_bodyChecked = true;
        static const QRegularExpression range(QStringLiteral("^bytes (\\d+)-"));
        const auto m = range.match(QString::fromLatin1(r->rawHeader("Content-Range")));
        // A server that ignored the range sends the whole file: start the partial one again.
        if ((status == 200 || !m.hasMatch() || m.captured(1).toLongLong() != m_offset) &&
            m_offset > 0 && !restartFromZero())
            return;
    }
    const QByteArray chunk = r->readAll();
    if (m_offset + chunk.size() > m_file.size) {
        m_done = true;
        r->abort();
        m_part.resize(0);
        return fail(QStringLiteral("%1 from the Hub is larger than the %2 bytes the Hub lists "
                                   "for it; it was not kept. Try again later.")
                        .arg(m_file.name)
                        .arg(m_file.size));
    }
    if (m_part.write(chunk) != chunk.size()) {
        m_done = true;
        r->abort();
        return fail(QStringLiteral("could not write %1: %2")
                        .arg(QDir::toNativeSeparators(m_part.fileName()), m_part.errorString()));
    }
    m_offset += chunk.size();
    Q_EMIT progressed(m_offset);
}

void FileFetch::onFinished() {
    QNetworkReply* r = m_reply;
    if (!r || m_done)
        return;
    r->deleteLater();
    m_reply = nullptr;
    const int status = statusOf(r);
    if (status >= 300 && status < 400) {
        const int redirects = r->property("redirects").toInt();
        const QUrl to = r->url().resolved(QUrl(QString::fromUtf8(r->rawHeader("Location"))));
        if (redirects >= 8 || !to.isValid())
            return fail(QStringLiteral("the Hub redirected %1 too many times, or nowhere")
                            .arg(m_file.name));
        // The token is for the Hub; the file store it sends us on to gets a signed address.
        const bool keep = r->property("withToken").toBool() && sameOrigin(r->url(), to);
        return request(to, keep, redirects + 1);
    }
    if (status == 416 && m_offset > 0) { // nothing past what we hold: check it as it is
        if (m_offset == m_file.size)
            return complete();
        if (!restartFromZero())
            return;
        return retryOrFail(QStringLiteral("the Hub refused the byte range"));
    }
    if (status >= 400)
        return fail(hubProblem(r, m_file.name, !m_token.isEmpty()));
    onReadyRead(); // what is left in the buffer
    if (r->error() != QNetworkReply::NoError || m_offset < m_file.size)
        return retryOrFail(r->error() != QNetworkReply::NoError
                               ? r->errorString()
                               : QStringLiteral("the connection ended early"));
    complete();
}

void FileFetch::retryOrFail(const QString& why) {
    m_part.flush();
    if (++m_attempt >= kAttempts)
        return fail(QStringLiteral("%1 could not be downloaded after %2 attempts (%3). What came "
                                   "is kept: downloading again resumes from byte %4.")
                        .arg(m_file.name)
                        .arg(kAttempts)
                        .arg(why)
                        .arg(m_offset));
    QTimer::singleShot(250 * m_attempt, this, [this] {
        if (!m_done)
            request(m_url, true, 0);
    });
}

void FileFetch::complete() {
    m_part.close();
    if (m_part.size() != m_file.size)
        return fail(QStringLiteral("%1 is %2 bytes, where the Hub lists %3")
                        .arg(m_file.name)
                        .arg(m_part.size())
                        .arg(m_file.size));
    const QString got = contentHash(m_part.fileName(), m_file.lfs);
    if (got != m_file.hash) {
        QFile::remove(m_part.fileName());
        return fail(QStringLiteral("%1 did not match the hash the Hub publishes for it (%2 %3, "
                                   "the file's %4), so it was deleted. Download it again; if "
                                   "this repeats, something between this machine and the Hub "
                                   "(a proxy, a mirror) is changing files.")
                        .arg(m_file.name,
                             m_file.lfs ? QStringLiteral("SHA-256") : QStringLiteral("Git SHA-1"),
                             m_file.hash, got));
    }
    QFile::remove(m_blob);
    if (!QFile::rename(m_part.fileName(), m_blob))
        return fail(QStringLiteral("could not move the download into %1")
                        .arg(QDir::toNativeSeparators(m_blob)));
    m_done = true;
    m_lock->unlock();
    Q_EMIT finished(QString());
}

void FileFetch::fail(const QString& error) {
    m_done = true;
    m_part.close();
    if (m_lock)
        m_lock->unlock();
    Q_EMIT finished(error);
}

} // namespace tandem::hub
