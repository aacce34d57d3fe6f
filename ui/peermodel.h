#pragma once

#include "engine/training.h"
#include "node/nodeservice.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QSortFilterProxyModel>

namespace tandem::ui {

// This machine and every machine the node knows of: paired ones (online or not) and ones
// merely heard on the LAN. During a run it also shows each machine's role, share of the
// batch and samples/s.
class PeerModel : public QAbstractTableModel {
    Q_OBJECT

public:
    // Devices last: its text is the longest, and the run's columns stay in view. The device
    // ID's first eight digits tell apart machines of the same name (clones, default names).
    enum Column { Machine, DeviceId, Status, Role, Share, Speed, Shard, Devices, ColumnCount };
    enum DataRole {
        DeviceIdRole = Qt::UserRole + 1,
        AddressRole,
        PortRole,
        PairedRole,
        OnlineRole,
        SelfRole,
    };

    explicit PeerModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

    void setSelf(const QString& name, const QList<DeviceInfo>& devices);
    void setSelfId(const QString& deviceId);
    void setPeers(const QList<tandem::PeerInfo>& peers);
    QList<PeerInfo> peers() const { return m_peers; }
    // The workers of the latest step; empty clears the run columns. With `tokensPerSample`
    // (a language model's), the speed column counts tokens, as the charts do.
    void setRunStats(const QList<WorkerStepStats>& workers, double stepMs,
                     int64_t tokensPerSample = 0);
    // A worker the run leaves out because it would slow it (RunEvent::WorkerLeftOut's figures),
    // and one that takes part again.
    // costMs, stepMs: RunEvent's; withMs > 0: left out for the steps it took part in (stepMs is
    // then the steps' mean without it).
    void setIdle(const QString& workerName, double costMs, double stepMs, double withMs = 0);
    void setBack(const QString& workerName);
    // The latest step was a sharded run's: the Shard column says what each machine holds.
    bool sharded() const;

private:
    struct Live {
        double share = 0;
        double perS = 0;
        // A sharded run: its range ("2 of 3"), what it keeps for it, its links' bytes a step.
        int shard = 0, shards = 0;
        int64_t shardBytes = 0;
        double linkBytes = 0;
    };
    QString workerKey(const QString& workerName) const;

    QString m_selfName;
    QString m_selfId;
    QList<DeviceInfo> m_selfDevices;
    QList<PeerInfo> m_peers;
    QHash<QString, Live> m_live; // by device ID; "" is this machine
    int64_t m_tokensPerSample = 0;
    struct Idle {
        double costMs = 0, stepMs = 0, withMs = 0;
    };
    QHash<QString, Idle> m_idle; // likewise: left out of the run
    bool m_running = false;
};

// Which rows a view shows: the cluster (this machine and paired ones), or the machines
// found on the LAN (everything online except this machine).
class PeerFilter : public QSortFilterProxyModel {
    Q_OBJECT

public:
    enum class Mode { Cluster, Discovered };
    PeerFilter(Mode mode, QObject* parent = nullptr)
        : QSortFilterProxyModel(parent)
        , m_mode(mode) {}

protected:
    bool filterAcceptsRow(int row, const QModelIndex& parent) const override;

private:
    Mode m_mode;
};

} // namespace tandem::ui
