// The New run form's model rows: the model, a Hugging Face folder's adapters and their base,
// recomputed activations, and the GGUF file the run writes at its end.

#include "model/modelsource.h"
#include "ui/hubdialog.h"
#include "ui/runform.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>

#include <algorithm>

namespace tandem::ui {

void RunForm::addModelRows(QFormLayout* form) {
    m_runName = new QLineEdit;
    m_runName->setObjectName(QStringLiteral("runNameEdit"));
    m_runName->setPlaceholderText(tr("optional: how History will name this run"));
    m_runName->setMaxLength(120);
    form->addRow(tr("Name"), m_runName);
    m_model = new QComboBox;
    m_model->setObjectName(QStringLiteral("modelCombo"));
    m_model->addItem(tr("mnist-cnn: convolutional network for 28×28 images"),
                     QStringLiteral("mnist-cnn"));
    m_model->addItem(tr("mlp: small fully connected network"), QStringLiteral("mlp"));
    m_model->addItem(tr("resnet8: small ResNet for 32×32 colour images"),
                     QStringLiteral("resnet8"));
    m_model->addItem(tr("gpt: small language model over the bytes of a text"),
                     QStringLiteral("gpt"));
    m_model->addItem(tr("Your TorchScript file…"), kModelFileItem);
    m_model->addItem(tr("A Hugging Face folder… (%1)").arg(hfFamilyTitles()), kModelHfItem);
    m_modelPath = new QLineEdit;
    m_modelPath->setObjectName(QStringLiteral("modelPath"));
    m_modelPath->setPlaceholderText(tr("model.pt saved with torch.jit.save"));
    m_modelBrowse = new QPushButton(tr("Choose…"));
    m_modelHub = new QPushButton(tr("From the Hub…"));
    m_modelHub->setObjectName(QStringLiteral("modelHubButton"));
    m_modelHub->setToolTip(tr("Search the Hugging Face Hub and download a model, or choose one "
                              "already downloaded"));
    connect(m_modelHub, &QPushButton::clicked, this, &RunForm::getFromHub);
    auto* modelRow = new QHBoxLayout;
    modelRow->addWidget(m_modelPath, 1);
    modelRow->addWidget(m_modelBrowse);
    modelRow->addWidget(m_modelHub);
    form->addRow(tr("Model"), m_model);
    form->addRow(QString(), modelRow);
    m_modelNote = new QLabel;
    m_modelNote->setObjectName(QStringLiteral("modelCheckNote"));
    form->addRow(QString(), m_modelNote);
    m_lora = new QLineEdit;
    m_lora->setObjectName(QStringLiteral("loraEdit"));
    m_lora->setPlaceholderText(tr("empty: train every weight"));
    m_lora->setToolTip(tr("Low-rank adapters: only they train, the model's own weights stay "
                          "frozen. r=8,alpha=16,dropout=0.05,targets=q_proj,v_proj"));
    m_loraBase = new QComboBox;
    m_loraBase->setObjectName(QStringLiteral("loraBaseCombo"));
    m_loraBase->addItem(tr("Base as stored"), QString());
    m_loraBase->addItem(tr("Base in 8 bits"), QStringLiteral("int8"));
    m_loraBase->addItem(tr("Base in 4 bits (QLoRA)"), QStringLiteral("nf4"));
    m_loraBase->setToolTip(tr("The frozen model's own weights in 4 bits (nf4) take about a "
                              "quarter of bf16's memory: a 7-8B model fits a 12 GB card"));
    auto* loraRow = new QHBoxLayout;
    loraRow->addWidget(m_lora, 1);
    loraRow->addWidget(m_loraBase);
    m_recompute = new QCheckBox(tr("Recompute activations (less memory, more time)"));
    m_recompute->setObjectName(QStringLiteral("recomputeCheck"));
    form->addRow(tr("Adapters (LoRA)"), loraRow);
    m_targetsRow = new QWidget;
    m_targetsRow->setObjectName(QStringLiteral("loraTargets"));
    m_targetsRow->setToolTip(tr("The layers that get adapters. Checked at first: those the "
                                "model's family adapts by default."));
    new QGridLayout(m_targetsRow);
    m_targetsRow->layout()->setContentsMargins(0, 0, 0, 0);
    form->addRow(tr("Adapted layers"), m_targetsRow);
    form->addRow(QString(), m_recompute);
    connect(m_modelPath, &QLineEdit::editingFinished, this, &RunForm::updateTargets);
    connect(m_model, &QComboBox::currentIndexChanged, this, &RunForm::updateTargets);
    connect(m_lora, &QLineEdit::textChanged, this, &RunForm::updateTargets);
    // The model for llama.cpp, Ollama and LM Studio, written when the run ends (RunConfig::gguf).
    m_gguf = new QComboBox;
    m_gguf->setObjectName(QStringLiteral("ggufCombo"));
    m_gguf->addItem(tr("No"), QString());
    m_gguf->addItem(tr("Q4_K_M: smallest, about 4.9 bits a weight"), QStringLiteral("q4_k_m"));
    m_gguf->addItem(tr("Q8_0: 8.5 bits a weight, close to the original"), QStringLiteral("q8_0"));
    m_gguf->addItem(tr("F16: 16 bits, as trained"), QStringLiteral("f16"));
    m_gguf->addItem(tr("BF16: 16 bits, as trained"), QStringLiteral("bf16"));
    m_gguf->setToolTip(tr("At the end of the run, also write model.gguf and model.Modelfile in "
                          "the run's folder: `ollama create NAME -f model.Modelfile` adds it to "
                          "Ollama, and LM Studio and llama.cpp open model.gguf as it is"));
    form->addRow(tr("Export for Ollama / llama.cpp"), m_gguf);
}

QString RunForm::takeRunName() {
    const QString name = m_runName->text().trimmed();
    m_runName->clear();
    return name;
}

HubDialog* RunForm::getFromHub() {
    auto* d = new HubDialog(this);
    d->setAttribute(Qt::WA_DeleteOnClose);
    connect(d, &QDialog::accepted, this, [this, d] {
        m_model->setCurrentIndex(m_model->findData(kModelHfItem));
        m_lastChosen = ErrorSubject::Model;
        m_modelPath->setText(d->chosenFolder());
        Q_EMIT m_modelPath->editingFinished();
        check();
    });
    d->open();
    return d;
}

QStringList RunForm::takeTargets(const QString& spec, QString* rest) {
    QStringList kept, targets;
    bool in = false;
    for (const QString& raw : spec.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QString item = raw.trimmed();
        if (item.startsWith(QLatin1String("targets="))) {
            in = true;
            if (item.size() > 8)
                targets << item.mid(8);
        } else if (in && !item.contains(QLatin1Char('='))) {
            targets << item;
        } else {
            in = false;
            kept << item;
        }
    }
    *rest = kept.join(QLatin1Char(','));
    return targets;
}

void RunForm::updateTargets() {
    const bool hf = m_model->currentData().toString() == kModelHfItem;
    // The folder's config.json is read when the folder changes, not at each key typed in the
    // adapters' field.
    const QString folder = hf ? m_modelPath->text().trimmed() : QString();
    if (folder != m_targetsFolder) {
        m_targetsFolder = folder;
        m_family = Family{};
        m_family.known = hf && hfAdapterLayers(folder, &m_family.layers, &m_family.defaults);
    }
    const bool known = m_family.known;
    const QStringList& layers = m_family.layers;
    const QStringList& defaults = m_family.defaults;
    // A loaded description's targets, else what is checked now for the same family's boxes;
    // another family starts from its own defaults.
    QStringList checked = m_pendingTargets;
    if (checked.isEmpty() && m_defaultTargets == defaults)
        for (QCheckBox* b : m_targets)
            if (b->isChecked())
                checked << b->text();
    QStringList shown;
    for (QCheckBox* b : m_targets)
        shown << b->text();
    if (shown != layers) {
        qDeleteAll(m_targets);
        m_targets.clear();
        auto* grid = static_cast<QGridLayout*>(m_targetsRow->layout());
        for (const QString& layer : layers) {
            auto* box = new QCheckBox(layer);
            box->setObjectName(QStringLiteral("target_") + layer);
            grid->addWidget(box, int(m_targets.size()) / 4, int(m_targets.size()) % 4);
            connect(box, &QCheckBox::toggled, this, [this, box](bool on) {
                // Adapters go somewhere: the last box stays checked.
                if (!on && std::none_of(m_targets.begin(), m_targets.end(),
                                        [](QCheckBox* b) { return b->isChecked(); }))
                    box->setChecked(true);
                else
                    setCheck(Check::NotChecked, QString());
            });
            m_targets << box;
        }
    }
    m_defaultTargets = defaults;
    if (m_lora->text().trimmed().isEmpty()) { // no adapters: the next ones start afresh
        m_pendingTargets.clear();
        checked.clear();
    }
    if (checked.isEmpty())
        checked = defaults;
    if (known)
        m_pendingTargets.clear();
    for (QCheckBox* b : m_targets) {
        const QSignalBlocker quiet(b);
        b->setChecked(checked.contains(b->text()));
    }
    // A spec typed with its own targets= keeps them; the boxes would only say otherwise.
    QString rest;
    const bool typed = !takeTargets(m_lora->text(), &rest).isEmpty();
    m_targetsRow->setVisible(known && !m_lora->text().trimmed().isEmpty() && !typed);
}

QString RunForm::targetsSpec() const {
    QStringList targets;
    for (QCheckBox* b : m_targets)
        if (b->isChecked())
            targets << b->text();
    if (m_targets.isEmpty())
        targets = m_pendingTargets; // a description's, for a folder not read (yet)
    QString rest;
    if (targets.isEmpty() || targets == m_defaultTargets ||
        !takeTargets(m_lora->text(), &rest).isEmpty())
        return QString();
    return QStringLiteral(",targets=") + targets.join(QLatin1Char(','));
}

// A sync or local-SGD run's state split across its machines (RunConfig::shard), under the mode.
void RunForm::addShardRow(QFormLayout* form) {
    m_shard = new QCheckBox(tr("Split the weights and the optimizer across the machines"));
    m_shard->setObjectName(QStringLiteral("shardCheck"));
    m_shard->setToolTip(
        tr("Each machine keeps one range of the fp32 weights, of the optimizer's state and of "
           "the gradients' sum, and steps it itself: a full fine-tune can then need more memory "
           "than any one machine has. For synchronous and local SGD runs that train every "
           "weight, on more than one machine."));
    form->addRow(QString(), m_shard);
}

} // namespace tandem::ui
