#pragma once

#include "common/expected.h"
#include "engine/training.h"

#include <QJsonObject>
#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;
class QThread;

namespace tandem::ui {

class DataPreviewDialog;
class HubDialog;
class PeerModel;

// The model list's entries for a file of the user's and a Hugging Face folder (their data).
inline const QString kModelFileItem = QStringLiteral("file");
inline const QString kModelHfItem = QStringLiteral("hf");

// The New run form: model, dataset, machines, mode, wire and compute precision, this machine's
// device, optimizer, schedule, batch and
// epochs. Defaults train the built-in demo. What it edits is a RunConfig, saved and loaded as
// the JSON that `tandem train --config FILE` reads; fields the form does not show survive a
// load and save unchanged.
class RunForm : public QWidget {
    Q_OBJECT

public:
    // `devices` are this machine's, as detectDevices() found them.
    RunForm(PeerModel* peers, const QList<DeviceInfo>& devices, QWidget* parent = nullptr);
    ~RunForm() override;

    RunConfig config() const;
    void setConfig(const RunConfig& config);
    // The form as a run description to keep (saveTo, the window's state): its machines as
    // invites, without the workers to wait for or the address, which a run sets as it starts.
    QJsonObject description() const;
    static Expected<RunConfig> fromDescription(QJsonObject o);
    Status saveTo(const QString& path) const;
    Status loadFrom(const QString& path);

    enum class Check { NotChecked, Checking, Ok, Failed };
    Check checkState() const { return m_check; }
    // Preview: chat: or jsonl: data as the model will read it (DataPreviewDialog), shown.
    DataPreviewDialog* previewData();
    // From the Hub…: the Hugging Face Hub and the models downloaded already (HubDialog), shown;
    // the model chosen there becomes the form's folder.
    HubDialog* getFromHub();
    // The Name field: what History calls the next run (empty: its folder's name). It belongs to
    // one run: a started run takes it and the field empties.
    QString takeRunName();
    QString checkMessage() const { return m_checkMessage; }
    // Reads the dataset and loads the model off the UI thread; emits checked.
    void check();

Q_SIGNALS:
    // `error` says what failed, typed, when ok is false.
    void checked(bool ok, const QString& message, const tandem::Error& error);
    // A field changed: what the form says is no longer what was checked (or set up).
    void edited();

private:
    void updatePeers();
    void addModelRows(QFormLayout* form);
    QPushButton* makePreviewButton(); // enabled for chat: and jsonl: data (runformdata.cpp)
    // The adapted layers' boxes for the folder now chosen (runformmodel.cpp), and what they add
    // to the adapters' spec: ",targets=…" where they differ from the family's default.
    void updateTargets();
    QString targetsSpec() const;
    // The targets= list a LoRA spec ends with, taken out of it into `rest`.
    static QStringList takeTargets(const QString& spec, QString* rest);
    void addDataRows(QFormLayout* form);
    void addModeRows(QFormLayout* form);
    void addShardRow(QFormLayout* form);
    void updateEnabled();
    void browseModel();
    void browseData();
    // `subject`: the field a failure is about (the model's or the dataset's), where its note
    // shows it; None: the field last chosen.
    void setCheck(Check c, const QString& message, ErrorSubject subject = ErrorSubject::None);
    void showCheckNote(Check c, const QString& message, ErrorSubject subject);
    // A passed check's line: its summary, and a warning of too few steps with, where the user
    // has not set the batch, the batch it proposes set.
    QString adoptCheck(const RunCheck& r);
    QString dataSpec() const;
    // The Context field (runformdata.cpp): a text kind's window length, kept apart from the
    // file's path so that choosing the file again keeps it; a ",context=N" typed after the path
    // moves into it.
    void addContextRow(QFormLayout* form);
    void addSizeRows(QFormLayout* form); // the batch, the epochs and the training samples
    bool takesContext() const;
    QString dataPrefix() const; // the chosen kind's ("text:"), empty for the built-in data
    void takeContextFromPath();
    void setContextFromSpec(QString& path);
    QString withContext(const QString& path) const;
    void updateTokensPerStep();

    PeerModel* m_peers;
    RunConfig m_base;
    QLineEdit* m_runName;
    QComboBox* m_model;
    QLineEdit* m_modelPath;
    QPushButton* m_modelBrowse;
    QPushButton* m_modelHub; // HubDialog
    // A Hugging Face folder's adapters (empty: every weight trains) and recomputed activations.
    QLineEdit* m_lora;
    QComboBox* m_loraBase; // the frozen base: as stored, int8 or nf4
    // The linear layers the adapters go beside, as the folder's family offers them (checked:
    // adapted); the defaults, and what a loaded description named before the folder was read.
    QWidget* m_targetsRow = nullptr;
    QList<QCheckBox*> m_targets;
    QStringList m_defaultTargets;
    QStringList m_pendingTargets;
    QString m_targetsFolder; // the folder whose family `m_family` is
    struct Family {
        bool known = false;
        QStringList layers, defaults;
    } m_family;
    QCheckBox* m_recompute;
    QCheckBox* m_shard; // RunConfig::shard: a sync run's state split across its machines
    QComboBox* m_gguf;  // the quantization of the GGUF file written at the end; "": none
    QComboBox* m_data;
    QComboBox* m_loss;
    QDoubleSpinBox* m_beta; // dpo's beta, orpo's lambda
    QLineEdit* m_dataPath;
    QPushButton* m_dataBrowse;
    QPushButton* m_preview = nullptr;
    QListWidget* m_machines;
    QComboBox* m_mode;
    QComboBox* m_wire;
    QComboBox* m_outerWire; // local SGD and streaming only
    QComboBox* m_device;
    QComboBox* m_precision;
    QComboBox* m_optimizer;
    QDoubleSpinBox* m_lr;
    QComboBox* m_schedule;
    QSpinBox* m_warmup;
    QSpinBox* m_batch = nullptr;
    // Whether the user set the batch: until then a check that finds a language-model run of
    // too few steps sets the batch it proposes.
    bool m_batchChosen = false;
    bool m_settingBatch = false;
    QSpinBox* m_epochs;
    QSpinBox* m_limitTrain;            // 0: every training sample
    QSpinBox* m_context = nullptr;     // text kinds: the tokens a window holds
    QLabel* m_tokensPerStep = nullptr; // beside the batch, for text kinds
    QLabel* m_checkLabel;
    // The check's result again under the field that caused it (the form is long; its own line
    // is at the bottom), and which field the user chose last.
    QLabel* m_modelNote = nullptr;
    QLabel* m_dataNote = nullptr;
    ErrorSubject m_lastChosen = ErrorSubject::Dataset;
    Check m_check = Check::NotChecked;
    QString m_checkMessage;
    std::unique_ptr<QThread> m_checkThread;
    bool m_recheck = false;
};

} // namespace tandem::ui
