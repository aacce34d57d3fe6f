#include "ui/peermodel.h"

#include "net/identity.h"
#include "ui/format.h"
#include "wire/messages.h"

#include <QLocale>
#include <QRegularExpression>

namespace tandem::ui {

PeerModel::PeerModel(QObject* parent)
    : QAbstractTableModel(parent) {}

int PeerModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : 1 + int(m_peers.size());
}

int PeerModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PeerModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o == Qt::Horizontal && role == Qt::ToolTipRole && section == Share)
        return tr("This machine's part of each step's samples, as the run assigns them: the "
                  "machine that lends its device shows the same figure");
    if (o == Qt::Horizontal && role == Qt::ToolTipRole && section == Shard)
        return tr("In a sharded run: which range of the trainable values this machine owns, "
                  "what it keeps for it (the fp32 weights, the optimizer's state and the "
                  "gradients' sum), and the bytes its links sent and received in the last step");
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (Column(section)) {
    case Machine:
        return tr("Machine");
    case DeviceId:
        return tr("Device ID");
    case Status:
        return tr("Status");
    case Devices:
        return tr("Devices");
    case Role:
        return tr("Role");
    case Share:
        return tr("Share");
    case Speed:
        return m_tokensPerSample > 0 ? tr("Tokens/s") : tr("Samples/s");
    case Shard:
        return tr("Shard");
    case ColumnCount:
        break;
    }
    return {};
}

QVariant PeerModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount())
        return {};
    const bool self = index.row() == 0;
    const PeerInfo* p = self ? nullptr : &m_peers[index.row() - 1];
    const QString key = self ? QString() : p->deviceId;
    switch (role) {
    case DeviceIdRole:
        return key;
    case AddressRole:
        return p ? p->address : QString();
    case PortRole:
        return p ? p->port : 0;
    case PairedRole:
        return self || p->paired;
    case OnlineRole:
        return self || p->online;
    case SelfRole:
        return self;
    case Qt::ToolTipRole:
        if (index.column() == Role && m_running && m_idle.contains(key))
            return tr("The run measures it again after a few dozen steps, then less often "
                      "while it would still slow the run, and gives it a share again when it "
                      "would make steps shorter: when its load lifts, its link gets faster, or "
                      "the batch grows.");
        if (index.column() == Devices)
            return describeDevices(self ? m_selfDevices : p->devices, QStringLiteral("\n"));
        if (p)
            return tr("Device ID %1\n%2\nTandem %3").arg(p->deviceId, p->os, p->appVersion);
        return {};
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    const auto live = m_live.constFind(key);
    switch (Column(index.column())) {
    case Machine:
        if (self)
            return tr("%1 (this machine)").arg(m_selfName);
        return p->name.isEmpty() ? p->deviceId.left(16) : p->name;
    case DeviceId:
        return shortDeviceId(self ? m_selfId : p->deviceId);
    case Status:
        if (self)
            return tr("Online");
        if (!p->online)
            return tr("Offline");
        if (p->protocolVersion != wire::kProtocolVersion)
            return tr("Online, but its Tandem %1 cannot work with this one: install the same "
                      "version on both")
                .arg(p->appVersion);
        return p->paired ? tr("Online, paired") : tr("Online, not paired");
    case Devices:
        return describeDevices(self ? m_selfDevices : p->devices, QStringLiteral("; "));
    case Role:
        if (!m_running)
            return self ? tr("Idle") : QString();
        if (const auto idle = m_idle.constFind(key); idle != m_idle.constEnd()) {
            if (idle->withMs > 0)
                return tr("Idle: slowed the run (its steps took %1 ms, against %2 ms without "
                          "it)")
                    .arg(QLocale().toString(idle->withMs, 'f', 0),
                         QLocale().toString(idle->stepMs, 'f', 0));
            return tr("Idle: would slow the run (%1 ms a step before its first sample, against "
                      "a %2 ms step)")
                .arg(QLocale().toString(idle->costMs, 'f', 0),
                     QLocale().toString(idle->stepMs, 'f', 0));
        }
        if (live == m_live.constEnd())
            return self ? tr("Coordinator") : QString();
        return self ? tr("Coordinator and worker") : tr("Worker");
    case Share:
        return live == m_live.constEnd()
                   ? QString()
                   : QLocale().toString(100.0 * live->share, 'f', 0) + QLatin1Char('%');
    case Speed:
        return live == m_live.constEnd() ? QString() : QLocale().toString(live->perS, 'f', 0);
    case Shard:
        if (live == m_live.constEnd() || live->shards == 0)
            return QString();
        if (live->linkBytes > 0)
            return tr("%1 of %2, %3, %4 a step")
                .arg(live->shard)
                .arg(live->shards)
                .arg(formatBytes(double(live->shardBytes)), formatBytes(live->linkBytes));
        return tr("%1 of %2, %3")
            .arg(live->shard)
            .arg(live->shards)
            .arg(formatBytes(double(live->shardBytes)));
    case ColumnCount:
        break;
    }
    return {};
}

void PeerModel::setSelf(const QString& name, const QList<DeviceInfo>& devices) {
    m_selfName = name;
    m_selfDevices = devices;
    Q_EMIT dataChanged(index(0, 0), index(0, ColumnCount - 1));
}

void PeerModel::setSelfId(const QString& deviceId) {
    m_selfId = deviceId;
    Q_EMIT dataChanged(index(0, DeviceId), index(0, DeviceId));
}

void PeerModel::setPeers(const QList<PeerInfo>& peers) {
    beginResetModel();
    m_peers = peers;
    endResetModel();
}

QString PeerModel::workerKey(const QString& workerName) const {
    if (workerName == QLatin1String("local"))
        return QString();
    // Remote workers are "NAME (device 1F65 EBAE)": the digits find the machine.
    static const QRegularExpression device(
        QStringLiteral("\\(device ([0-9A-F]{4} [0-9A-F]{4})\\)"));
    const QString digits = device.match(workerName).captured(1);
    for (const PeerInfo& p : m_peers)
        if (p.paired && !digits.isEmpty() && shortDeviceIdText(p.deviceId) == digits)
            return p.deviceId;
    return workerName;
}

void PeerModel::setIdle(const QString& workerName, double costMs, double stepMs, double withMs) {
    m_idle.insert(workerKey(workerName), Idle{costMs, stepMs, withMs});
    Q_EMIT dataChanged(index(0, Role), index(rowCount() - 1, Role));
}

void PeerModel::setBack(const QString& workerName) {
    m_idle.remove(workerKey(workerName));
    Q_EMIT dataChanged(index(0, Role), index(rowCount() - 1, Role));
}

void PeerModel::setRunStats(const QList<WorkerStepStats>& workers, double stepMs,
                            int64_t tokensPerSample) {
    m_live.clear();
    const int64_t unit = workers.isEmpty() ? 0 : tokensPerSample;
    if (unit != m_tokensPerSample) {
        m_tokensPerSample = unit;
        Q_EMIT headerDataChanged(Qt::Horizontal, Speed, Speed);
    }
    m_running = !workers.isEmpty() || stepMs > 0;
    if (!m_running)
        m_idle.clear();
    int64_t total = 0;
    for (const WorkerStepStats& w : workers)
        total += w.samples;
    for (const WorkerStepStats& w : workers) {
        Live& l = m_live[workerKey(w.name)];
        l.share += total > 0 ? double(w.samples) / double(total) : 0;
        l.perS += stepMs > 0
                      ? double(w.samples) * double(std::max<int64_t>(unit, 1)) * 1000.0 / stepMs
                      : 0;
        if (w.shards > 0) {
            l.shard = w.shard;
            l.shards = w.shards;
            l.shardBytes = w.shardBytes;
            l.linkBytes = w.linkBytes;
        }
    }
    Q_EMIT dataChanged(index(0, Role), index(rowCount() - 1, Shard));
}

bool PeerModel::sharded() const {
    for (const Live& l : m_live)
        if (l.shards > 0)
            return true;
    return false;
}

bool PeerFilter::filterAcceptsRow(int row, const QModelIndex& parent) const {
    const QModelIndex i = sourceModel()->index(row, 0, parent);
    const bool self = i.data(PeerModel::SelfRole).toBool();
    switch (m_mode) {
    case Mode::Cluster:
        return self || i.data(PeerModel::PairedRole).toBool();
    case Mode::Discovered:
        return !self && i.data(PeerModel::OnlineRole).toBool();
    }
    return false;
}

} // namespace tandem::ui
