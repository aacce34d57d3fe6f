// The New run form's model rows: the model, a Hugging Face folder's adapters and their base,
// recomputed activations, and the GGUF file the run writes at its end.

#include "model/modelsource.h"
#include "ui/runform.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

namespace tandem::ui {

void RunForm::addModelRows(QFormLayout* form) {
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
    auto* modelRow = new QHBoxLayout;
    modelRow->addWidget(m_modelPath, 1);
    modelRow->addWidget(m_modelBrowse);
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
    form->addRow(QString(), m_recompute);
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

} // namespace tandem::ui
