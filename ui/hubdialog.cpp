#include "ui/hubdialog.h"

#include "common/clocktext.h"
#include "hub/hubcache.h"
#include "hub/hubclient.h"
#include "hub/hubtoken.h"
#include "ui/format.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace tandem::ui {

namespace {

QTableWidget* makeTable(const QStringList& headers, const QString& name) {
    auto* t = new QTableWidget(0, int(headers.size()));
    t->setObjectName(name);
    t->setHorizontalHeaderLabels(headers);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->verticalHeader()->hide();
    // the model's name takes the room left; the short columns fit what they hold
    t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    t->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    return t;
}

// The selected row, or -1: what is selected, rather than the current cell, which a row chosen
// in a right-to-left layout does not always move.
int chosenRow(const QTableWidget* t) {
    const QModelIndexList rows = t->selectionModel()->selectedRows();
    return rows.isEmpty() ? -1 : rows.first().row();
}

} // namespace

HubDialog::HubDialog(QWidget* parent)
    : QDialog(parent)
    , m_client(new hub::HubClient(this)) {
    setWindowTitle(tr("Get a model"));
    m_client->setToken(hub::findToken().value);

    m_query = new QLineEdit;
    m_query->setObjectName(QStringLiteral("hubQuery"));
    m_query->setPlaceholderText(tr("Search the Hugging Face Hub: llama, qwen, smollm…"));
    m_searchButton = new QPushButton(tr("Search"));
    m_searchButton->setObjectName(QStringLiteral("hubSearch"));
    m_results = makeTable({tr("Model"), tr("Downloads"), tr("Task"), tr("Access")},
                          QStringLiteral("hubResults"));
    m_download = new QPushButton(tr("Download"));
    m_download->setObjectName(QStringLiteral("hubDownload"));
    m_stop = new QPushButton(tr("Stop"));
    m_stop->setObjectName(QStringLiteral("hubStop"));
    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("hubProgress"));
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("hubStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* searchRow = new QHBoxLayout;
    searchRow->addWidget(m_query, 1);
    searchRow->addWidget(m_searchButton);
    auto* downloadRow = new QHBoxLayout;
    downloadRow->addWidget(m_progress, 1);
    downloadRow->addWidget(m_download);
    downloadRow->addWidget(m_stop);
    auto* hubBox = new QGroupBox(tr("On the Hugging Face Hub"));
    auto* hubLayout = new QVBoxLayout(hubBox);
    hubLayout->addLayout(searchRow);
    hubLayout->addWidget(m_results, 1);
    hubLayout->addLayout(downloadRow);
    hubLayout->addWidget(m_status);

    m_local = makeTable({tr("Model"), tr("Size"), tr("Folder")}, QStringLiteral("hubLocal"));
    m_local->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
    m_use = new QPushButton(tr("Use this model"));
    m_use->setObjectName(QStringLiteral("hubUse"));
    auto* localBox =
        new QGroupBox(tr("On this computer (%1)").arg(QDir::toNativeSeparators(hub::cacheDir())));
    auto* localLayout = new QVBoxLayout(localBox);
    localLayout->addWidget(m_local, 1);
    localLayout->addWidget(m_use, 0, Qt::AlignRight);

    m_token = new QLineEdit;
    m_token->setObjectName(QStringLiteral("hubToken"));
    m_token->setEchoMode(QLineEdit::Password);
    m_token->setPlaceholderText(tr("hf_… from huggingface.co/settings/tokens"));
    m_saveToken = new QPushButton(tr("Save token"));
    m_saveToken->setObjectName(QStringLiteral("hubSaveToken"));
    m_tokenState = new QLabel;
    m_tokenState->setObjectName(QStringLiteral("hubTokenState"));
    m_tokenState->setWordWrap(true);
    auto* tokenRow = new QHBoxLayout;
    tokenRow->addWidget(new QLabel(tr("Access token")));
    tokenRow->addWidget(m_token, 1);
    tokenRow->addWidget(m_saveToken);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    buttons->button(QDialogButtonBox::Close)->setText(tr("Close"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(hubBox, 3);
    layout->addWidget(localBox, 2);
    layout->addLayout(tokenRow);
    layout->addWidget(m_tokenState);
    layout->addWidget(buttons);
    resize(760, 640);

    connect(m_searchButton, &QPushButton::clicked, this, &HubDialog::search);
    connect(m_query, &QLineEdit::returnPressed, this, &HubDialog::search);
    connect(m_download, &QPushButton::clicked, this, &HubDialog::download);
    connect(m_stop, &QPushButton::clicked, m_client, &hub::HubClient::cancel);
    connect(m_saveToken, &QPushButton::clicked, this, &HubDialog::saveToken);
    connect(m_use, &QPushButton::clicked, this, [this] {
        const int row = chosenRow(m_local);
        if (row < 0)
            return;
        m_chosen = m_local->item(row, 2)->data(Qt::UserRole).toString();
        accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    // Closed while downloading: the download stops, and what came is kept to resume from.
    connect(this, &QDialog::finished, m_client, &hub::HubClient::cancel);
    connect(m_results, &QTableWidget::itemSelectionChanged, this, &HubDialog::updateButtons);
    connect(m_local, &QTableWidget::itemSelectionChanged, this, &HubDialog::updateButtons);
    connect(m_client, &hub::HubClient::searched, this, &HubDialog::showResults);
    connect(m_client, &hub::HubClient::progressed, this,
            [this](qint64 done, qint64 total, const QString& file) {
                m_progress->setRange(0, 1000);
                m_progress->setValue(total > 0 ? int(1000 * done / total) : 1000);
                setStatus(tr("%1 of %2: %3").arg(formatBytes(done), formatBytes(total), file),
                          false);
            });
    connect(m_client, &hub::HubClient::downloaded, this,
            [this](const QString& folder, int files, int fetched, qint64 bytes) {
                setStatus(tr("Downloaded: %n file(s), %1 (%2 were here already). Choose it "
                             "below and press Use this model.",
                             nullptr, files)
                              .arg(formatBytes(bytes))
                              .arg(files - fetched),
                          false);
                refreshLocal(folder);
                updateButtons();
                m_downloading = false;
                Q_EMIT downloadEnded(true);
            });
    connect(m_client, &hub::HubClient::failed, this, [this](const QString& message) {
        setStatus(message, true);
        updateButtons();
        if (m_downloading) {
            m_downloading = false;
            Q_EMIT downloadEnded(false);
        } else {
            Q_EMIT searchShown();
        }
    });
    refreshLocal();
    showTokenState();
    updateButtons();
}

void HubDialog::search() {
    if (m_query->text().trimmed().isEmpty())
        return;
    setStatus(tr("Searching…"), false);
    m_client->search(m_query->text());
}

void HubDialog::showResults(const QList<hub::HubModel>& models) {
    m_results->setRowCount(0);
    for (const hub::HubModel& m : models) {
        const int row = m_results->rowCount();
        m_results->insertRow(row);
        m_results->setItem(row, 0, new QTableWidgetItem(m.id));
        auto* downloads = new QTableWidgetItem(countText(m.downloads));
        downloads->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_results->setItem(row, 1, downloads);
        m_results->setItem(row, 2, new QTableWidgetItem(m.task));
        const bool open = m.gated == QLatin1String("no");
        m_results->setItem(row, 3,
                           new QTableWidgetItem(open                ? tr("Open")
                                                : m.gated.isEmpty() ? QString()
                                                                    : tr("Gated: needs a token")));
    }
    setStatus(models.isEmpty()
                  ? tr("No model on the Hub matches.")
                  : tr("%n model(s). Choose one and press Download.", nullptr, int(models.size())),
              false);
    updateButtons();
    Q_EMIT searchShown();
}

void HubDialog::download() {
    const int row = chosenRow(m_results);
    if (row < 0)
        return;
    m_progress->setRange(0, 0); // busy until the first bytes
    setStatus(tr("Asking the Hub for %1's files…").arg(m_results->item(row, 0)->text()), false);
    m_client->setToken(hub::findToken().value);
    m_downloading = true;
    m_client->download(m_results->item(row, 0)->text());
    updateButtons();
}

void HubDialog::refreshLocal(const QString& select) {
    m_local->setRowCount(0);
    for (const hub::CachedModel& m : hub::cachedModels(hub::cacheDir())) {
        const int row = m_local->rowCount();
        m_local->insertRow(row);
        m_local->setItem(
            row, 0,
            new QTableWidgetItem(m.usable ? m.repoId : tr("%1 (incomplete)").arg(m.repoId)));
        m_local->setItem(row, 1, new QTableWidgetItem(formatBytes(m.bytes)));
        auto* folder = new QTableWidgetItem(QDir::toNativeSeparators(m.folder));
        folder->setToolTip(folder->text());
        folder->setData(Qt::UserRole, m.folder);
        folder->setData(Qt::UserRole + 1, m.usable);
        m_local->setItem(row, 2, folder);
        if (m.folder == select)
            m_local->setCurrentCell(row, 0); // selectRow misses in a right-to-left layout
    }
}

void HubDialog::saveToken() {
    const auto where = hub::saveToken(m_token->text());
    if (!where) {
        setStatus(where.error().message, true);
        return;
    }
    m_token->clear();
    m_client->setToken(hub::findToken().value);
    showTokenState();
}

void HubDialog::showTokenState() {
    const hub::Token t = hub::findToken();
    if (t.value.isEmpty())
        m_tokenState->setText(tr("No token: open models download without one; gated ones "
                                 "(Llama, Gemma) need one that has accepted their terms."));
    else if (t.where == QLatin1String("keychain"))
        m_tokenState->setText(tr("A token is kept in the system's keychain."));
    else if (t.where == QLatin1String("HF_TOKEN"))
        m_tokenState->setText(tr("The token in HF_TOKEN is used."));
    else
        m_tokenState->setText(tr("A token is kept in %1 (readable by you only).")
                                  .arg(QDir::toNativeSeparators(t.where)));
}

void HubDialog::setStatus(const QString& text, bool error) {
    m_status->setText(text);
    m_status->setProperty("error", error);
    m_status->setStyleSheet(error ? QStringLiteral("color: #b3261e") : QString());
}

void HubDialog::updateButtons() {
    const bool busy = m_client->busy();
    m_download->setEnabled(!busy && chosenRow(m_results) >= 0);
    m_stop->setEnabled(busy);
    m_searchButton->setEnabled(!busy);
    const int local = chosenRow(m_local);
    m_use->setEnabled(local >= 0 && m_local->item(local, 2)->data(Qt::UserRole + 1).toBool());
    if (!busy && m_progress->maximum() == 0)
        m_progress->setRange(0, 1000);
}

} // namespace tandem::ui
