#pragma once

#include <QAbstractTableModel>
#include <QDateTime>
#include <QJsonObject>

namespace tandem::ui {

// Past runs: each run folder under the runs folder holds run.json (its description, when it
// started, how it ended and its final figures) next to the checkpoint and exports.
class HistoryModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { Started, Model, Dataset, Status, Accuracy, Speed, ColumnCount };
    enum DataRole { FolderRole = Qt::UserRole + 1, CheckpointRole, ResumableRole };

    explicit HistoryModel(QObject* parent = nullptr);

    void setFolder(const QString& runsFolder);
    QString folder() const { return m_folder; }
    void reload();
    // The run in progress in this window; any other "running" record was interrupted.
    void setActiveFolder(const QString& folder) { m_active = folder; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

    // run.json helpers for the window that runs the training.
    static void writeRecord(const QString& runFolder, const QJsonObject& record);
    static QJsonObject readRecord(const QString& runFolder);

private:
    struct Entry {
        QString folder;
        QJsonObject record;
        QDateTime started;
    };
    QString m_folder;
    QString m_active;
    QList<Entry> m_entries;
};

} // namespace tandem::ui
