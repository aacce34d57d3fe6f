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
    // The machine chosen on the Find page, or the one that paired with this machine while
    // the wizard was open (empty: none, train alone).
    QString chosenName() const { return m_chosenName; }
    bool paired() const { return m_paired; }
    // The other machine started the pairing and this one answered it.
    bool answeredPairing() const { return m_answered; }
    // True while the Pair page runs an attempt: its questions are answered here.
    bool handlesPairing() const;

    int nextId() const override;

Q_SIGNALS:
    // The name typed on the first page, as soon as the typing pauses, so that other machines
    // see it during discovery and pairing already.
    void nameChosen(const QString& name);

private:
    // Pairing that the other machine started, answered in the dialog the window shows.
    void onQuestion(const PairingQuestion& q);
    void onPairingFinished(bool paired);

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
    bool m_answered = false;
    QString m_askingId, m_askingName; // the machine whose pairing question is open
    ThisMachinePage* m_thisPage;
    PairPage* m_pairPage;
};

} // namespace tandem::ui
