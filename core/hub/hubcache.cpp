#include "hub/hubcache.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QRegularExpression>

#include <algorithm>

namespace tandem::hub {

QString hfHome() {
    const QString home = qEnvironmentVariable("HF_HOME");
    if (!home.isEmpty())
        return QDir::cleanPath(home);
    QString xdg = qEnvironmentVariable("XDG_CACHE_HOME");
    if (xdg.isEmpty())
        xdg = QDir::home().filePath(QStringLiteral(".cache"));
    return QDir(xdg).filePath(QStringLiteral("huggingface"));
}

QString cacheDir() {
    for (const char* name : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"}) {
        const QString dir = qEnvironmentVariable(name);
        if (!dir.isEmpty())
            return QDir::cleanPath(dir);
    }
    return QDir(hfHome()).filePath(QStringLiteral("hub"));
}

bool isRepoId(const QString& id) {
    static const QRegularExpression re(
        QStringLiteral("^(?:[A-Za-z0-9_-][A-Za-z0-9._-]*/)?[A-Za-z0-9_-][A-Za-z0-9._-]*$"));
    return id.size() <= 200 && re.match(id).hasMatch() && !id.contains(QStringLiteral("..")) &&
           !id.contains(QStringLiteral("--"));
}

QString repoFolderName(const QString& repoId) {
    return QStringLiteral("models--") +
           QString(repoId).replace(QLatin1Char('/'), QStringLiteral("--"));
}

QString snapshotFolder(const QString& cache, const QString& repoId, const QString& commit) {
    return QDir(cache).filePath(repoFolderName(repoId) + QStringLiteral("/snapshots/") + commit);
}

namespace {

// The files of a snapshot: their count and bytes (through the links, to the blobs), and whether
// transformers could open it.
void measure(CachedModel* m) {
    bool config = false, weights = false;
    QDirIterator it(m->folder, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        it.next();
        const QFileInfo f = it.fileInfo();
        if (!f.exists()) // a link to a blob that is gone
            continue;
        ++m->files;
        m->bytes += f.size();
        const QString name = f.fileName();
        config = config || (name == QLatin1String("config.json") && f.dir() == QDir(m->folder));
        weights = weights || name.endsWith(QLatin1String(".safetensors"));
    }
    m->usable = config && weights;
}

} // namespace

QList<CachedModel> cachedModels(const QString& cache) {
    QList<std::pair<QDateTime, CachedModel>> found;
    const QDir root(cache);
    for (const QString& repo :
         root.entryList({QStringLiteral("models--*")}, QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QString id = repo.mid(8).replace(QStringLiteral("--"), QStringLiteral("/"));
        const QDir repoDir(root.filePath(repo));
        QHash<QString, QString> refOf; // commit -> ref
        const QDir refs(repoDir.filePath(QStringLiteral("refs")));
        QDirIterator refIt(refs.path(), QDir::Files, QDirIterator::Subdirectories);
        while (refIt.hasNext()) {
            const QString path = refIt.next();
            QFile f(path);
            if (f.size() < 200 && f.open(QIODevice::ReadOnly))
                refOf.insert(QString::fromUtf8(f.readAll()).trimmed(), refs.relativeFilePath(path));
        }
        const QDir snaps(repoDir.filePath(QStringLiteral("snapshots")));
        for (const QFileInfo& s : snaps.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot)) {
            CachedModel m;
            m.repoId = id;
            m.commit = s.fileName();
            m.revision = refOf.value(m.commit);
            m.folder = s.absoluteFilePath();
            measure(&m);
            // a snapshot a ref names sorts as if it were the newest
            const QDateTime when =
                m.revision.isEmpty() ? s.lastModified() : s.lastModified().addYears(100);
            found.append({when, m});
        }
    }
    std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
        if (a.second.repoId != b.second.repoId)
            return a.second.repoId.compare(b.second.repoId, Qt::CaseInsensitive) < 0;
        return a.first > b.first;
    });
    QList<CachedModel> out;
    for (const auto& [when, m] : found)
        out.append(m);
    return out;
}

} // namespace tandem::hub
