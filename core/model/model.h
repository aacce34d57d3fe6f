#pragma once

#include "model/internal.h"

// The model a run trains, whatever built it: a TorchScript module (the built-ins, a user's
// torch.jit.save file) or a transformer Tandem builds natively from a Hugging Face folder
// (hf/transformer.h). Everything that trains, checkpoints, sends, evaluates, exports or
// generates sees the same interface: a forward pass, named parameters and buffers, a device,
// training or evaluation mode, the archive a worker or a checkpoint rebuilds it from, the forms
// it exports as, the memory a sample costs it, and a generation session. Nothing outside the
// model library asks which kind it is.
//
// A Model is a handle, as torch::jit::Module is: copies share one model; copy() makes another.

#include "common/expected.h"
#include "model/generation.h"
#include "model/ggufexport.h"
#include "model/modelsource.h"
#include "model/tensors.h"

#include <QByteArray>
#include <QString>

class QIODevice;

// at::NoGradGuard, which LibTorch 2.x's ATen.h does not declare (TorchScript's headers did).
#include <ATen/core/grad_mode.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

// A TorchScript module converts to a Model; scriptmodel.h has its definition. Declared here so
// that what only uses a Model does not parse TorchScript's headers (a few seconds a source file).
namespace torch::jit {
struct Module;
} // namespace torch::jit

namespace tandem {

// A forward pass that returns something other than one tensor (a tuple, a dict).
struct NotOneTensor : std::runtime_error {
    explicit NotOneTensor(const std::string& kind);
    std::string kind; // as TorchScript names it: "Tuple", "GenericDict", …
};

// What a run adds to the model it names.
struct ModelOptions {
    // Hugging Face models. Low-rank adapters ("r=8,alpha=16,targets=q_proj,v_proj"): only they
    // train, the base stays frozen in its own dtype. Empty: every weight trains, in fp32.
    QString lora;
    // Hugging Face models: each block keeps only its input and recomputes its activations in
    // the backward pass.
    bool checkpointActivations = false;
    uint64_t seed = 0; // what the run initialises (a built-in's weights, adapters) comes from it
};

// What an export writes beside the weights: the folder the model came from (its tokenizer and
// generation settings go along) and the model's name as the run gave it.
struct ExportContext {
    ModelSource source;
    GgufOptions gguf; // ExportFormat::Gguf's
};

class ModelImpl {
public:
    virtual ~ModelImpl() = default;
    virtual ModelKind kind() const = 0;
    // Throws what LibTorch throws, or std::runtime_error.
    virtual at::Tensor forward(const at::Tensor& x) = 0;
    // The output at some positions of a [B, T, …] output only: `rows` the flat indices b·T + t
    // (int64, on x's device), the result [K, …]. A model that computes only those says so
    // (outputsAtRows); any other computes them all and selects.
    virtual bool outputsAtRows() const { return false; }
    virtual at::Tensor forwardAt(const at::Tensor& x, const at::Tensor& rows) {
        return forward(x).flatten(0, 1).index_select(0, rows);
    }
    virtual void train(bool on) = 0;
    // The model's own loss(output, target), where it has one.
    virtual bool hasLoss() const { return false; }
    virtual at::Tensor loss(const at::Tensor& output, const at::Tensor& target);
    // Every parameter (trainable or frozen, told apart by requires_grad) and buffer, by name,
    // in the model's own order. The tensors alias the model's storage.
    virtual NamedTensors parameters() const = 0;
    virtual NamedTensors buffers() const = 0;
    // A model of its own with the same values and the same trainable parameters. Frozen
    // tensors may be shared with the original, since nothing writes to them.
    virtual std::shared_ptr<ModelImpl> copy() const = 0;
    virtual void to(const c10::Device& device) = 0;
    // What rebuilds the model: with its weights (for a worker), or only its structure (for a
    // run checkpoint, which stores the weights as tensor records of its own).
    virtual Expected<QByteArray> archive(bool withWeights) const = 0;
    // The same archive written to `out` as it is made, for one too large to hold twice: its
    // size. The default writes archive() whole.
    virtual Expected<qint64> writeArchive(bool withWeights, QIODevice& out) const;
    virtual bool hasAdapters() const { return false; }
    // The forward pass without the adapters: the base a LoRA run trains them on. A model
    // without adapters is its own base.
    virtual at::Tensor forwardBase(const at::Tensor& x) { return forward(x); }
    // Writes the model as `format` to `out` (a file, or a folder for Hf, Peft and Merged).
    virtual Status exportAs(ExportFormat format, const QString& out,
                            const ExportContext& context) const = 0;
    // The activations one sample of `sampleShape` keeps for the backward pass, in values of
    // `elem` bytes; 0 where the model cannot say.
    virtual int64_t bytesPerSample(const std::vector<int64_t>& sampleShape, int64_t elem) const {
        (void)sampleShape;
        (void)elem;
        return 0;
    }
    // A generation's own state over this model, on the device its weights are on; null for a
    // model that does not generate. `context`: the most tokens a byte-level model reads at once.
    virtual std::unique_ptr<GenerationSession> startGeneration(int64_t context) const = 0;
    // A frozen bf16 or fp16 base on the CPU computed from an fp32 copy (the parameters keep
    // it as it is); the bytes of that copy. 0 for a model without such a base.
    virtual int64_t widenFrozenBase() { return 0; }
    virtual int64_t widenedBaseBytes() const { return 0; }
    // What a pass holds for a while beside the weights, in values of `elem` bytes: a quantized
    // base's largest layer dequantized. 0 for a model without one.
    virtual int64_t transientWeightBytes(int64_t elem) const {
        (void)elem;
        return 0;
    }
    // What a backward pass holds for a while beside one gradient for each trained value: a
    // trained embedding tied to the output layer a second table. 0 for a model without one.
    virtual int64_t transientGradientBytes() const { return 0; }
    // What the weights would take less with a frozen base held in 4 bits (LoRA's base=nf4),
    // beside the layer dequantized while it computes; 0 where that does not apply.
    virtual int64_t nf4SavingBytes() const { return 0; }
};

class Model {
public:
    Model() = default;
    // A TorchScript module is a model as it is (scriptmodel.cpp builds it).
    // NOLINTNEXTLINE(google-explicit-constructor)
    Model(torch::jit::Module module);
    explicit Model(std::shared_ptr<ModelImpl> impl)
        : m_impl(std::move(impl)) {}

    bool valid() const { return m_impl != nullptr; }
    ModelKind kind() const { return m_impl->kind(); }
    at::Tensor forward(const at::Tensor& x) const { return m_impl->forward(x); }
    bool outputsAtRows() const { return m_impl->outputsAtRows(); }
    at::Tensor forwardAt(const at::Tensor& x, const at::Tensor& rows) const {
        return m_impl->forwardAt(x, rows);
    }
    void train(bool on = true) const { m_impl->train(on); }
    void eval() const { m_impl->train(false); }
    bool hasLoss() const { return m_impl->hasLoss(); }
    at::Tensor loss(const at::Tensor& output, const at::Tensor& target) const {
        return m_impl->loss(output, target);
    }
    NamedTensors parameters() const { return m_impl->parameters(); }
    NamedTensors buffers() const { return m_impl->buffers(); }
    // Under NoGradGuard, so that the copy's parameters are leaves.
    Model copy() const;
    void to(const c10::Device& device) const { m_impl->to(device); }
    // Never throws: what LibTorch throws while serialising is an error.
    Expected<QByteArray> archive(bool withWeights = true) const;
    // archive() written to `out` as it is made (a native model's weights never held twice).
    Expected<qint64> writeArchive(QIODevice& out, bool withWeights = true) const;
    bool hasAdapters() const { return m_impl->hasAdapters(); }
    at::Tensor forwardBase(const at::Tensor& x) const { return m_impl->forwardBase(x); }
    QList<ExportFormat> exportFormats() const { return exportFormatsOf(kind(), hasAdapters()); }
    // Refuses a format the model does not export as, saying which it does.
    Status exportAs(ExportFormat format, const QString& out, const ExportContext& context) const;
    int64_t bytesPerSample(const std::vector<int64_t>& sampleShape, int64_t elem) const {
        return m_impl->bytesPerSample(sampleShape, elem);
    }
    std::unique_ptr<GenerationSession> startGeneration(int64_t context = 0) const {
        return m_impl->startGeneration(context);
    }
    int64_t widenFrozenBase() const { return m_impl->widenFrozenBase(); }
    int64_t widenedBaseBytes() const { return m_impl->widenedBaseBytes(); }
    int64_t transientWeightBytes(int64_t elem) const { return m_impl->transientWeightBytes(elem); }
    int64_t transientGradientBytes() const { return m_impl->transientGradientBytes(); }
    int64_t nf4SavingBytes() const { return m_impl->nf4SavingBytes(); }
    // The implementation, for the model library's own code and tests.
    ModelImpl* impl() const { return m_impl.get(); }

private:
    std::shared_ptr<ModelImpl> m_impl;
};

ModelTensors modelTensors(const Model& model);
// Every parameter and buffer by its state-dict name, for safetensors.
QList<TensorRecord> stateDictRecords(const Model& model);
// The same written to `path` one tensor at a time, with the metadata torch's safetensors loader
// expects ("format": "pt") and the model's name as the run gave it.
Status writeStateDict(const QString& path, const NamedTensors& parameters,
                      const NamedTensors& buffers, const QString& modelName);

} // namespace tandem
