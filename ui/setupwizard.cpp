#include "ui/setupwizard.h"

#include "ui/format.h"
#include "ui/nodebridge.h"
#include "ui/peermodel.h"
#include "ui/tables.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <utility>

namespace tandem::ui {

namespace {
QLabel* wrapped(const QString& text = {}) {
    auto* l = new QLabel(text);
    l->setWordWrap(true);
    return l;
}

} // namespace

// 1. This machine: its devices, its name (editable) and its device ID.
class SetupWizard::ThisMachinePage : public QWizardPage {
public:
    ThisMachinePage(SetupWizard* wizard, NodeBridge* node, const QList<DeviceInfo>& devices,
                    const QString& name)
        : m_wizard(wizard) {
        setTitle(SetupWizard::tr("This machine"));
        setSubTitle(SetupWizard::tr("Tandem trains on every device listed here. Other machines "
                                    "will see this machine under its name."));
        auto* layout = new QVBoxLayout(this);
        layout->addWidget(new QLabel(SetupWizard::tr("Devices:")));
        auto* devs =
            wrapped(QStringLiteral("• ") + describeDevices(devices, QStringLiteral("\n• ")));
        devs->setObjectName(QStringLiteral("devicesLabel"));
        layout->addWidget(devs);
        auto* row = new QHBoxLayout;
        row->addWidget(new QLabel(SetupWizard::tr("Name:")));
        m_name = new QLineEdit(name);
        m_name->setObjectName(QStringLiteral("nameEdit"));
        m_name->setMaxLength(64);
        row->addWidget(m_name, 1);
        layout->addLayout(row);
        m_id = wrapped();
        m_id->setObjectName(QStringLiteral("deviceIdLabel"));
        m_id->setTextInteractionFlags(Qt::TextSelectableByMouse);
        layout->addWidget(m_id);
        layout->addStretch();
        auto showId = [this](const QString& id) {
            m_id->setText(SetupWizard::tr("Device ID: %1").arg(id));
        };
        if (node->isRunning())
            showId(node->deviceId());
        connect(node, &NodeBridge::started, this, [showId](const QString& id) { showId(id); });
        connect(m_name, &QLineEdit::textChanged, this, &QWizardPage::completeChanged);
        m_typing.setSingleShot(true);
        m_typing.setInterval(400);
        connect(m_name, &QLineEdit::textChanged, &m_typing, qOverload<>(&QTimer::start));
        connect(&m_typing, &QTimer::timeout, this, [this] { announce(); });
    }
    bool isComplete() const override { return !m_name->text().trimmed().isEmpty(); }
    bool validatePage() override {
        announce();
        return true;
    }
    void announce() {
        m_typing.stop();
        const QString name = m_name->text().trimmed();
        if (!name.isEmpty() && name != m_announced) {
            m_announced = name;
            Q_EMIT m_wizard->nameChosen(name);
        }
    }
    SetupWizard* m_wizard;
    QLineEdit* m_name;
    QLabel* m_id;
    QTimer m_typing;
    QString m_announced;
};

// 2. Find your other machine: machines announcing themselves on the LAN, or one added by
// address; hints when nothing appears.
class SetupWizard::FindPage : public QWizardPage {
public:
    FindPage(SetupWizard* wizard, NodeBridge* node)
        : m_wizard(wizard)
        , m_node(node) {
        setTitle(SetupWizard::tr("Find your other machine"));
        setSubTitle(SetupWizard::tr("Start Tandem on the other machine too. Machines on this "
                                    "network appear below; choose one and press Next."));
        auto* layout = new QVBoxLayout(this);
        m_filter = new PeerFilter(PeerFilter::Mode::Discovered, this);
        m_filter->setSourceModel(node->peers());
        m_table = makeRowTable(m_filter);
        m_table->setObjectName(QStringLiteral("peerTable"));
        for (int c : {int(PeerModel::Role), int(PeerModel::Share), int(PeerModel::Speed),
                      int(PeerModel::Shard)})
            m_table->hideColumn(c);
        layout->addWidget(m_table, 1);
        auto* row = new QHBoxLayout;
        m_address = new QLineEdit;
        m_address->setObjectName(QStringLiteral("addressEdit"));
        m_address->setPlaceholderText(SetupWizard::tr("IP address or host name"));
        auto* add = new QPushButton(SetupWizard::tr("Add by address"));
        add->setObjectName(QStringLiteral("addAddressButton"));
        row->addWidget(m_address, 1);
        row->addWidget(add);
        layout->addLayout(row);
        m_hint = wrapped(SetupWizard::tr(
            "Nothing yet? Check that Tandem runs on the other machine and that both are on the "
            "same network. Firewalls must allow UDP port 47300 and TCP port 47301. On a Mac, "
            "allow Tandem under System Settings → Privacy & Security → Local Network. Some Wi-Fi "
            "networks block discovery: then add the other machine by its address."));
        m_hint->setObjectName(QStringLiteral("firewallHint"));
        layout->addWidget(m_hint);
        m_skip = wrapped(SetupWizard::tr("To train on this machine alone, press Next without "
                                         "choosing a machine."));
        layout->addWidget(m_skip);
        connect(add, &QPushButton::clicked, this, [this] {
            if (!m_address->text().trimmed().isEmpty())
                m_node->addAddress(m_address->text().trimmed());
        });
        connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
                [this] { remember(); });
        connect(m_filter, &QAbstractItemModel::modelReset, this, [this] { reselect(); });
        // The advice for when nothing appears goes once something has.
        auto hint = [this] { m_hint->setHidden(m_filter->rowCount() > 0); };
        for (auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
            connect(m_filter, signal, this, hint);
        connect(m_filter, &QAbstractItemModel::modelReset, this, hint);
        connect(m_filter, &QAbstractItemModel::layoutChanged, this, hint);
        hint();
    }

    void initializePage() override { reselect(); }

    void remember() {
        const QModelIndexList rows = m_table->selectionModel()->selectedRows();
        if (rows.isEmpty())
            return;
        const QModelIndex i = rows.first();
        m_wizard->m_chosenId = i.data(PeerModel::DeviceIdRole).toString();
        m_wizard->m_chosenName = i.siblingAtColumn(PeerModel::Machine).data().toString();
        m_wizard->m_chosenAddress = i.data(PeerModel::AddressRole).toString();
        m_wizard->m_chosenPort = quint16(i.data(PeerModel::PortRole).toUInt());
    }

    // The list is rebuilt as announcements come and go; keep the chosen machine selected.
    void reselect() {
        for (int r = 0; r < m_filter->rowCount(); ++r) {
            const QModelIndex i = m_filter->index(r, 0);
            if (i.data(PeerModel::DeviceIdRole).toString() == m_wizard->m_chosenId) {
                selectWholeRow(m_table, i);
                return;
            }
        }
    }

    SetupWizard* m_wizard;
    NodeBridge* m_node;
    PeerFilter* m_filter;
    QTableView* m_table;
    QLineEdit* m_address;
    QLabel* m_hint;
    QLabel* m_skip;
};

// 3. Pair: both screens show the same six digits; the person says whether they match.
class SetupWizard::PairPage : public QWizardPage {
public:
    PairPage(SetupWizard* wizard, NodeBridge* node)
        : m_wizard(wizard)
        , m_node(node) {
        setTitle(SetupWizard::tr("Pair"));
        setSubTitle(SetupWizard::tr("Both machines show a code. When the codes are the same, "
                                    "no other device sits between the two."));
        auto* layout = new QVBoxLayout(this);
        m_status = wrapped();
        m_status->setObjectName(QStringLiteral("pairStatus"));
        layout->addWidget(m_status);
        m_code = new QLabel;
        m_code->setObjectName(QStringLiteral("codeLabel"));
        QFont big = m_code->font();
        big.setPointSizeF(big.pointSizeF() * 2.6);
        big.setBold(true);
        m_code->setFont(big);
        m_code->setAlignment(Qt::AlignCenter);
        layout->addWidget(m_code);
        auto* row = new QHBoxLayout;
        m_same = new QPushButton(SetupWizard::tr("The codes match"));
        m_same->setObjectName(QStringLiteral("sameCodeButton"));
        m_different = new QPushButton(SetupWizard::tr("The codes differ"));
        m_different->setObjectName(QStringLiteral("differentCodeButton"));
        m_retry = new QPushButton(SetupWizard::tr("Try again"));
        m_retry->setObjectName(QStringLiteral("retryButton"));
        row->addStretch();
        row->addWidget(m_same);
        row->addWidget(m_different);
        row->addWidget(m_retry);
        row->addStretch();
        layout->addLayout(row);
        m_next = wrapped();
        m_next->setObjectName(QStringLiteral("pairAdvice"));
        layout->addWidget(m_next);
        layout->addStretch();
        connect(m_same, &QPushButton::clicked, this, [this] { answer(true); });
        connect(m_different, &QPushButton::clicked, this, [this] { answer(false); });
        connect(m_retry, &QPushButton::clicked, this, [this] { begin(); });
        connect(node, &NodeBridge::pairingQuestion, this, [this](const PairingQuestion& q) {
            if (!m_active)
                return;
            m_code->setText(pairingCodeText(q.code));
            m_status->setText(SetupWizard::tr("Check that %1 shows the same code:")
                                  .arg(q.peerName.isEmpty() ? m_wizard->m_chosenName : q.peerName));
            m_same->setEnabled(true);
            m_different->setEnabled(true);
        });
        connect(node, &NodeBridge::pairingFinished, this,
                [this](bool paired, PairFailure failure, const QString& detail) {
                    if (m_active)
                        finish(paired, failure, detail);
                });
    }

    void initializePage() override { begin(); }
    void cleanupPage() override {
        if (m_active)
            m_node->cancelPairing();
        m_active = false;
    }
    bool isComplete() const override { return m_wizard->m_paired; }

    void begin() {
        m_wizard->m_paired = false;
        m_active = true;
        m_code->clear();
        m_next->clear();
        m_same->setEnabled(false);
        m_different->setEnabled(false);
        m_retry->hide();
        m_status->setText(SetupWizard::tr("Connecting to %1…").arg(m_wizard->m_chosenName));
        m_node->pairWith(m_wizard->m_chosenAddress, m_wizard->m_chosenPort);
        Q_EMIT completeChanged();
    }

    void answer(bool same) {
        m_same->setEnabled(false);
        m_different->setEnabled(false);
        m_status->setText(same ? SetupWizard::tr("Waiting for the other machine to confirm…")
                               : SetupWizard::tr("Cancelling…"));
        m_node->answerPairing(same);
    }

    void finish(bool paired, PairFailure failure, const QString& detail) {
        m_active = false;
        m_same->setEnabled(false);
        m_different->setEnabled(false);
        m_wizard->m_paired = paired;
        if (paired) {
            m_status->setText(SetupWizard::tr("Paired with %1.").arg(m_wizard->m_chosenName));
            m_next->setText(SetupWizard::tr("Press Next."));
            Q_EMIT completeChanged();
            return;
        }
        m_code->clear();
        m_retry->show();
        switch (failure) {
        case PairFailure::Timeout:
            m_status->setText(SetupWizard::tr("Nobody answered in time."));
            m_next->setText(SetupWizard::tr("Press Try again, and confirm the code on both "
                                            "machines within a minute."));
            break;
        case PairFailure::RejectedByPeer:
        case PairFailure::RejectedHere:
            m_status->setText(
                failure == PairFailure::RejectedHere
                    ? SetupWizard::tr("You said the codes differ. Nothing was paired.")
                    : SetupWizard::tr("The other machine said the codes differ. "
                                      "Nothing was paired."));
            m_next->setText(SetupWizard::tr(
                "Codes that differ can mean that another device is answering in place of your "
                "machine. Check that you chose the right machine, then try again."));
            break;
        case PairFailure::PeerRefused:
            m_status->setText(SetupWizard::tr("The other machine refused."));
            m_next->setText(SetupWizard::tr("It may be busy or have refused several attempts: "
                                            "wait a minute and try again."));
            break;
        case PairFailure::ConnectionLost:
            m_status->setText(SetupWizard::tr("Could not reach the other machine."));
            m_next->setText(SetupWizard::tr("Check that Tandem is running there and that its "
                                            "firewall allows TCP port 47301."));
            break;
        case PairFailure::Interference:
        case PairFailure::Storage:
        case PairFailure::None:
            m_status->setText(SetupWizard::tr("Pairing failed."));
            m_next->setText(SetupWizard::tr("Try again. If this repeats, see Troubleshooting in "
                                            "the user guide."));
            break;
        }
        m_next->setText(m_next->text() + QStringLiteral("\n(") + detail + QLatin1Char(')'));
        Q_EMIT completeChanged();
    }

    SetupWizard* m_wizard;
    NodeBridge* m_node;
    QLabel* m_status;
    QLabel* m_code;
    QLabel* m_next;
    QPushButton* m_same;
    QPushButton* m_different;
    QPushButton* m_retry;
    bool m_active = false;
};

// 4. Done: what was set up, and the way into the dashboard.
class SetupWizard::DonePage : public QWizardPage {
public:
    explicit DonePage(SetupWizard* wizard)
        : m_wizard(wizard) {
        setTitle(SetupWizard::tr("Done"));
        setSubTitle(SetupWizard::tr("What was set up, and what comes next."));
        auto* layout = new QVBoxLayout(this);
        m_summary = wrapped();
        m_summary->setObjectName(QStringLiteral("doneSummary"));
        layout->addWidget(m_summary);
        layout->addStretch();
    }
    void initializePage() override {
        QString text;
        if (m_wizard->answeredPairing())
            text = SetupWizard::tr("%1 and %2 are paired: %2 asked, and you confirmed the code "
                                   "here.")
                       .arg(m_wizard->machineName(), m_wizard->chosenName()) +
                   QStringLiteral("\n\n") +
                   SetupWizard::tr("Runs started on %1 can now use this machine's devices. Keep "
                                   "Tandem open here: the dashboard shows the run while this "
                                   "machine takes part, with Stop lending to leave it. You can "
                                   "also start runs from here.")
                       .arg(m_wizard->chosenName());
        else if (m_wizard->paired())
            text = SetupWizard::tr("%1 and %2 are paired. They find each other on this network "
                                   "from now on; Tandem shares the training between them.")
                       .arg(m_wizard->machineName(), m_wizard->chosenName());
        else
            text = SetupWizard::tr("%1 is ready to train on its own. You can pair another "
                                   "machine at any time from Machines → Set up pairing.")
                       .arg(m_wizard->machineName());
        text += QStringLiteral("\n\n") +
                SetupWizard::tr("Press Finish to open the dashboard. Its New run tab is set up "
                                "for the demo (mnist-cnn on Fashion-MNIST): press Start.");
        m_summary->setText(text);
    }
    SetupWizard* m_wizard;
    QLabel* m_summary;
};

SetupWizard::SetupWizard(NodeBridge* node, const QList<DeviceInfo>& devices, const QString& name,
                         QWidget* parent)
    : QWizard(parent)
    , m_node(node) {
    setObjectName(QStringLiteral("setupWizard"));
    setWindowTitle(tr("Set up Tandem"));
    setWizardStyle(QWizard::ModernStyle);
    setOption(QWizard::NoBackButtonOnLastPage);
    // Our own words: Qt has no translation of its wizard buttons for every language here.
    setButtonText(QWizard::BackButton, tr("< &Back"));
    setButtonText(QWizard::NextButton, tr("&Next >"));
    setButtonText(QWizard::CancelButton, tr("Cancel"));
    setButtonText(QWizard::FinishButton, tr("Finish"));
    m_thisPage = new ThisMachinePage(this, node, devices, name);
    m_pairPage = new PairPage(this, node);
    setPage(ThisMachine, m_thisPage);
    setPage(FindPeer, new FindPage(this, node));
    setPage(Pair, m_pairPage);
    setPage(Done, new DonePage(this));
    setStartId(ThisMachine);
    resize(720, 520);
    connect(node, &NodeBridge::pairingQuestion, this, &SetupWizard::onQuestion);
    connect(node, &NodeBridge::pairingFinished, this,
            [this](bool paired, PairFailure, const QString&) { onPairingFinished(paired); });
}

void SetupWizard::onQuestion(const PairingQuestion& q) {
    if (handlesPairing())
        return;
    m_askingId = q.peerId;
    m_askingName = q.peerName;
}

// The other machine paired with this one while the wizard was open: there is nothing left to
// find, so the wizard goes to its last page and says what that means here.
void SetupWizard::onPairingFinished(bool paired) {
    if (m_askingId.isEmpty() || handlesPairing())
        return;
    const QString id = std::exchange(m_askingId, QString());
    if (!paired || !isVisible())
        return;
    m_answered = true;
    m_paired = true;
    m_chosenId = id;
    m_chosenName = m_askingName;
    if (currentId() == Pair)
        m_pairPage->cleanupPage();
    for (int guard = 0; currentId() != Done && currentId() != -1 && guard < 4; ++guard)
        next();
}

QString SetupWizard::machineName() const {
    return m_thisPage->m_name->text().trimmed();
}

bool SetupWizard::handlesPairing() const {
    return isVisible() && m_pairPage->m_active;
}

int SetupWizard::nextId() const {
    switch (currentId()) {
    case ThisMachine:
        return FindPeer;
    case FindPeer: {
        if (m_answered)
            return Done;
        // Without a choice, the wizard skips pairing: one machine is a valid cluster.
        auto* page = static_cast<FindPage*>(currentPage());
        return page->m_table->selectionModel()->hasSelection() ? Pair : Done;
    }
    case Pair:
        return Done;
    default:
        return -1;
    }
}

} // namespace tandem::ui
