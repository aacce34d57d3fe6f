#include "ui/historymodel.h"

#include "common/clocktext.h"
#include "engine/runhistory.h"
#include "ui/format.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <QSaveFile>

#include <algorithm>
#include <climits>

namespace tandem::ui {

HistoryModel::HistoryModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void HistoryModel::setFolder(const QString& runsFolder) {
    m_folder = runsFolder;
    reload();
}

void HistoryModel::setHome(const QString& home) {
    m_home = home;
    reload();
}

void HistoryModel::setLending(bool lending) {
    m_lending = lending;
    reload();
}

void HistoryModel::reload() {
    beginResetModel();
    m_entries.clear();
    // The runs folder's runs, and those started elsewhere (the command line) and listed in the
    // node's history.
    QStringList folders;
    if (!m_folder.isEmpty())
        for (const QFileInfo& fi : QDir(m_folder).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot))
            folders << fi.absoluteFilePath();
    if (!m_home.isEmpty())
        for (const QString& f : RunHistory::listed(m_home))
            if (!folders.contains(QFileInfo(f).absoluteFilePath()))
                folders << QFileInfo(f).absoluteFilePath();
    for (const QString& folder : folders) {
        QJsonObject r = RunHistory::read(folder);
        if (r.isEmpty())
            continue;
        Entry e{folder, r,
                QDateTime::fromString(r.value(QStringLiteral("started")).toString(), Qt::ISODate)};
        m_entries << e;
    }
    std::sort(m_entries.begin(), m_entries.end(),
              [](const Entry& a, const Entry& b) { return a.started > b.started; });
    endResetModel();
}

int HistoryModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_entries.size());
}

int HistoryModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant HistoryModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (Column(section)) {
    case Name:
        return tr("Name");
    case Settings:
        return tr("Settings");
    case Duration:
        return tr("Duration");
    case Started:
        return tr("Started");
    case Model:
        return tr("Model");
    case Dataset:
        return tr("Dataset");
    case Status:
        return tr("Status");
    case Accuracy:
        return tr("Result");
    case Speed:
        return tr("Speed");
    case ColumnCount:
        break;
    }
    return {};
}

QVariant HistoryModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= m_entries.size())
        return {};
    const Entry& e = m_entries[index.row()];
    const QJsonObject config = e.record.value(QStringLiteral("config")).toObject();
    const QJsonObject summary = e.record.value(QStringLiteral("summary")).toObject();
    const QJsonObject lent = e.record.value(QStringLiteral("lent")).toObject();
    const bool isLent = !lent.isEmpty();
    QString status = e.record.value(QStringLiteral("status")).toString();
    if (status == QLatin1String("running") && e.folder != m_active && !(isLent && m_lending))
        status = QStringLiteral("interrupted");
    const QString checkpoint = QDir(e.folder).filePath(RunFiles::checkpoint());
    switch (role) {
    case FolderRole:
        return e.folder;
    case CheckpointRole:
        return QFile::exists(checkpoint) ? checkpoint : QString();
    case ResumableRole:
        return status != QLatin1String("finished") && status != QLatin1String("running") &&
               QFile::exists(checkpoint);
    case TaskRole:
        return summary.value(QStringLiteral("objective")).toString();
    case ModelRole:
        return config.value(QStringLiteral("model")).toString();
    case AdaptersRole:
        return !config.value(QStringLiteral("lora")).toString().isEmpty();
    case LentRole:
        return isLent;
    case NotesRole:
        return e.record.value(QStringLiteral("notes")).toString();
    case ConfigRole:
        return config;
    case Qt::EditRole:
        return index.column() == Name ? e.record.value(QStringLiteral("title")).toString()
                                      : QVariant();
    case Qt::ToolTipRole: {
        // The folder, the run description as the command line reads it, and any error.
        QString tip = e.folder + QStringLiteral("\n\n") +
                      QString::fromUtf8(QJsonDocument(config).toJson(QJsonDocument::Indented));
        const QString error = e.record.value(QStringLiteral("error")).toString();
        if (!error.isEmpty())
            tip += QStringLiteral("\n") + error;
        const QString notes = e.record.value(QStringLiteral("notes")).toString();
        if (!notes.isEmpty())
            tip = notes + QStringLiteral("\n\n") + tip;
        return tip;
    }
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    if (index.column() == Name) {
        const QString title = e.record.value(QStringLiteral("title")).toString();
        return title.isEmpty() ? QFileInfo(e.folder).fileName() : title;
    }
    if (index.column() == Duration) {
        const QDateTime ended =
            QDateTime::fromString(e.record.value(QStringLiteral("ended")).toString(), Qt::ISODate);
        const QDateTime until = ended.isValid() ? ended
                                : status == QLatin1String("running")
                                    ? QDateTime::currentDateTimeUtc()
                                    : QDateTime();
        return e.started.isValid() && until.isValid() ? clockText(double(e.started.secsTo(until)))
                                                      : QString();
    }
    if (isLent)
        return lentText(Column(index.column()), e, status);
    switch (Column(index.column())) {
    case Settings:
        return settingsText(config);
    case Started:
        return QLocale().toString(e.started.toLocalTime(), QLocale::ShortFormat);
    case Model:
        return QFileInfo(config.value(QStringLiteral("model")).toString()).fileName();
    case Dataset:
        return config.value(QStringLiteral("data")).toString();
    case Status:
        if (status == QLatin1String("finished"))
            return tr("Finished");
        if (status == QLatin1String("stopped"))
            return tr("Stopped");
        if (status == QLatin1String("failed"))
            return tr("Failed");
        if (status == QLatin1String("running"))
            return tr("Running");
        return tr("Interrupted");
    case Accuracy: {
        // The figure of the run's own task: accuracy, perplexity, R² or the loss.
        const TestMetrics t = TestMetrics::readFrom(summary);
        if (!t.evaluated)
            return QString();
        const Task task = parse<Task>(summary.value(QStringLiteral("objective")).toString())
                              .value_or(Task::Classification);
        return testFigureText(t, task);
    }
    case Speed: {
        // A language model's in tokens, as its summary gives them.
        const double s = summary.value(QStringLiteral("samples_per_s")).toDouble(0);
        const double t = summary.value(QStringLiteral("tokens_per_s")).toDouble(0);
        return s > 0 ? speedText(s, t) : QString();
    }
    case Name: // above
    case Duration:
    case ColumnCount:
        break;
    }
    return {};
}

// A run this machine lent its device to: whose run, and this machine's part of it (the
// worker's record: its samples, their loss and its speed).
QString HistoryModel::lentText(Column column, const Entry& e, const QString& status) const {
    const QJsonObject lent = e.record.value(QStringLiteral("lent")).toObject();
    const QJsonObject part = e.record.value(QStringLiteral("part")).toObject();
    const QString coordinator = lent.value(QStringLiteral("coordinator")).toString();
    switch (column) {
    case Started:
        return QLocale().toString(e.started.toLocalTime(), QLocale::ShortFormat);
    case Model:
        return tr("%1's model").arg(coordinator);
    case Dataset:
        return e.record.value(QStringLiteral("config"))
            .toObject()
            .value(QStringLiteral("data"))
            .toString();
    case Status:
        if (status == QLatin1String("running"))
            return tr("Lending to %1").arg(coordinator);
        if (status == QLatin1String("lent"))
            return tr("Lent to %1").arg(coordinator);
        if (status == QLatin1String("failed"))
            return tr("Failed");
        return tr("Interrupted");
    case Accuracy: {
        const qint64 samples = part.value(QStringLiteral("samples")).toInteger();
        const QString mine =
            tr("this machine: %n sample(s)", nullptr, int(std::min<qint64>(samples, INT_MAX)));
        if (!part.contains(QStringLiteral("loss")))
            return mine;
        return tr("%1, loss %2")
            .arg(mine, QLocale().toString(part.value(QStringLiteral("loss")).toDouble(), 'f', 4));
    }
    case Speed: {
        const double s = part.value(QStringLiteral("samples_per_s")).toDouble(0);
        return s > 0 ? speedText(s, 0) : QString();
    }
    case Name:
    case Settings:
    case Duration:
    case ColumnCount:
        break;
    }
    return {};
}

Qt::ItemFlags HistoryModel::flags(const QModelIndex& index) const {
    Qt::ItemFlags f = QAbstractTableModel::flags(index);
    if (index.isValid() && index.column() == Name)
        f |= Qt::ItemIsEditable;
    return f;
}

bool HistoryModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || index.row() >= m_entries.size() ||
        !((role == Qt::EditRole && index.column() == Name) || role == NotesRole))
        return false;
    Entry& e = m_entries[index.row()];
    const bool title = role == Qt::EditRole;
    RunHistory::describe(
        e.folder, title ? value.toString() : e.record.value(QStringLiteral("title")).toString(),
        title ? e.record.value(QStringLiteral("notes")).toString() : value.toString());
    e.record = RunHistory::read(e.folder);
    Q_EMIT dataChanged(this->index(index.row(), 0), this->index(index.row(), ColumnCount - 1));
    return true;
}

QString HistoryModel::settingsText(const QJsonObject& config) {
    QStringList parts;
    const QLocale l;
    if (config.contains(QStringLiteral("lr")))
        parts << tr("lr %1").arg(l.toString(config.value(QStringLiteral("lr")).toDouble(), 'g', 3));
    if (config.contains(QStringLiteral("epochs")))
        parts << tr("%n epoch(s)", nullptr, config.value(QStringLiteral("epochs")).toInt());
    if (config.contains(QStringLiteral("batch")))
        parts << tr("batch %1").arg(l.toString(config.value(QStringLiteral("batch")).toInteger()));
    const QString lora = config.value(QStringLiteral("lora")).toString();
    if (!lora.isEmpty()) {
        QString rest;
        const QString base = loraBase(lora, &rest);
        parts << tr("LoRA %1").arg(base.isEmpty() ? rest : rest + QStringLiteral(", ") + base);
    }
    if (const QString mode = config.value(QStringLiteral("mode")).toString(); !mode.isEmpty())
        parts << mode;
    parts << tr("%n machine(s)", nullptr, std::max(1, machinesOf(config)));
    return parts.join(QStringLiteral(" · "));
}

int HistoryModel::machinesOf(const QJsonObject& config) {
    return int(config.value(QStringLiteral("invites")).toArray().size()) +
           (config.value(QStringLiteral("local_worker")).toBool(true) ? 1 : 0);
}

} // namespace tandem::ui
