#include "ui/runform.h"

#include "common/ports.h"
#include "model/modelsource.h"
#include "ui/peermodel.h"
#include "ui/wheelguard.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPointer>
#include <QPushButton>
#include <QSet>
#include <QSpinBox>
#include <QThread>

#include <iterator>
#include <limits>

namespace tandem::ui {

namespace {
const QString& kFileItem = kModelFileItem;
const QString& kHfItem = kModelHfItem;
// The mode list's entry for local SGD with its exchange streamed in fragments.
constexpr char kStreaming[] = "streaming";

// Dataset kinds: the spec prefix, whether it names a folder or a file, and the file dialog's
// filter for a file. Options follow the path in the same field ("story.txt,context=128").
struct DataKind {
    QString prefix; // "" for the built-in set
    bool folder;
    const char* filter;
};
const DataKind kDataKinds[] = {
    {QString(), false, nullptr},
    {QStringLiteral("fashion-mnist:"), true, nullptr},
    {QStringLiteral("mnist:"), true, nullptr},
    {QStringLiteral("cifar10:"), true, nullptr},
    {QStringLiteral("csv:"), false,
     QT_TRANSLATE_NOOP("tandem::ui::RunForm", "CSV (*.csv);;All files (*)")},
    {QStringLiteral("text:"), false,
     QT_TRANSLATE_NOOP("tandem::ui::RunForm", "Text (*.txt *.md);;All files (*)")},
    {QStringLiteral("tokens:"), false,
     QT_TRANSLATE_NOOP("tandem::ui::RunForm", "Token files (*.bin);;All files (*)")},
    {QStringLiteral("npz:"), false,
     QT_TRANSLATE_NOOP("tandem::ui::RunForm", "NumPy (*.npz);;All files (*)")},
    {QStringLiteral("images:"), true, nullptr},
    {QStringLiteral("jsonl:"), false,
     QT_TRANSLATE_NOOP("tandem::ui::RunForm", "JSON Lines (*.jsonl *.json);;All files (*)")},
    {QStringLiteral("chat:"), false,
     QT_TRANSLATE_NOOP("tandem::ui::RunForm", "JSON Lines (*.jsonl *.json);;All files (*)")},
    {QStringLiteral("prefs:"), false,
     QT_TRANSLATE_NOOP("tandem::ui::RunForm", "JSON Lines (*.jsonl *.json);;All files (*)")}};
constexpr int kTextKind = 5;
constexpr int kChatKind = 10;

// Above this many parameters a new Hugging Face run recomputes activations: a laptop's memory
// goes further that way.
constexpr qint64 kRecomputeAbove = 300'000'000;
// Lists as wide as their longest entry would hold the window wider than a laptop's screen; an
// entry too long for the width is elided, and shown whole when the list opens.
void compactLists(QWidget* form) {
    for (QComboBox* c : form->findChildren<QComboBox*>()) {
        c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        c->setMinimumContentsLength(12);
        // A narrow pane cuts a long choice: its whole text shows on hover, unless the list
        // explains itself there already.
        if (!c->toolTip().isEmpty())
            continue;
        c->setToolTip(c->currentText());
        QObject::connect(c, &QComboBox::currentTextChanged, c,
                         [c](const QString& text) { c->setToolTip(text); });
    }
}

} // namespace

RunForm::RunForm(PeerModel* peers, const QList<DeviceInfo>& devices, QWidget* parent)
    : QWidget(parent)
    , m_peers(peers) {
    auto* form = new QFormLayout(this);
    // On a narrow window a label goes above its field instead of beside it.
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

    addModelRows(form);
    addDataRows(form);

    m_machines = new QListWidget;
    m_machines->setObjectName(QStringLiteral("machinesList"));
    m_machines->setMaximumHeight(90);
    form->addRow(tr("Machines"), m_machines);

    addModeRows(form);

    m_wire = new QComboBox;
    m_wire->setObjectName(QStringLiteral("wireCombo"));
    m_wire->addItem(tr("32-bit floats (exact)"), QStringLiteral("fp32"));
    m_wire->addItem(tr("16-bit floats (half the traffic)"), QStringLiteral("fp16"));
    m_wire->addItem(tr("bfloat16 (half the traffic, wider range)"), QStringLiteral("bf16"));
    form->addRow(tr("Wire precision"), m_wire);

    // Where this machine trains, and in what precision every machine computes.
    m_device = new QComboBox;
    m_device->setObjectName(QStringLiteral("deviceCombo"));
    m_device->addItem(
        tr("Best available: %1").arg(devices.isEmpty() ? QString() : devices.first().name),
        QString());
    for (const DeviceInfo& d : devices)
        m_device->addItem(QStringLiteral("%1: %2").arg(d.torchDevice(), d.name), d.torchDevice());
    form->addRow(tr("Device on this machine"), m_device);
    m_precision = new QComboBox;
    m_precision->setObjectName(QStringLiteral("precisionCombo"));
    m_precision->addItem(tr("32-bit floats (exact)"), QStringLiteral("fp32"));
    m_precision->addItem(tr("bfloat16 autocast (faster on recent CPUs and GPUs)"),
                         QStringLiteral("bf16"));
    m_precision->addItem(tr("16-bit autocast (NVIDIA and Apple GPUs)"), QStringLiteral("fp16"));
    form->addRow(tr("Compute precision"), m_precision);

    m_optimizer = new QComboBox;
    m_optimizer->setObjectName(QStringLiteral("optimizerCombo"));
    m_optimizer->addItem(QStringLiteral("Adam"), QStringLiteral("adam"));
    m_optimizer->addItem(QStringLiteral("AdamW"), QStringLiteral("adamw"));
    m_optimizer->addItem(tr("SGD with momentum"), QStringLiteral("sgd"));
    m_optimizer->addItem(QStringLiteral("RMSprop"), QStringLiteral("rmsprop"));
    m_optimizer->addItem(QStringLiteral("Adagrad"), QStringLiteral("adagrad"));
    m_optimizer->addItem(QStringLiteral("AdamW 8-bit"), QStringLiteral("adamw8bit"));
    form->addRow(tr("Optimizer"), m_optimizer);

    m_lr = new QDoubleSpinBox;
    m_lr->setObjectName(QStringLiteral("lrSpin"));
    m_lr->setDecimals(6);
    m_lr->setRange(0.000001, 10);
    m_lr->setSingleStep(0.0001);
    m_schedule = new QComboBox;
    m_schedule->setObjectName(QStringLiteral("scheduleCombo"));
    m_schedule->addItem(tr("constant"), QStringLiteral("constant"));
    m_schedule->addItem(tr("cosine decay"), QStringLiteral("cosine"));
    m_warmup = new QSpinBox;
    m_warmup->setRange(0, 1000000);
    m_warmup->setPrefix(tr("warm-up steps: "));
    // The warm-up under the rate and its schedule: three fields abreast are too wide for a
    // laptop's window in some languages.
    auto* lrRow = new QHBoxLayout;
    lrRow->addWidget(m_lr);
    lrRow->addWidget(m_schedule);
    auto* lrRows = new QVBoxLayout;
    lrRows->addLayout(lrRow);
    lrRows->addWidget(m_warmup);
    form->addRow(tr("Learning rate"), lrRows);

    addSizeRows(form);

    auto* checkButton = new QPushButton(tr("Check model and data"));
    checkButton->setObjectName(QStringLiteral("checkButton"));
    m_checkLabel = new QLabel;
    m_checkLabel->setObjectName(QStringLiteral("checkLabel"));
    m_checkLabel->setWordWrap(true);
    m_checkLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(checkButton, m_checkLabel);
    connect(checkButton, &QPushButton::clicked, this, &RunForm::check);
    guardWheel(this);

    connect(m_modelBrowse, &QPushButton::clicked, this, &RunForm::browseModel);
    connect(m_dataBrowse, &QPushButton::clicked, this, &RunForm::browseData);
    for (QComboBox* c :
         {m_model, m_data, m_loss, m_mode, m_wire, m_outerWire, m_optimizer, m_schedule})
        connect(c, &QComboBox::currentIndexChanged, this, &RunForm::updateEnabled);
    for (QLineEdit* e : {m_modelPath, m_dataPath})
        connect(e, &QLineEdit::textEdited, this, [this, e] {
            m_lastChosen = e == m_modelPath ? ErrorSubject::Model : ErrorSubject::Dataset;
        });
    for (QLineEdit* e : {m_modelPath, m_dataPath})
        connect(e, &QLineEdit::textChanged, this,
                [this] { setCheck(Check::NotChecked, QString()); });
    connect(m_model, &QComboBox::currentIndexChanged, this, [this] {
        setCheck(Check::NotChecked, QString());
        // The language model trains on text: offer a text file rather than the image demo.
        if (m_model->currentData().toString() == QLatin1String("gpt") &&
            m_data->currentIndex() == 0)
            m_data->setCurrentIndex(kTextKind);
        // Fine-tuning a language model: conversations through its own tokenizer; adapters
        // suit a laptop.
        if (m_model->currentData().toString() == kHfItem) {
            if (m_data->currentIndex() == 0)
                m_data->setCurrentIndex(kChatKind);
            if (m_lora->text().isEmpty())
                m_lora->setText(QStringLiteral("r=8"));
        }
    });
    connect(m_lora, &QLineEdit::textChanged, this, [this] {
        setCheck(Check::NotChecked, QString());
        updateEnabled();
    });
    connect(m_modelPath, &QLineEdit::editingFinished, this, [this] {
        if (m_model->currentData().toString() == kHfItem)
            m_recompute->setChecked(hfFolderParameters(m_modelPath->text().trimmed()) >
                                    kRecomputeAbove);
    });
    connect(m_recompute, &QCheckBox::toggled, this,
            [this] { setCheck(Check::NotChecked, QString()); });
    for (QComboBox* c : {m_data, m_loraBase, m_loss})
        connect(c, &QComboBox::currentIndexChanged, this,
                [this] { setCheck(Check::NotChecked, QString()); });
    connect(m_peers, &QAbstractItemModel::modelReset, this, &RunForm::updatePeers);
    connect(m_peers, &QAbstractItemModel::dataChanged, this, [this](const QModelIndex& tl) {
        if (tl.row() == 0 && tl.column() == 0)
            updatePeers();
    });
    // A new run measures the network and picks the mode: sync where the link keeps up.
    RunConfig initial;
    initial.mode = TrainMode::Auto;
    setConfig(initial);
    updatePeers();
    compactLists(this);
}

// The dataset (a kind and where it is) and the loss.
void RunForm::addDataRows(QFormLayout* form) {
    m_data = new QComboBox;
    m_data->setObjectName(QStringLiteral("dataCombo"));
    m_data->addItem(tr("Fashion-MNIST (built in)"));
    m_data->addItem(tr("Fashion-MNIST folder (IDX files)"));
    m_data->addItem(tr("MNIST folder (IDX files)"));
    m_data->addItem(tr("CIFAR-10 folder (binary version)"));
    m_data->addItem(tr("CSV file (label= or target= column and numbers)"));
    m_data->addItem(tr("Text file (bytes, or a Hugging Face model's tokenizer)"));
    m_data->addItem(tr("Token file (nanoGPT .bin)"));
    m_data->addItem(tr("NumPy arrays (.npz with x_train, y_train)"));
    m_data->addItem(tr("Image folder (one subfolder per class)"));
    m_data->addItem(tr("JSON Lines of documents (\"text\" a line; a Hugging Face model)"));
    m_data->addItem(tr("Chat conversations (JSON Lines of \"messages\"; a Hugging Face model)"));
    m_data->addItem(tr("Preference pairs (JSON Lines of \"prompt\", \"chosen\" and "
                       "\"rejected\"; a Hugging Face model)"));
    m_dataPath = new QLineEdit;
    m_dataPath->setObjectName(QStringLiteral("dataPath"));
    m_dataBrowse = new QPushButton(tr("Choose…"));
    auto* dataRow = new QHBoxLayout;
    dataRow->addWidget(m_dataPath, 1);
    dataRow->addWidget(m_dataBrowse);
    dataRow->addWidget(makePreviewButton());
    form->addRow(tr("Dataset"), m_data);
    m_loss = new QComboBox;
    m_loss->setObjectName(QStringLiteral("lossCombo"));
    m_loss->addItem(tr("Automatic: from the model's output and the data"), QStringLiteral("auto"));
    m_loss->addItem(tr("Cross-entropy (classes, next token)"), QStringLiteral("cross-entropy"));
    m_loss->addItem(tr("Mean squared error (regression)"), QStringLiteral("mse"));
    m_loss->addItem(tr("Mean absolute error (regression)"), QStringLiteral("l1"));
    m_loss->addItem(tr("Huber (regression with outliers)"), QStringLiteral("huber"));
    m_loss->addItem(tr("Binary cross-entropy (several labels each)"), QStringLiteral("bce"));
    m_loss->addItem(tr("The model's own loss() method"), QStringLiteral("model"));
    m_loss->addItem(tr("DPO (preference pairs; LoRA adapters, whose base is the reference)"),
                    QStringLiteral("dpo"));
    m_loss->addItem(tr("ORPO (preference pairs; no reference model)"), QStringLiteral("orpo"));
    // Preference tuning's strength: DPO's beta, ORPO's lambda (TRL calls both beta).
    m_beta = new QDoubleSpinBox;
    m_beta->setObjectName(QStringLiteral("betaSpin"));
    m_beta->setDecimals(3);
    m_beta->setRange(0.001, 1000);
    m_beta->setSingleStep(0.05);
    m_beta->setToolTip(tr("DPO's β: how far the model may move from the reference. ORPO's λ: the "
                          "weight of the preference term beside the chosen answer's loss."));
    form->addRow(QString(), dataRow);
    m_dataNote = new QLabel;
    m_dataNote->setObjectName(QStringLiteral("dataCheckNote"));
    form->addRow(QString(), m_dataNote);
    addContextRow(form);
    form->addRow(tr("Loss"), m_loss);
    form->addRow(tr("Preference strength (β, λ)"), m_beta);
}

// How the machines share the work, and what local SGD sends.
void RunForm::addModeRows(QFormLayout* form) {
    m_mode = new QComboBox;
    m_mode->setObjectName(QStringLiteral("modeCombo"));
    m_mode->addItem(tr("Automatic: measures the network, then synchronous or streaming"),
                    QStringLiteral("auto"));
    m_mode->addItem(tr("Synchronous: one model, exact (best on a fast network)"),
                    QStringLiteral("sync"));
    m_mode->addItem(tr("Asynchronous: no waiting for the slowest machine"),
                    QStringLiteral("async"));
    m_mode->addItem(tr("Local SGD: several local steps per exchange (slow networks)"),
                    QStringLiteral("local-sgd"));
    m_mode->addItem(tr("Streaming local SGD: exchanges overlap training (Wi-Fi)"),
                    QString::fromLatin1(kStreaming));
    form->addRow(tr("Mode"), m_mode);
    addShardRow(form);

    // Local SGD's weights and deltas on the wire.
    m_outerWire = new QComboBox;
    m_outerWire->setObjectName(QStringLiteral("outerWireCombo"));
    m_outerWire->addItem(tr("32-bit floats (exact)"), QStringLiteral("fp32"));
    m_outerWire->addItem(tr("16-bit floats (half the traffic)"), QStringLiteral("fp16"));
    m_outerWire->addItem(tr("8-bit blocks (a quarter of the traffic)"), QStringLiteral("int8"));
    m_outerWire->addItem(tr("4-bit blocks (an eighth of the traffic)"), QStringLiteral("int4"));
    form->addRow(tr("Local SGD updates"), m_outerWire);
}

RunForm::~RunForm() {
    if (m_checkThread)
        m_checkThread->wait();
}

void RunForm::updateEnabled() {
    updateTokensPerStep();
    const bool hf = m_model->currentData().toString() == kHfItem;
    const bool file = m_model->currentData().toString() == kFileItem || hf;
    m_modelPath->setEnabled(file);
    m_modelBrowse->setEnabled(file);
    m_modelHub->setEnabled(hf);
    // A disabled field shows no hint: greyed text in it reads as a value.
    m_modelPath->setPlaceholderText(!file ? QString()
                                    : hf  ? tr("a folder with config.json and model.safetensors")
                                          : tr("model.pt saved with torch.jit.save"));
    m_lora->setPlaceholderText(hf ? tr("empty: train every weight") : QString());
    m_lora->setEnabled(hf);
    m_loraBase->setEnabled(hf && !m_lora->text().trimmed().isEmpty());
    m_recompute->setEnabled(hf);
    m_gguf->setEnabled(hf);
    const bool builtin = m_data->currentIndex() == 0;
    const QString loss = m_loss->currentData().toString();
    m_beta->setEnabled(loss == QLatin1String("dpo") || loss == QLatin1String("orpo") ||
                       (loss == QLatin1String("auto") && dataPrefix() == QLatin1String("prefs:")));
    m_dataPath->setEnabled(!builtin);
    m_dataBrowse->setEnabled(!builtin);
    const QString mode = m_mode->currentData().toString();
    m_outerWire->setEnabled(mode == QLatin1String("local-sgd") ||
                            mode == QLatin1String(kStreaming) || mode == QLatin1String("auto"));
    m_shard->setEnabled((mode == QLatin1String("sync") || mode == QLatin1String("local-sgd")) &&
                        !(hf && !m_lora->text().trimmed().isEmpty()));
    const QString prefix = kDataKinds[m_data->currentIndex()].prefix;
    m_dataPath->setPlaceholderText(
        builtin                              ? QString()
        : prefix == QLatin1String("csv:")    ? tr("a .csv file[,target=COLUMN to predict a number]")
        : prefix == QLatin1String("text:")   ? tr("a text file[,context=256]")
        : prefix == QLatin1String("tokens:") ? tr("a .bin file[,dtype=uint16][,context=256]")
        : prefix == QLatin1String("images:") ? tr("a folder of class folders[,size=64]")
        : kDataKinds[m_data->currentIndex()].folder ? tr("a folder")
                                                    : tr("a file"));
}

void RunForm::updatePeers() {
    // Keep what the user ticked while machines come and go.
    QSet<QString> unticked;
    for (int i = 0; i < m_machines->count(); ++i)
        if (m_machines->item(i)->checkState() == Qt::Unchecked)
            unticked << m_machines->item(i)->data(Qt::UserRole + 1).toString();
    m_machines->clear();
    for (int row = 0; row < m_peers->rowCount(); ++row) {
        const QModelIndex i = m_peers->index(row, PeerModel::Machine);
        const bool self = i.data(PeerModel::SelfRole).toBool();
        if (!self &&
            !(i.data(PeerModel::PairedRole).toBool() && i.data(PeerModel::OnlineRole).toBool()))
            continue;
        const QString id = i.data(PeerModel::DeviceIdRole).toString();
        auto* item = new QListWidgetItem(QStringLiteral("%1: %2").arg(
            i.data().toString(), m_peers->index(row, PeerModel::Devices).data().toString()));
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        const bool wanted =
            self ? m_base.localWorker && !unticked.contains(id) : !unticked.contains(id);
        item->setCheckState(wanted ? Qt::Checked : Qt::Unchecked);
        item->setData(Qt::UserRole, self ? QString()
                                         : hostPort(i.data(PeerModel::AddressRole).toString(),
                                                    quint16(i.data(PeerModel::PortRole).toUInt())));
        item->setData(Qt::UserRole + 1, id);
        m_machines->addItem(item);
    }
}

QString RunForm::dataPrefix() const {
    return kDataKinds[std::max(0, m_data->currentIndex())].prefix;
}

QString RunForm::dataSpec() const {
    const int k = m_data->currentIndex();
    if (k <= 0)
        return QStringLiteral("fashion-mnist");
    return kDataKinds[k].prefix + withContext(m_dataPath->text().trimmed());
}

RunConfig RunForm::config() const {
    RunConfig c = m_base;
    const QString model = m_model->currentData().toString();
    const bool hf = model == kHfItem;
    c.model = model == kFileItem ? m_modelPath->text().trimmed()
              : hf               ? ModelSource::hfFolder(m_modelPath->text().trimmed()).text()
                                 : model;
    const QString adapters = m_lora->text().trimmed();
    c.lora = hf && !adapters.isEmpty()
                 ? withLoraBase(adapters + targetsSpec(), m_loraBase->currentData().toString())
                 : QString();
    c.checkpointActivations = hf && m_recompute->isChecked();
    c.gguf = hf ? m_gguf->currentData().toString() : QString();
    c.data = dataSpec();
    c.loss = parse<LossKind>(m_loss->currentData().toString()).value_or(LossKind::Auto);
    c.beta = m_beta->value();
    const QString mode = m_mode->currentData().toString();
    const bool streaming = mode == QLatin1String(kStreaming);
    c.mode = streaming ? TrainMode::LocalSgd : parse<TrainMode>(mode).value_or(TrainMode::Sync);
    // Four fragments: each moves a quarter of the model, one every H/4 steps.
    c.fragments = streaming ? (m_base.fragments > 1 ? m_base.fragments : 4) : 1;
    c.outerWire = parse<OuterWire>(m_outerWire->currentData().toString()).value_or(OuterWire::Fp32);
    c.wire = parse<WireDtype>(m_wire->currentData().toString()).value_or(WireDtype::Fp32);
    c.precision = parse<Precision>(m_precision->currentData().toString()).value_or(Precision::Fp32);
    c.device = m_device->currentData().toString();
    c.optimizer =
        parse<OptimizerKind>(m_optimizer->currentData().toString()).value_or(OptimizerKind::Adam);
    c.lr = m_lr->value();
    c.schedule = parse<Schedule>(m_schedule->currentData().toString()).value_or(Schedule::Constant);
    c.warmupSteps = m_warmup->value();
    c.batch = m_batch->value();
    c.epochs = m_epochs->value();
    c.limitTrain = m_limitTrain->value();
    c.invites.clear();
    c.localWorker = false;
    for (int i = 0; i < m_machines->count(); ++i) {
        const QListWidgetItem* item = m_machines->item(i);
        if (item->checkState() != Qt::Checked)
            continue;
        const QString target = item->data(Qt::UserRole).toString();
        if (target.isEmpty())
            c.localWorker = true;
        else
            c.invites << target;
    }
    if (m_machines->count() == 0)
        c.localWorker = m_base.localWorker;
    c.workers = int(c.invites.size());
    // One machine has nothing to split the run with.
    c.shard = m_shard->isEnabled() && m_shard->isChecked() && !c.invites.isEmpty();
    return c;
}

void RunForm::setConfig(const RunConfig& c) {
    m_base = c;
    const ModelSource source = ModelSource::parse(c.model);
    const int m = m_model->findData(c.model);
    m_model->setCurrentIndex(m >= 0 ? m : m_model->findData(source.isHf() ? kHfItem : kFileItem));
    m_modelPath->setText(m >= 0 ? QString() : source.path);
    QString lora;
    m_loraBase->setCurrentIndex(std::max(0, m_loraBase->findData(loraBase(c.lora, &lora))));
    m_pendingTargets = takeTargets(lora, &lora);
    m_lora->setText(lora);
    updateTargets();
    m_recompute->setChecked(c.checkpointActivations);
    m_shard->setChecked(c.shard);
    m_gguf->setCurrentIndex(std::max(0, m_gguf->findData(c.gguf.toLower())));
    int kind = 0;
    QString path;
    for (int k = 1; k < int(std::size(kDataKinds)); ++k)
        if (c.data.startsWith(kDataKinds[k].prefix)) {
            kind = k;
            path = c.data.mid(kDataKinds[k].prefix.size());
        }
    m_data->setCurrentIndex(kind);
    setContextFromSpec(path);
    m_dataPath->setText(path);
    m_loss->setCurrentIndex(std::max(0, m_loss->findData(nameOf(c.loss))));
    m_beta->setValue(c.beta);
    m_mode->setCurrentIndex(
        std::max(0, m_mode->findData(c.mode == TrainMode::LocalSgd && c.fragments > 1
                                         ? QString::fromLatin1(kStreaming)
                                         : nameOf(c.mode))));
    m_outerWire->setCurrentIndex(std::max(0, m_outerWire->findData(nameOf(c.outerWire))));
    m_wire->setCurrentIndex(std::max(0, m_wire->findData(nameOf(c.wire))));
    m_precision->setCurrentIndex(std::max(0, m_precision->findData(nameOf(c.precision))));
    m_device->setCurrentIndex(std::max(0, m_device->findData(c.device)));
    m_optimizer->setCurrentIndex(std::max(0, m_optimizer->findData(nameOf(c.optimizer))));
    m_lr->setValue(c.lr);
    m_schedule->setCurrentIndex(std::max(0, m_schedule->findData(nameOf(c.schedule))));
    m_warmup->setValue(c.warmupSteps);
    m_settingBatch = true;
    m_batch->setValue(c.batch);
    m_settingBatch = false;
    m_epochs->setValue(c.epochs);
    m_limitTrain->setValue(int(std::min<int64_t>(c.limitTrain, std::numeric_limits<int>::max())));
    for (int i = 0; i < m_machines->count(); ++i) {
        QListWidgetItem* item = m_machines->item(i);
        const QString target = item->data(Qt::UserRole).toString();
        item->setCheckState((target.isEmpty() ? c.localWorker : c.invites.contains(target))
                                ? Qt::Checked
                                : Qt::Unchecked);
    }
    updateEnabled();
    setCheck(Check::NotChecked, QString());
}

void RunForm::browseModel() {
    const QString f =
        m_model->currentData().toString() == kHfItem
            ? QFileDialog::getExistingDirectory(this, tr("Choose a Hugging Face model folder"))
            : QFileDialog::getOpenFileName(this, tr("Choose a TorchScript model"), QString(),
                                           tr("TorchScript (*.pt *.pth);;All files (*)"));
    if (!f.isEmpty()) {
        m_lastChosen = ErrorSubject::Model;
        m_modelPath->setText(f);
        Q_EMIT m_modelPath->editingFinished();
        check(); // a chosen file is checked at once, long before Start
    }
}

void RunForm::browseData() {
    const int k = m_data->currentIndex();
    const QString f = kDataKinds[k].folder
                          ? QFileDialog::getExistingDirectory(this, tr("Choose the dataset folder"))
                          : QFileDialog::getOpenFileName(this, tr("Choose the dataset file"),
                                                         QString(), tr(kDataKinds[k].filter));
    if (!f.isEmpty()) {
        m_lastChosen = ErrorSubject::Dataset;
        m_dataPath->setText(f);
        check();
    }
}

void RunForm::setCheck(Check c, const QString& message, ErrorSubject subject) {
    showCheckNote(c, message, subject);
    if (c == Check::NotChecked && m_checkThread)
        m_recheck = true; // the running check is of what the form said before this edit
    m_check = c;
    m_checkMessage = message;
    switch (c) {
    case Check::NotChecked:
        m_checkLabel->clear();
        Q_EMIT edited();
        break;
    case Check::Checking:
        m_checkLabel->setText(tr("Checking the model and the dataset…"));
        break;
    case Check::Ok:
        m_checkLabel->setText(QStringLiteral("✔ ") + message);
        break;
    case Check::Failed:
        m_checkLabel->setText(QStringLiteral("✘ ") + message);
        break;
    }
}

void RunForm::check() {
    const RunConfig c = config();
    const bool hf = m_model->currentData().toString() == kHfItem;
    if ((m_model->currentData().toString() == kFileItem && c.model.isEmpty()) ||
        (hf && ModelSource::parse(c.model).path.isEmpty())) {
        setCheck(Check::Failed,
                 hf ? tr("Choose the Hugging Face model's folder.")
                    : tr("Choose a TorchScript file for the model."),
                 ErrorSubject::Model);
        Q_EMIT checked(false, m_checkMessage,
                       Error{ErrorCode::InvalidArgument, m_checkMessage, ErrorSubject::Model});
        return;
    }
    if (m_data->currentIndex() > 0 && m_dataPath->text().trimmed().isEmpty()) {
        setCheck(Check::Failed, tr("Choose where the dataset is."), ErrorSubject::Dataset);
        Q_EMIT checked(false, m_checkMessage,
                       Error{ErrorCode::InvalidArgument, m_checkMessage, ErrorSubject::Dataset});
        return;
    }
    setCheck(Check::Checking, QString());
    if (m_checkThread) { // one check at a time: this one follows when the running one ends
        m_recheck = true;
        return;
    }
    QPointer<RunForm> self(this);
    m_checkThread.reset(QThread::create([self, c] {
        const Expected<RunCheck> r = checkRunInputs(c);
        QMetaObject::invokeMethod(
            qApp,
            [self, r] {
                if (!self)
                    return;
                self->m_checkThread->wait(); // it has just returned
                self->m_checkThread.reset();
                if (self->m_recheck) { // the form changed meanwhile: check what it says now
                    self->m_recheck = false;
                    self->check();
                    return;
                }
                self->setCheck(r ? Check::Ok : Check::Failed,
                               r ? self->adoptCheck(*r) : r.error().message,
                               r ? ErrorSubject::None : r.error().subject);
                Q_EMIT self->checked(bool(r), self->m_checkMessage, r ? Error{} : r.error());
            },
            Qt::QueuedConnection);
    }));
    m_checkThread->start();
}

} // namespace tandem::ui
