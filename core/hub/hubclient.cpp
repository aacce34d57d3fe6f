#include "hub/hubclient.h"

#include "hub/hubcache.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QSaveFile>
#include <QUrlQuery>

namespace tandem::hub {

namespace {

bool hasSuffix(const QString& name, std::initializer_list<const char*> suffixes) {
    for (const char* s : suffixes)
        if (name.endsWith(QLatin1String(s), Qt::CaseInsensitive))
            return true;
    return false;
}

// `path` under the endpoint, which may itself have a path (a mirror's prefix).
QUrl under(QUrl endpoint, const QString& path) {
    const QString base = endpoint.path();
    endpoint.setPath(base.chopped(base.endsWith(QLatin1Char('/')) ? 1 : 0) + path);
    return endpoint;
}

QString commitPattern() {
    return QStringLiteral("^[0-9a-f]{40}$");
}

} // namespace

QList<HubFile> filesToFetch(const QList<HubFile>& all) {
    bool safetensors = false;
    for (const HubFile& f : all)
        safetensors = safetensors || (!f.name.contains(QLatin1Char('/')) &&
                                      f.name.endsWith(QLatin1String(".safetensors")));
    QList<HubFile> out;
    for (const HubFile& f : all) {
        if (f.name.contains(QLatin1Char('/')) || f.name.startsWith(QLatin1Char('.')))
            continue; // onnx/, original/, .gitattributes
        const bool torchWeights = hasSuffix(f.name, {".bin", ".pt", ".pth"}) &&
                                  f.name.startsWith(QLatin1String("pytorch_model"));
        if (hasSuffix(f.name,
                      {".json", ".safetensors", ".model", ".txt", ".jinja", ".md", ".tiktoken"}) ||
            f.name.startsWith(QLatin1String("LICENSE")) || (torchWeights && !safetensors))
            out.append(f);
    }
    return out;
}

HubClient::HubClient(QObject* parent)
    : QObject(parent)
    , m_net(new QNetworkAccessManager(this))
    , m_endpoint(defaultEndpoint())
    , m_cache(cacheDir()) {
    qRegisterMetaType<QList<tandem::hub::HubModel>>();
}

QUrl HubClient::defaultEndpoint() {
    const QString env = qEnvironmentVariable("HF_ENDPOINT");
    return QUrl(env.isEmpty() ? QStringLiteral("https://huggingface.co") : env);
}

QNetworkReply* HubClient::getJson(const QString& path,
                                  const QList<std::pair<QString, QString>>& query) {
    QUrl url = under(m_endpoint, path);
    QUrlQuery q;
    for (const auto& [k, v] : query)
        q.addQueryItem(k, v);
    url.setQuery(q);
    QNetworkRequest req(url);
    req.setHeader(QNetworkRequest::UserAgentHeader, QStringLiteral("tandem"));
    req.setTransferTimeout(30000);
    if (!m_token.isEmpty())
        req.setRawHeader("Authorization", "Bearer " + m_token.toUtf8());
    return m_net->get(req);
}

void HubClient::search(const QString& text, int limit) {
    QNetworkReply* r = getJson(QStringLiteral("/api/models"),
                               {{QStringLiteral("search"), text.trimmed()},
                                {QStringLiteral("sort"), QStringLiteral("downloads")},
                                {QStringLiteral("direction"), QStringLiteral("-1")},
                                {QStringLiteral("limit"), QString::number(limit)}});
    connect(r, &QNetworkReply::finished, this, [this, r] {
        r->deleteLater();
        if (r->error() != QNetworkReply::NoError)
            return Q_EMIT failed(hubProblem(r, QStringLiteral("the search"), !m_token.isEmpty()));
        const QJsonDocument doc = QJsonDocument::fromJson(r->readAll());
        QList<HubModel> models;
        for (const QJsonValue& v : doc.array()) {
            const QJsonObject o = v.toObject();
            HubModel m;
            m.id = o.value(QStringLiteral("id"))
                       .toString(o.value(QStringLiteral("modelId")).toString());
            m.downloads = o.value(QStringLiteral("downloads")).toInteger();
            m.likes = o.value(QStringLiteral("likes")).toInteger();
            m.task = o.value(QStringLiteral("pipeline_tag")).toString();
            // "auto" or "manual" where the Hub says so, "no" for false, empty when not said
            const QJsonValue gated = o.value(QStringLiteral("gated"));
            m.gated = gated.isString() ? gated.toString()
                      : gated.isBool() ? QStringLiteral("no")
                                       : QString();
            if (isRepoId(m.id))
                models.append(m);
        }
        Q_EMIT searched(models);
    });
}

void HubClient::download(const QString& repoId, const QString& revision) {
    if (m_busy)
        return Q_EMIT failed(QStringLiteral("a download is already running"));
    if (!isRepoId(repoId))
        return Q_EMIT failed(QStringLiteral("\"%1\" is not a model's name on the Hub (it looks "
                                            "like ORGANISATION/MODEL)")
                                 .arg(repoId));
    const QString rev = revision.isEmpty() ? QStringLiteral("main") : revision;
    // A branch, tag or commit, which also names a file under refs/: nothing that leaves it.
    static const QRegularExpression revisionRe(QStringLiteral("^[A-Za-z0-9_][A-Za-z0-9._/-]*$"));
    if (!revisionRe.match(rev).hasMatch() || rev.contains(QStringLiteral("..")) || rev.size() > 200)
        return Q_EMIT failed(
            QStringLiteral("\"%1\" is not a branch, tag or commit the Hub could have").arg(rev));
    m_busy = true;
    m_repo = repoId;
    m_revision = rev;
    m_repoDir = QDir(m_cache).filePath(repoFolderName(repoId));
    m_pending = getJson(QStringLiteral("/api/models/%1/revision/%2")
                            .arg(repoId, QString::fromLatin1(QUrl::toPercentEncoding(m_revision))),
                        {{QStringLiteral("blobs"), QStringLiteral("true")}});
    connect(m_pending, &QNetworkReply::finished, this, [this, r = m_pending.data()] { onInfo(r); });
}

void HubClient::onInfo(QNetworkReply* r) {
    r->deleteLater();
    if (!m_busy)
        return;
    if (r->error() != QNetworkReply::NoError)
        return finish(hubProblem(r, m_repo, !m_token.isEmpty()));
    const QJsonObject info = QJsonDocument::fromJson(r->readAll()).object();
    m_commit = info.value(QStringLiteral("sha")).toString();
    if (!QRegularExpression(commitPattern()).match(m_commit).hasMatch())
        return finish(QStringLiteral("the Hub's answer about %1 names no commit; is HF_ENDPOINT "
                                     "a Hugging Face Hub?")
                          .arg(m_repo));
    QList<HubFile> all;
    for (const QJsonValue& v : info.value(QStringLiteral("siblings")).toArray()) {
        const QJsonObject s = v.toObject();
        HubFile f;
        f.name = s.value(QStringLiteral("rfilename")).toString();
        const QJsonObject lfs = s.value(QStringLiteral("lfs")).toObject();
        f.lfs = !lfs.isEmpty();
        f.size = f.lfs ? lfs.value(QStringLiteral("size")).toInteger()
                       : s.value(QStringLiteral("size")).toInteger();
        f.hash = f.lfs ? lfs.value(QStringLiteral("sha256")).toString()
                       : s.value(QStringLiteral("blobId")).toString();
        // a name that would leave the snapshot, or a hash that is not one, is not taken
        if (f.name.isEmpty() || f.name.contains(QStringLiteral("..")) ||
            f.name.contains(QLatin1Char('\\')) ||
            !QRegularExpression(QStringLiteral("^[0-9a-f]{40}([0-9a-f]{24})?$"))
                 .match(f.hash)
                 .hasMatch())
            continue;
        all.append(f);
    }
    m_files = filesToFetch(all);
    if (m_files.isEmpty())
        return finish(QStringLiteral("%1 has no files Tandem can train from (configuration and "
                                     "safetensors weights)")
                          .arg(m_repo));
    m_total = 0;
    for (const HubFile& f : m_files)
        m_total += f.size;
    m_index = m_fetched = 0;
    m_done = 0;
    next();
}

void HubClient::next() {
    while (m_busy && m_index < m_files.size()) {
        const HubFile f = m_files.at(m_index);
        const QString blob = QDir(m_repoDir).filePath(QStringLiteral("blobs/") + f.hash);
        const QFileInfo have(blob);
        if (have.exists() && have.size() == f.size) { // in the cache already
            if (!linkIntoSnapshot(f, blob))
                return;
            m_done += f.size;
            ++m_index;
            Q_EMIT progressed(m_done, m_total, f.name);
            continue;
        }
        const QUrl url =
            under(m_endpoint, QStringLiteral("/%1/resolve/%2/%3").arg(m_repo, m_commit, f.name));
        auto* fetch = new FileFetch(m_net, f, url, blob, m_token, this);
        m_fetch = fetch;
        const qint64 before = m_done;
        connect(fetch, &FileFetch::progressed, this, [this, before, name = f.name](qint64 n) {
            Q_EMIT progressed(before + n, m_total, name);
        });
        connect(fetch, &FileFetch::finished, this, [this, fetch, f, blob](const QString& error) {
            fetch->deleteLater();
            if (!error.isEmpty())
                return finish(error);
            if (!linkIntoSnapshot(f, blob))
                return;
            m_done += f.size;
            ++m_fetched;
            ++m_index;
            next();
        });
        fetch->start();
        return;
    }
    if (!m_busy)
        return;
    // the ref last, once the snapshot is whole
    if (m_revision != m_commit) {
        QDir().mkpath(QDir(m_repoDir).filePath(QStringLiteral("refs")));
        QSaveFile ref(QDir(m_repoDir).filePath(QStringLiteral("refs/") + m_revision));
        if (!ref.open(QIODevice::WriteOnly) || ref.write(m_commit.toLatin1()) != 40 ||
            !ref.commit())
            return finish(
                QStringLiteral("could not write %1").arg(QDir::toNativeSeparators(ref.fileName())));
    }
    m_busy = false;
    Q_EMIT downloaded(snapshotFolder(m_cache, m_repo, m_commit), int(m_files.size()), m_fetched,
                      m_total);
}

// snapshots/<commit>/<file> -> ../../blobs/<hash>, as huggingface_hub links them; where links
// cannot be made (Windows without developer mode), the file itself is copied there.
bool HubClient::linkIntoSnapshot(const HubFile& f, const QString& blob) {
    const QString dst = QDir(snapshotFolder(m_cache, m_repo, m_commit)).filePath(f.name);
    QDir().mkpath(QFileInfo(dst).absolutePath());
    QFile::remove(dst);
#if defined(Q_OS_WIN)
    const bool ok = QFile::copy(blob, dst);
#else
    const bool ok = QFile::link(QFileInfo(dst).absoluteDir().relativeFilePath(blob), dst);
#endif
    if (!ok)
        finish(QStringLiteral("could not place %1 in %2")
                   .arg(f.name, QDir::toNativeSeparators(QFileInfo(dst).absolutePath())));
    return ok;
}

void HubClient::cancel() {
    if (!m_busy)
        return;
    m_busy = false; // before the aborts, whose replies finish at once
    if (m_pending)
        m_pending->abort();
    if (m_fetch) {
        m_fetch->abort();
        m_fetch->deleteLater();
    }
    Q_EMIT failed(
        QStringLiteral("the download of %1 was stopped; downloading it again resumes where "
                       "it stopped")
            .arg(m_repo));
}

void HubClient::finish(const QString& error) {
    m_busy = false;
    Q_EMIT failed(error);
}

} // namespace tandem::hub
