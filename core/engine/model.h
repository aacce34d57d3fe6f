#pragma once

#include "engine/internal.h"

// Engine-internal: the model a run trains, whatever built it. A TorchScript module (the zoo,
// a user's torch.jit.save file) and a Hugging Face folder built natively (hf/transformer.h)
// look the same to everything that trains, checkpoints, sends or evaluates: a forward pass,
// named parameters and buffers, a device, training or evaluation mode, and an archive a worker
// or a checkpoint rebuilds the model from.
//
// A Model is a handle, as torch::jit::Module is: copies share one model; copy() makes another.

#include "common/expected.h"
#include "engine/scriptmodel.h"

#include <QByteArray>
#include <QString>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tandem {

class HfTransformer;
struct RunConfig;

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// A forward pass that returns something other than one tensor (a tuple, a dict).
struct NotOneTensor : std::runtime_error {
    explicit NotOneTensor(const std::string& kind);
    std::string kind; // as TorchScript names it: "Tuple", "GenericDict", …
};

class ModelImpl {
public:
    virtual ~ModelImpl() = default;
    // Throws what LibTorch throws, or std::runtime_error.
    virtual at::Tensor forward(const at::Tensor& x) = 0;
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
    virtual QByteArray archive(bool withWeights) const = 0;
    virtual torch::jit::Module* script() { return nullptr; }
    virtual HfTransformer* transformer() { return nullptr; }
};

class Model {
public:
    Model() = default;
    // NOLINTNEXTLINE(google-explicit-constructor): a TorchScript module is a model as it is.
    Model(torch::jit::Module module);
    explicit Model(std::shared_ptr<ModelImpl> impl)
        : m_impl(std::move(impl)) {}

    bool valid() const { return m_impl != nullptr; }
    at::Tensor forward(const at::Tensor& x) const { return m_impl->forward(x); }
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
    QByteArray archive(bool withWeights = true) const { return m_impl->archive(withWeights); }
    // The TorchScript module, or null for a model built natively.
    torch::jit::Module* script() const { return m_impl->script(); }
    // The Hugging Face transformer, or null.
    HfTransformer* transformer() const { return m_impl->transformer(); }

private:
    std::shared_ptr<ModelImpl> m_impl;
};

ModelTensors modelTensors(const Model& model);
// Every parameter and buffer by its state-dict name, for safetensors.
QList<TensorRecord> stateDictRecords(const Model& model);

// The model a run names: a zoo name, "hf:DIR" (with the run's adapters and activation
// checkpointing), or a TorchScript file. Parameters the run initialises come from its seed.
Expected<Model> openModel(const RunConfig& cfg);

// Rebuilds a model from Model::archive(): a TorchScript archive or a native transformer's.
// Without weights, a native transformer's tensors are allocated and left for the caller to
// fill. `name` is used in messages.
Expected<Model> modelFromArchive(const QByteArray& archive, const QString& name);

// "hf:DIR" names a Hugging Face folder; DIR, or an empty string for any other model.
QString hfFolderOf(const QString& model);

} // namespace tandem
