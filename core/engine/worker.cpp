#include "worker.h"

#include "optimizer.h"
#include "scriptmodel.h"

#include <QElapsedTimer>
#include <QLoggingCategory>

#include <cstring>

Q_LOGGING_CATEGORY(lcWorker, "tandem.worker")

namespace tandem {

at::Tensor gatherInputs(const Dataset& data, const std::vector<int64_t>& indices) {
    std::vector<int64_t> shape{static_cast<int64_t>(indices.size())};
    shape.insert(shape.end(), data.sampleShape.begin(), data.sampleShape.end());
    const int64_t per = data.sampleSize();
    if (data.storage == Dataset::Storage::U8) {
        at::Tensor raw = at::empty(shape, at::kByte);
        auto* dst = raw.data_ptr<uint8_t>();
        for (size_t i = 0; i < indices.size(); ++i)
            std::memcpy(dst + int64_t(i) * per, data.u8.data() + indices[i] * per, size_t(per));
        return raw.to(at::kFloat).div_(255.0);
    }
    at::Tensor out = at::empty(shape, at::kFloat);
    auto* dst = out.data_ptr<float>();
    for (size_t i = 0; i < indices.size(); ++i)
        std::memcpy(dst + int64_t(i) * per, data.f32.data() + indices[i] * per,
                    size_t(per) * sizeof(float));
    return out;
}

at::Tensor gatherLabels(const Dataset& data, const std::vector<int64_t>& indices) {
    at::Tensor out = at::empty({static_cast<int64_t>(indices.size())}, at::kLong);
    auto* dst = out.data_ptr<int64_t>();
    for (size_t i = 0; i < indices.size(); ++i)
        dst[i] = data.labels[size_t(indices[i])];
    return out;
}

ModelReplica::ModelReplica(DeviceInfo device, const torch::jit::Module& model,
                           std::shared_ptr<const Dataset> data, OptimizerConfig innerOptimizer)
    : m_device(std::move(device))
    , m_torchDevice(m_device.torchDevice().toStdString())
    , m_model(model)
    , m_data(std::move(data))
    , m_innerConfig(innerOptimizer) {
    {
        // Copying a tensor is an autograd operation while grad mode is on, which would leave
        // the copy's parameters as non-leaf tensors that never receive a .grad.
        at::NoGradGuard noGrad;
        m_model = model.deepcopy();
        m_model.to(m_torchDevice);
    }
    m_model.train();
    ModelTensors t = modelTensors(m_model);
    m_params = std::move(t.params);
    m_buffers = std::move(t.buffers);
    for (at::Tensor& p : m_params)
        p.detach_().requires_grad_(true);
}

ModelReplica::~ModelReplica() = default;

LocalWorker::LocalWorker(QString name, DeviceInfo device, const torch::jit::Module& model,
                         std::shared_ptr<const Dataset> data, OptimizerConfig innerOptimizer)
    : m_name(std::move(name))
    , m_replica(std::move(device), model, std::move(data), innerOptimizer) {
    m_thread = std::thread([this] { run(); });
}

LocalWorker::~LocalWorker() {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_quit = true;
    }
    m_cv.notify_all();
    m_thread.join();
}

void LocalWorker::submit(WorkRequest request) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_request = std::move(request);
        m_result.reset();
    }
    m_cv.notify_all();
}

bool LocalWorker::ready() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_result.has_value();
}

Expected<WorkResult> LocalWorker::wait() {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_cv.wait(lock, [this] { return m_result.has_value(); });
    Expected<WorkResult> r = std::move(*m_result);
    m_result.reset();
    return r;
}

void LocalWorker::run() {
    for (;;) {
        WorkRequest req;
        {
            std::unique_lock<std::mutex> lock(m_mutex);
            m_cv.wait(lock, [this] { return m_quit || m_request.has_value(); });
            if (m_quit)
                return;
            req = std::move(*m_request);
            m_request.reset();
        }
        Expected<WorkResult> r = m_replica.compute(req, m_name);
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_result = std::move(r);
        }
        m_cv.notify_all();
        notifyReady();
    }
}

Expected<WorkResult> ModelReplica::compute(const WorkRequest& req, const QString& workerName) {
    QElapsedTimer timer;
    timer.start();
    WorkResult out;
    out.step = req.step;
    out.samples = static_cast<int64_t>(req.indices.size());
    try {
        if (req.params) {
            at::NoGradGuard noGrad;
            for (size_t i = 0; i < m_params.size(); ++i)
                m_params[i].copy_((*req.params)[i]);
            for (size_t i = 0; i < m_buffers.size(); ++i)
                m_buffers[i].copy_((*req.buffers)[i]);
        }
        at::manual_seed(req.seed);
        // Sync and async: one forward/backward over all the samples, returning the mean
        // gradient. Local-SGD: innerSteps optimizer steps over consecutive slices, returning
        // the parameter delta (start - end), which the coordinator's outer optimizer treats
        // as a gradient.
        const int inner = std::max(1, req.innerSteps);
        const bool local = req.innerSteps > 0;
        std::vector<at::Tensor> start;
        if (local) {
            if (!m_inner)
                m_inner = std::make_unique<Optimizer>(m_innerConfig, m_params);
            at::NoGradGuard noGrad;
            for (const at::Tensor& p : m_params)
                start.push_back(p.detach().clone());
        }
        const size_t n = req.indices.size();
        for (int h = 0; h < inner; ++h) {
            const size_t from = n * size_t(h) / size_t(inner),
                         to = n * size_t(h + 1) / size_t(inner);
            if (from == to)
                continue;
            const std::vector<int64_t> slice(req.indices.begin() + long(from),
                                             req.indices.begin() + long(to));
            for (at::Tensor& p : m_params)
                if (p.grad().defined())
                    p.mutable_grad() = at::Tensor();
            at::Tensor x = gatherInputs(*m_data, slice).to(m_torchDevice);
            at::Tensor y = gatherLabels(*m_data, slice).to(m_torchDevice);
            at::Tensor logits = m_model.forward({x}).toTensor();
            at::Tensor loss = at::nll_loss(at::log_softmax(logits, 1), y);
            loss.backward();
            out.lossSum += loss.item<double>() * double(slice.size());
            out.correct += logits.argmax(1).eq(y).sum().item<int64_t>();
            if (local) {
                std::vector<at::Tensor> g;
                for (const at::Tensor& p : m_params)
                    g.push_back(p.grad());
                m_inner->step(g, req.innerLr);
            }
        }
        out.grads.reserve(m_params.size());
        if (local) {
            at::NoGradGuard noGrad;
            for (size_t i = 0; i < m_params.size(); ++i)
                out.grads.push_back(start[i].sub(m_params[i].detach()).to(at::kCPU));
        } else {
            for (const at::Tensor& p : m_params)
                out.grads.push_back(p.grad().defined() ? p.grad().to(at::kCPU) : at::Tensor());
        }
        out.buffers.reserve(m_buffers.size());
        for (const at::Tensor& b : m_buffers)
            out.buffers.push_back(b.detach().to(at::kCPU));
    } catch (const std::exception& e) {
        QString msg = QString::fromUtf8(e.what());
        msg.truncate(msg.indexOf(QLatin1Char('\n')) > 0 ? msg.indexOf(QLatin1Char('\n'))
                                                        : msg.size());
        if (msg.contains(QLatin1String("out of memory"), Qt::CaseInsensitive))
            msg +=
                QStringLiteral(" — lower the batch size or free memory on %1").arg(m_device.name);
        return makeError(ErrorCode::Runtime,
                         QStringLiteral("worker %1 on %2: %3").arg(workerName, m_device.name, msg));
    }
    out.computeMs = double(timer.nsecsElapsed()) / 1e6;
    return out;
}

} // namespace tandem
