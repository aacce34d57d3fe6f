#pragma once

// What a user names as a model, parsed once: a built-in name, a TorchScript file, a Hugging Face
// folder ("hf:DIR"), or a run checkpoint (checkpoint.tandem). Everything that takes a model (the
// command line, the New run form, History, generation, export) reads it through ModelSource;
// no other code parses "hf:" or looks at a file's first bytes. Plain C++/Qt: nothing here
// includes LibTorch, so the UI uses it as it is.

#include <QList>
#include <QString>
#include <QStringList>

#include <cstdint>

namespace tandem {

struct ModelSource {
    enum class Kind : uint8_t {
        BuiltIn,     // a name from the zoo: "mnist-cnn", "gpt"
        TorchScript, // a file saved with torch.jit.save
        HfFolder,    // a Hugging Face folder: config.json, safetensors, tokenizer files
        Checkpoint,  // a Tandem run checkpoint, which says itself what it holds
    };
    Kind kind = Kind::BuiltIn;
    QString path; // the name, the file or the folder

    // Reads what a user wrote. A path that is neither "hf:DIR" nor a built-in name is a
    // checkpoint when its file starts as one, else a TorchScript file (whose loading says
    // whether it is one). Empty text is the built-in default, "mnist-cnn".
    static ModelSource parse(const QString& text);
    static ModelSource hfFolder(const QString& dir) { return {Kind::HfFolder, dir}; }
    // The form a run description stores and parse() reads back: "hf:DIR", the name, the path.
    QString text() const;
    bool isHf() const { return kind == Kind::HfFolder; }
    bool isBuiltIn() const { return kind == Kind::BuiltIn; }
};

// A Hugging Face folder's parameter count, from the size of its safetensors files and the
// dtype config.json names, without opening the model; 0 when the folder has none.
qint64 hfFolderParameters(const QString& dir);

// The linear layers a Hugging Face folder's family lets adapters target, by the names PEFT
// uses, and those adapted by default; false when its config.json names no family read here.
bool hfAdapterLayers(const QString& dir, QStringList* layers, QStringList* defaults);

// The transformer families a Hugging Face folder may hold, for people: "GPT-2, Llama, Qwen2, …".
QString hfFamilyTitles();

// The built-in models' names: mlp, mnist-cnn, resnet8, gpt.
QStringList zooModelNames();
bool isZooModel(const QString& name);

// What a model is, once built, whatever named it: a TorchScript module (a user's file, the
// built-ins) or a transformer Tandem builds natively from a Hugging Face folder.
enum class ModelKind : uint8_t { TorchScript, Transformer };

// The model kind a source gives, where the source says it without being opened (a checkpoint
// does not: it may hold either); false when it does not.
bool modelKindOf(const ModelSource& source, ModelKind* out);

// The forms a trained model is written as.
enum class ExportFormat : uint8_t {
    TorchScript, // model.pt, for torch.jit.load
    Safetensors, // every weight by its state-dict name
    Hf,          // a Hugging Face folder, adapters merged (from_pretrained)
    Peft,        // the adapters alone, as PEFT writes them
    Merged,      // the same as Hf
    Gguf,        // one GGUF file, adapters merged, for llama.cpp, Ollama and LM Studio
};
// "torchscript", "safetensors", "hf", "peft", "merged", "gguf": the command line's names.
QString exportFormatName(ExportFormat f);
bool exportFormatFromName(const QString& name, ExportFormat* out);
// The forms a model of `kind` exports as; Peft only `withAdapters`.
QList<ExportFormat> exportFormatsOf(ModelKind kind, bool withAdapters);

} // namespace tandem
