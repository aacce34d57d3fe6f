#pragma once

// Engine-internal: the coordinator's view of a worker. The coordinator owns the weights, the
// optimizer and the sampler; a worker computes gradients on its device for the sample indices
// it is given. Here the only implementation runs in-process on its own thread; a network
// implementation carries the same requests and results over the wire.

#include "dataset.h"
#include "devices.h"
#include "expected.h"
#include "optimizer.h"

#include <ATen/ATen.h>
#include <torch/script.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace tandem {

struct WorkRequest {
    int64_t step = 0;
    std::vector<int64_t> indices;
    // The coordinator's current parameters and buffers. They are not modified until every
    // result of this step is in, so a worker may read them without copying first. Null when
    // the weights are already in place (a worker process receives them separately).
    const std::vector<at::Tensor>* params = nullptr;
    const std::vector<at::Tensor>* buffers = nullptr;
    uint64_t seed = 0; // seeds dropout and other randomness for this step and worker
    // The same weights packed for the wire, shared by every remote worker of the step.
    std::shared_ptr<const QByteArray> packedWeights;
    int64_t weightsVersion = 0;
    // Local-SGD: take this many optimizer steps over consecutive slices of `indices` and
    // return the parameter delta instead of a gradient. 0: one gradient, no step.
    int innerSteps = 0;
    double innerLr = 0;
};

struct WorkResult {
    int64_t step = 0;
    int64_t samples = 0;
    double lossSum = 0;              // summed over this worker's samples
    int64_t correct = 0;             // top-1 hits on this worker's samples
    std::vector<at::Tensor> grads;   // mean over this worker's samples, on the CPU
    std::vector<at::Tensor> buffers; // after this step's forward pass, on the CPU
    double computeMs = 0;
};

class WorkerLink {
public:
    virtual ~WorkerLink() = default;
    virtual QString name() const = 0;
    virtual DeviceInfo device() const = 0;
    // Starts work; returns at once. At most one request is outstanding per worker.
    virtual void submit(WorkRequest request) = 0;
    // Blocks until the outstanding request's result (or its failure) is in.
    virtual Expected<WorkResult> wait() = 0;
    // True once wait() would return at once.
    virtual bool ready() const = 0;
    // Called (on any thread) when a result or a failure arrives: lets the async mode wait
    // for whichever worker finishes first.
    void setReadyCallback(std::function<void()> f) { m_onReady = std::move(f); }

protected:
    void notifyReady() {
        if (m_onReady)
            m_onReady();
    }

private:
    std::function<void()> m_onReady;
};

// Builds a float batch in [0,1] (images) or as stored (tables) from dataset rows.
at::Tensor gatherInputs(const Dataset& data, const std::vector<int64_t>& indices);
at::Tensor gatherLabels(const Dataset& data, const std::vector<int64_t>& indices);

// A private copy of the model on one device that turns sample indices into gradients. The
// in-process worker and a worker process both compute through it.
class ModelReplica {
public:
    // innerOptimizer is used only for local-SGD's inner steps; it keeps its state across
    // rounds, as DiLoCo's inner optimizer does.
    ModelReplica(DeviceInfo device, const torch::jit::Module& model,
                 std::shared_ptr<const Dataset> data, OptimizerConfig innerOptimizer = {});
    ~ModelReplica();

    const DeviceInfo& device() const { return m_device; }
    // The replica's own tensors, on its device; a worker process writes received weights here.
    std::vector<at::Tensor>& params() { return m_params; }
    std::vector<at::Tensor>& buffers() { return m_buffers; }
    torch::jit::Module& module() { return m_model; }

    // Copies the request's weights in (when it carries any), runs forward and backward on the
    // request's samples and returns the mean gradient. Never throws: LibTorch errors (out of
    // memory, a model that fails) come back as values.
    Expected<WorkResult> compute(const WorkRequest& req, const QString& workerName);

private:
    DeviceInfo m_device;
    c10::Device m_torchDevice;
    torch::jit::Module m_model;
    std::vector<at::Tensor> m_params;
    std::vector<at::Tensor> m_buffers;
    std::shared_ptr<const Dataset> m_data;
    OptimizerConfig m_innerConfig;
    std::unique_ptr<Optimizer> m_inner;
};

// Runs a ModelReplica on a thread of its own, so that several workers (and the coordinator)
// overlap.
class LocalWorker final : public WorkerLink {
public:
    LocalWorker(QString name, DeviceInfo device, const torch::jit::Module& model,
                std::shared_ptr<const Dataset> data, OptimizerConfig innerOptimizer = {});
    ~LocalWorker() override;

    QString name() const override { return m_name; }
    DeviceInfo device() const override { return m_replica.device(); }
    void submit(WorkRequest request) override;
    Expected<WorkResult> wait() override;
    bool ready() const override;

private:
    void run();

    QString m_name;
    ModelReplica m_replica;

    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::optional<WorkRequest> m_request;
    std::optional<Expected<WorkResult>> m_result;
    bool m_quit = false;
    std::thread m_thread; // last: started once everything above is in place
};

} // namespace tandem
