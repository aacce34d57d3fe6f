#pragma once

// A stand-in for the Hugging Face Hub on loopback, speaking the part of its HTTP API that its
// published client (huggingface_hub) uses to search and download:
//   GET /api/models?search=…&limit=…                    a JSON list, most downloaded first
//   GET /api/models/ORG/NAME/revision/REV?blobs=true    id, sha, gated, siblings (rfilename,
//                                                       size, blobId, lfs {sha256, size})
//   GET /ORG/NAME/resolve/REV/FILE                      small files with ETag and X-Repo-Commit;
//                                                       LFS files by a 302 to the file store,
//                                                       with X-Linked-Etag and X-Linked-Size
// The file store is a second server (another origin, as the Hub's CDN is), which answers Range
// requests with 206. A gated model answers 401 with X-Error-Code GatedRepo without the right
// token. Faults on demand: a connection cut part-way through a file, and a file served with one
// byte changed. Every request is logged.

#include <QCryptographicHash>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QRegularExpression>
#include <QTcpServer>
#include <QTcpSocket>
#include <QUrl>
#include <QUrlQuery>

class FakeHub : public QObject {
public:
    struct File {
        QByteArray body;
        bool lfs = false;
    };
    struct Repo {
        QMap<QString, File> files;
        bool gated = false;
        qint64 downloads = 0;
        QString commit;
    };

    FakeHub() {
        for (QTcpServer* s : {&m_api, &m_store}) {
            s->listen(QHostAddress::LocalHost, 0);
            connect(s, &QTcpServer::newConnection, this, [this, s] {
                while (QTcpSocket* c = s->nextPendingConnection()) {
                    connect(c, &QTcpSocket::readyRead, this,
                            [this, c, s] { onData(c, s == &m_store); });
                    connect(c, &QTcpSocket::disconnected, this, [this, c] {
                        m_buffers.remove(c);
                        c->deleteLater();
                    });
                }
            });
        }
    }

    QUrl endpoint() const { return url(m_api); }
    QUrl store() const { return url(m_store); }

    void addRepo(const QString& id, const QMap<QString, File>& files, bool gated = false,
                 qint64 downloads = 0) {
        Repo r{files, gated, downloads, {}};
        r.commit = QString::fromLatin1(
            QCryptographicHash::hash(id.toUtf8() + QByteArray::number(files.size()),
                                     QCryptographicHash::Sha1)
                .toHex());
        m_repos.insert(id, r);
    }
    const Repo& repo(const QString& id) const { return m_repos.find(id).value(); }

    static QString sha256(const QByteArray& b) {
        return QString::fromLatin1(QCryptographicHash::hash(b, QCryptographicHash::Sha256).toHex());
    }
    static QString gitSha1(const QByteArray& b) {
        return QString::fromLatin1(
            QCryptographicHash::hash("blob " + QByteArray::number(b.size()) + '\0' + b,
                                     QCryptographicHash::Sha1)
                .toHex());
    }

    QString token = QStringLiteral("hf_good_token");
    int cutAfter = -1; // the store's next body ends (connection closed) after this many bytes
    QString corrupt;   // this file's bytes are served with one of them changed
    QStringList log;   // "GET /path range=… auth=yes|no"
    bool tokenWentToStore = false;

private:
    static QUrl url(const QTcpServer& s) {
        return QUrl(QStringLiteral("http://127.0.0.1:%1").arg(s.serverPort()));
    }

    void onData(QTcpSocket* c, bool store) {
        QByteArray& buf = m_buffers[c];
        buf += c->readAll();
        const int end = buf.indexOf("\r\n\r\n");
        if (end < 0)
            return;
        const QList<QByteArray> lines = buf.left(end).split('\n');
        buf.clear();
        const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
        QHash<QByteArray, QByteArray> h;
        for (int i = 1; i < lines.size(); ++i) {
            const int colon = lines[i].indexOf(':');
            if (colon > 0)
                h.insert(lines[i].left(colon).trimmed().toLower(),
                         lines[i].mid(colon + 1).trimmed());
        }
        const QUrl target(QString::fromUtf8(first.value(1)));
        const bool auth = h.value("authorization") == "Bearer " + token.toUtf8();
        log.append(
            QStringLiteral("%1 %2 range=%3 auth=%4")
                .arg(QString::fromUtf8(first.value(0)), target.path(),
                     QString::fromUtf8(h.value("range")),
                     h.contains("authorization") ? QStringLiteral("yes") : QStringLiteral("no")));
        if (store) {
            tokenWentToStore = tokenWentToStore || h.contains("authorization");
            return serveStore(c, target.path().mid(8), h.value("range")); // "/stored/<sha256>"
        }
        serveApi(c, target, auth, h.value("range"));
    }

    void reply(QTcpSocket* c, int status, const QByteArray& reason,
               const QList<std::pair<QByteArray, QByteArray>>& headers, const QByteArray& body,
               int cut = -1) {
        QByteArray out = "HTTP/1.1 " + QByteArray::number(status) + ' ' + reason + "\r\n";
        for (const auto& [k, v] : headers)
            out += k + ": " + v + "\r\n";
        out +=
            "Content-Length: " + QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n";
        out += cut >= 0 ? body.left(cut) : body;
        c->write(out);
        c->disconnectFromHost();
    }

    void error(QTcpSocket* c, int status, const QByteArray& code, const QByteArray& message) {
        reply(c, status, status == 401 ? "Unauthorized" : "Not Found",
              {{"X-Error-Code", code}, {"X-Error-Message", message}},
              "{\"error\":\"" + message + "\"}");
    }

    // the bytes from a "bytes=N-" range, with the status and Content-Range to send
    void sendRange(QTcpSocket* c, const QByteArray& body, const QByteArray& range,
                   QList<std::pair<QByteArray, QByteArray>> headers, int cut) {
        static const QRegularExpression re(QStringLiteral("^bytes=(\\d+)-$"));
        const auto m = re.match(QString::fromLatin1(range));
        if (!m.hasMatch())
            return reply(c, 200, "OK", headers, body, cut);
        const qint64 from = m.captured(1).toLongLong();
        if (from >= body.size())
            return reply(c, 416, "Range Not Satisfiable", headers, {});
        headers.append({"Content-Range", "bytes " + QByteArray::number(from) + '-' +
                                             QByteArray::number(body.size() - 1) + '/' +
                                             QByteArray::number(body.size())});
        reply(c, 206, "Partial Content", headers, body.mid(from), cut);
    }

    const File* fileByHash(const QString& hash, QString* name) const {
        for (const Repo& r : m_repos)
            for (auto it = r.files.begin(); it != r.files.end(); ++it)
                if (sha256(it->body) == hash) {
                    *name = it.key();
                    return &it.value();
                }
        return nullptr;
    }

    QByteArray served(const QString& name, const QByteArray& body) const {
        QByteArray b = body;
        if (name == corrupt && !b.isEmpty())
            b[b.size() / 2] = char(b[b.size() / 2] ^ 0x5a);
        return b;
    }

    void serveStore(QTcpSocket* c, const QString& hash, const QByteArray& range) {
        QString name;
        const File* f = fileByHash(hash, &name);
        if (!f)
            return error(c, 404, "EntryNotFound", "no such object");
        const int cut = cutAfter;
        cutAfter = -1;
        sendRange(c, served(name, f->body), range, {{"ETag", '"' + hash.toLatin1() + '"'}}, cut);
    }

    QJsonObject info(const QString& id, const Repo& r) const {
        QJsonArray siblings;
        for (auto it = r.files.begin(); it != r.files.end(); ++it) {
            QJsonObject s{{QStringLiteral("rfilename"), it.key()},
                          {QStringLiteral("size"), it->body.size()},
                          {QStringLiteral("blobId"), gitSha1(it->body)}};
            if (it->lfs)
                s.insert(QStringLiteral("lfs"),
                         QJsonObject{{QStringLiteral("sha256"), sha256(it->body)},
                                     {QStringLiteral("size"), it->body.size()},
                                     {QStringLiteral("pointerSize"), 134}});
            siblings.append(s);
        }
        return {{QStringLiteral("id"), id},
                {QStringLiteral("sha"), r.commit},
                {QStringLiteral("gated"),
                 r.gated ? QJsonValue(QStringLiteral("manual")) : QJsonValue(false)},
                {QStringLiteral("downloads"), r.downloads},
                {QStringLiteral("siblings"), siblings}};
    }

    void serveApi(QTcpSocket* c, const QUrl& target, bool auth, const QByteArray& range) {
        const QString path = target.path();
        if (path == QLatin1String("/api/models")) {
            const QUrlQuery q(target);
            QList<std::pair<qint64, QString>> hits;
            for (auto it = m_repos.begin(); it != m_repos.end(); ++it)
                if (it.key().contains(q.queryItemValue(QStringLiteral("search")),
                                      Qt::CaseInsensitive))
                    hits.append({-it->downloads, it.key()});
            std::sort(hits.begin(), hits.end());
            QJsonArray out;
            for (const auto& [d, id] :
                 hits.mid(0, q.queryItemValue(QStringLiteral("limit")).toInt()))
                out.append(QJsonObject{
                    {QStringLiteral("id"), id},
                    {QStringLiteral("gated"),
                     m_repos[id].gated ? QJsonValue(QStringLiteral("manual")) : QJsonValue(false)},
                    {QStringLiteral("downloads"), -d},
                    {QStringLiteral("likes"), 7},
                    {QStringLiteral("pipeline_tag"), QStringLiteral("text-generation")}});
            return reply(c, 200, "OK", {{"Content-Type", "application/json"}},
                         QJsonDocument(out).toJson(QJsonDocument::Compact));
        }
        static const QRegularExpression infoRe(
            QStringLiteral("^/api/models/([^/]+/[^/]+)/revision/([^/]+)$"));
        static const QRegularExpression fileRe(
            QStringLiteral("^/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$"));
        const auto im = infoRe.match(path);
        const auto fm = fileRe.match(path);
        const QString id = im.hasMatch() ? im.captured(1) : fm.captured(1);
        if (!m_repos.contains(id))
            return error(c, 404, "RepoNotFound", "Repository not found");
        const Repo& r = m_repos[id];
        if (r.gated && !auth)
            return error(c, 401, "GatedRepo", "Access to this model is restricted");
        if (im.hasMatch())
            return reply(c, 200, "OK", {{"Content-Type", "application/json"}},
                         QJsonDocument(info(id, r)).toJson(QJsonDocument::Compact));
        if (!fm.hasMatch() || !r.files.contains(fm.captured(3)))
            return error(c, 404, "EntryNotFound", "Entry not found");
        const File& f = r.files[fm.captured(3)];
        const QByteArray commit = r.commit.toLatin1();
        if (f.lfs) {
            const QByteArray hash = sha256(f.body).toLatin1();
            return reply(c, 302, "Found",
                         {{"Location", store().toString().toLatin1() + "/stored/" + hash},
                          {"X-Linked-Etag", '"' + hash + '"'},
                          {"X-Linked-Size", QByteArray::number(f.body.size())},
                          {"X-Repo-Commit", commit}},
                         {});
        }
        sendRange(c, served(fm.captured(3), f.body), range,
                  {{"ETag", '"' + gitSha1(f.body).toLatin1() + '"'}, {"X-Repo-Commit", commit}},
                  -1);
    }

    QTcpServer m_api, m_store;
    QMap<QString, Repo> m_repos;
    QHash<QTcpSocket*, QByteArray> m_buffers;
};
