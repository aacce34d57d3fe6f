#pragma once

#include "common/deviceinfo.h"
#include "net/pairing.h"

#include <QWizard>

class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;
class QTimer;

namespace tandem::ui {

class NodeBridge;
class PeerFilter;

// First start, and Machines → Set up pairing: this machine, finding the other one, comparing
// the code, done. Pairing can be skipped to train on this machine alone.
class SetupWizard : public QWizard {
    Q_OBJECT

public:
    enum PageId { ThisMachine, FindPeer, Pair, Done };

    SetupWizard(NodeBridge* node, const QList<DeviceInfo>& devices, const QString& name,
                QWidget* parent = nullptr);

    QString machineName() const;
    // The machine chosen on the Find page (empty: none, train alone).
    QString chosenName() const { return m_chosenName; }
    bool paired() const { return m_paired; }
    // True while the Pair page runs an attempt: its questions are answered here.
    bool handlesPairing() const;

    int nextId() const override;

private:
    class ThisMachinePage;
    class FindPage;
    class PairPage;
    class DonePage;
    friend class FindPage;
    friend class PairPage;
    friend class DonePage;

    NodeBridge* m_node;
    QString m_chosenId, m_chosenName, m_chosenAddress;
    quint16 m_chosenPort = 0;
    bool m_paired = false;
    ThisMachinePage* m_thisPage;
    PairPage* m_pairPage;
};

} // namespace tandem::ui
