#pragma once

#include <QAbstractTableModel>
#include <QDateTime>
#include <QJsonObject>

namespace tandem::ui {

// Past runs: those in the runs folder and those the node's history lists (started from the
// command line), each folder's record (RunHistory: its description, when it started, how it
// ended and its final figures) beside the checkpoint and exports.
class HistoryModel : public QAbstractTableModel {
    Q_OBJECT

public:
    // Name: the title a person gave the run (editable), else its folder's name. Settings: what
    // was chosen (learning rate, epochs, batch, adapters, mode, machines). Duration: from its
    // start to its end, or to now while it runs.
    enum Column {
        Name,
        Started,
        Model,
        Dataset,
        Settings,
        Status,
        Accuracy,
        Duration,
        Speed,
        ColumnCount
    };
    // TaskRole: the run's task as runenums names it ("sequence", …), empty before its summary.
    // ModelRole: the model as the run description names it (hf:DIR, a file, a zoo name).
    enum DataRole {
        FolderRole = Qt::UserRole + 1,
        CheckpointRole,
        ResumableRole,
        TaskRole,
        ModelRole,
        AdaptersRole, // whether the run trained adapters (LoRA) rather than every weight
        LentRole,     // a run of another machine's that this one lent its device to
        NotesRole,    // what a person wrote of the run
        ConfigRole    // the run description it started with (a JSON object)
    };

    explicit HistoryModel(QObject* parent = nullptr);

    void setFolder(const QString& runsFolder);
    QString folder() const { return m_folder; }
    void reload();
    // The run in progress in this window; any other "running" record was interrupted.
    void setActiveFolder(const QString& folder) { m_active = folder; }
    // Whether this machine lends its device now: a lent run's record that says "running" is
    // the one it lends to; without lending, that run was interrupted.
    void setLending(bool lending);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    // The Name column's text (EditRole), and the notes (NotesRole): kept in the run's record.
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;
    // A run's settings in a line, from its description: "lr 0.0002 · 2 epochs · batch 8 · …".
    static QString settingsText(const QJsonObject& config);
    // The machines a run description trains on: its invitations and this machine's own.
    static int machinesOf(const QJsonObject& config);

    // The node home whose history lists runs started elsewhere (the command line).
    void setHome(const QString& home);

private:
    struct Entry {
        QString folder;
        QJsonObject record;
        QDateTime started;
    };
    QString lentText(Column column, const Entry& e, const QString& status) const;

    QString m_folder;
    QString m_home;
    QString m_active;
    bool m_lending = false;
    QList<Entry> m_entries;
};

} // namespace tandem::ui
