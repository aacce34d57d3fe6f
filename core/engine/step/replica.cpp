#include "engine/step/replica.h"

#include "engine/step/batch.h"

#include "common/threadname.h"
#include "engine/modes/rounds.h"
#include "engine/step/objective.h"
#include "engine/step/optimizer.h"
#include "engine/training.h"
#include "formats/tokenstream.h"
#include "model/model.h"
#include "model/tensormemory.h"
#include "model/torchcompat.h"
#include "model/trafficledger.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>

#include <chrono>
#include <cstring>
#include <future>
#include <optional>
#include <stdexcept>
#include <thread>

Q_LOGGING_CATEGORY(lcWorker, "tandem.worker")

namespace tandem {

ModelReplica::ModelReplica(DeviceInfo device, const Model& model,
                           std::shared_ptr<const Dataset> data, ReplicaOptions options)
    : m_device(std::move(device))
    , m_torchDevice(m_device.torchDevice().toStdString())
    , m_model(model)
    , m_data(std::move(data))
    , m_options(options)
    , m_objective{options.loss, taskOf(options.loss, m_data->targets), options.beta,
                  options.reference, nullptr} {
    initTorchRuntime();
    {
        // Copying a tensor is an autograd operation while grad mode is on, which would leave
        // the copy's parameters as non-leaf tensors that never receive a .grad.
        at::NoGradGuard noGrad;
        // Trainable where the original is: only the trainable parameters take part, and a
        // frozen one gets no gradient and is never written (ModelTensors).
        m_model = model.copy();
        m_model.to(m_torchDevice);
    }
    if (m_options.dataOnDevice && m_torchDevice.type() != at::kCPU) {
        LedgerScope purpose(LedgerPurpose::Data);
        m_resident = std::make_unique<ResidentRows>(*m_data, m_torchDevice);
    }
    m_model.train();
    ModelTensors t = modelTensors(m_model);
    m_params = std::move(t.params);
    m_buffers = std::move(t.buffers);
    if (m_options.sharesWeights) {
        const ModelTensors from = modelTensors(model);
        if (from.params.size() == m_params.size())
            takeWeights(from.params, from.buffers, false);
    }
    // A leaf's hook runs once per backward pass, with the sum of everything flowing into it:
    // with .grad cleared before a single pass, that is the parameter's final gradient.
    for (size_t i = 0; i < m_params.size(); ++i)
        m_params[i].register_hook([this, i](const at::Tensor& grad) {
            if (!m_sink)
                return;
            (*m_sink)(i, grad);
            releaseStreamed(false);
            std::lock_guard<std::mutex> lock(m_streamedMutex);
            m_streamed.emplace_back(i, std::this_thread::get_id());
        });
    m_precision = effectivePrecision(m_options.precision, m_device, &m_precisionNote);
    if (m_options.lossScale > 0)
        m_scaler.emplace(m_options.lossScale);
    else if (m_precision == Precision::Fp16)
        m_scaler.emplace();
    m_chunkCap = std::max<int64_t>(0, m_options.samplesPerPass);
    // The CPU's kept tensor memory stays a small part of what this run was sized to.
    if ((m_device.kind == DeviceKind::Cpu || m_device.kind == DeviceKind::Emulated) &&
        m_device.memoryBytes > 0)
        limitCachedTensorMemory(m_device.memoryBytes / 8);
    if (m_options.faultOomAbove <= 0)
        m_options.faultOomAbove = qEnvironmentVariableIntValue("TANDEM_FAULT_OOM_ABOVE");
    if (const QStringList cost =
            qEnvironmentVariable("TANDEM_FAULT_STEP_COST").split(QLatin1Char(','));
        m_options.costFixedMs <= 0 && m_options.costPerSampleMs <= 0 && cost.size() >= 2) {
        m_options.costFixedMs = std::max(0.0, cost[0].toDouble());
        m_options.costPerSampleMs = std::max(0.0, cost[1].toDouble());
        m_options.costUntilStep = cost.size() > 2 ? cost[2].toLongLong() : 0;
    }
}

ModelReplica::~ModelReplica() = default;

void ModelReplica::clearGrads() {
    {
        std::lock_guard<std::mutex> lock(m_streamedMutex);
        m_streamed.clear();
    }
    for (at::Tensor& p : m_params)
        if (p.grad().defined())
            p.mutable_grad() = at::Tensor();
}

void ModelReplica::releaseStreamed(bool all) {
    // A parameter's hook runs just before the engine stores its gradient, on the thread that
    // stores it: a later hook on that thread comes after the store. Other threads' may not.
    const std::thread::id self = std::this_thread::get_id();
    std::lock_guard<std::mutex> lock(m_streamedMutex);
    auto kept = m_streamed.begin();
    for (const auto& [i, thread] : m_streamed) {
        if (all || thread == self)
            m_params[i].mutable_grad() = at::Tensor();
        else
            *kept++ = {i, thread};
    }
    m_streamed.erase(kept, m_streamed.end());
}

void ModelReplica::accumulate(const std::vector<int64_t>& samples, WorkResult& out,
                              const std::function<void(size_t, const at::Tensor&)>* sink,
                              const float* referenceRows) {
    const int64_t n = static_cast<int64_t>(samples.size());
    // A retry starts from the buffers (BatchNorm statistics) the first attempt started from,
    // so a failed attempt's forward passes leave no trace.
    std::vector<at::Tensor> savedBuffers;
    for (const at::Tensor& b : m_buffers)
        savedBuffers.push_back(b.detach().clone());
    for (bool retry = false;; retry = true) {
        if (retry) {
            at::NoGradGuard noGrad;
            for (size_t i = 0; i < m_buffers.size(); ++i)
                m_buffers[i].copy_(savedBuffers[i]);
        }
        clearGrads();
        const int64_t part = m_chunkCap > 0 ? std::min(n, m_chunkCap) : n;
        const double scale = m_scaler ? m_scaler->scale() : 1.0;
        DeviceFigures figures;
        // Gradients leave during the pass only when this pass's are the step's: one pass over
        // every sample, not scaled, and no earlier attempt that streamed some already.
        const bool stream = sink && *sink && !retry && part == n && !m_scaler;
        m_sink = stream ? sink : nullptr;
        out.streamed = stream;
        try {
            int64_t done = 0; // samples of the parts before this one
            forEachPart(
                samples, part,
                [&](const at::Tensor& x, const at::Tensor& y, const at::Tensor& rows, int64_t m) {
                    TORCH_CHECK_WITH(OutOfMemoryError,
                                     m_options.faultOomAbove <= 0 || m <= m_options.faultOomAbove,
                                     "out of memory (injected: more than ", m_options.faultOomAbove,
                                     " samples at once)");
                    ObjectiveOutput output;
                    {
                        std::optional<AutocastScope> autocast;
                        if (m_precision != Precision::Fp32)
                            autocast.emplace(m_torchDevice.type(), autocastType(m_precision));
                        output = objectiveForward(
                            m_objective, m_model, x,
                            referenceRows ? referenceRows + 2 * done : nullptr, rows);
                    }
                    done += m;
                    // In fp32, whatever the forward pass computed in (objective.h).
                    const BatchLoss b = batchLoss(m_objective, m_model, output, y);
                    // Each part's mean, weighted by its share, sums to the mean over `samples`.
                    b.loss.mul(scale * double(m) / double(n)).backward();
                    figures.add({b.loss.detach().mul(double(m)), b.correct, b.counted, b.pairSums});
                });
            m_sink = nullptr;
            releaseStreamed(true);
        } catch (const std::exception& e) {
            m_sink = nullptr;
            out.streamed = false;
            if (!isOutOfMemory(e))
                throw;
            clearGrads();
            releaseCachedMemory(m_torchDevice);
            if (part <= 1)
                throw;
            m_chunkCap = part / 2;
            out.notes << QStringLiteral(
                             "out of memory on %1 computing %2 samples at once; the step "
                             "is retried in parts of %3, and this worker's share is "
                             "capped at %3 from now on")
                             .arg(m_device.name)
                             .arg(part)
                             .arg(m_chunkCap);
            continue;
        }
        if (m_scaler) {
            std::vector<at::Tensor> grads;
            for (const at::Tensor& p : m_params)
                grads.push_back(p.grad());
            if (!m_scaler->unscale(grads)) {
                // An fp16 overflow: GradScaler would skip the step and lose its samples; here
                // the same samples are computed again at half the scale.
                if (m_scaler->scale() < 1.0)
                    throw std::runtime_error("the loss is not finite even without loss scaling "
                                             "(the model diverged); lower the learning rate or "
                                             "train in bf16 or fp32");
                continue;
            }
        }
        keepFigures(figures, out);
        out.memoryCap = m_chunkCap;
        return;
    }
}

void ModelReplica::forEachPart(const std::vector<int64_t>& samples, int64_t part,
                               const PartPass& pass) {
    const int64_t n = static_cast<int64_t>(samples.size());
    auto slice = [&](int64_t from) {
        return std::vector<int64_t>(samples.begin() + from,
                                    samples.begin() + std::min(n, from + part));
    };
    // The positions the loss counts, read from the targets on the host and copied beside the
    // batch (countedRows): undefined where the whole output is wanted.
    const bool someRows = m_objective.task == Task::Sequence && m_model.outputsAtRows();
    auto rowsOnDevice = [&](const at::Tensor& hostTargets) {
        at::Tensor rows = someRows ? countedRows(m_objective, m_model, hostTargets) : at::Tensor();
        if (!rows.defined() || m_torchDevice.is_cpu())
            return rows;
        if (m_torchDevice.is_cuda())
            rows = rows.pin_memory();
        return rows.to(m_torchDevice, rows.is_pinned());
    };
    if (m_resident) {
        for (int64_t from = 0; from < n; from += part) {
            const std::vector<int64_t> indices = slice(from);
            std::pair<at::Tensor, at::Tensor> xy;
            at::Tensor counted;
            {
                LedgerScope purpose(LedgerPurpose::Data);
                xy = m_resident->batch(indices);
                if (someRows)
                    counted = rowsOnDevice(gatherTargets(*m_data, indices));
            }
            pass(xy.first, xy.second, counted, xy.first.size(0));
        }
        return;
    }
    // The next part's rows are gathered on another thread while this one computes.
    auto gather = [this](std::vector<int64_t> rows) {
        return gatherForDevice(*m_data, rows, m_torchDevice);
    };
    HostBatch host = gather(slice(0));
    for (int64_t from = 0; from < n; from += part) {
        std::future<HostBatch> next;
        if (from + part < n)
            next = std::async(std::launch::async, gather, slice(from + part));
        std::pair<at::Tensor, at::Tensor> xy;
        at::Tensor counted;
        {
            LedgerScope purpose(LedgerPurpose::Data);
            xy = toDevice(*m_data, host, m_torchDevice);
            counted = rowsOnDevice(host.targets);
        }
        pass(xy.first, xy.second, counted, xy.first.size(0));
        if (next.valid())
            host = next.get();
    }
}

void ModelReplica::keepFigures(const DeviceFigures& figures, WorkResult& out) const {
    if (m_options.resultsOnDevice) {
        out.figures.add(figures);
        return;
    }
    // Read here, once per pass: the result leaves the device anyway.
    LedgerScope purpose(LedgerPurpose::Figures);
    out.lossSum += figures.lossSum.item<double>();
    if (figures.correct.defined()) {
        const at::Tensor counts = at::stack({figures.correct, figures.counted}).to(at::kCPU);
        out.correct += counts[0].item<int64_t>();
        out.counted += counts[1].item<int64_t>();
        // A preference batch counts its pairs.
        if (figures.pairSums.defined())
            out.pairs.add(pairFiguresOf(figures.pairSums, counts[1].item<int64_t>()));
    }
}

void ModelReplica::takeWeights(const std::vector<at::Tensor>& params,
                               const std::vector<at::Tensor>& buffers, bool writesParams) {
    at::NoGradGuard noGrad;
    for (size_t i = 0; i < m_params.size(); ++i) {
        const at::Tensor& src = params[i];
        // A replica on the coordinator's own device reads the coordinator's weights in place:
        // they do not change until every result of the step is in. Only local-SGD's inner
        // steps write to the replica's parameters, and those need a copy of their own.
        const bool shareable = !writesParams && src.device() == m_params[i].device() &&
                               src.scalar_type() == m_params[i].scalar_type() &&
                               src.sizes() == m_params[i].sizes() && src.is_contiguous();
        if (shareable) {
            if (!m_params[i].is_alias_of(src))
                m_params[i].set_(src.detach());
        } else if (m_params[i].is_alias_of(src)) {
            m_params[i].set_(src.detach().clone());
        } else {
            m_params[i].copy_(src);
        }
    }
    // Buffers (BatchNorm statistics) are written by the forward pass: always a copy.
    for (size_t i = 0; i < m_buffers.size(); ++i)
        m_buffers[i].copy_(buffers[i]);
}

Expected<WorkResult> ModelReplica::compute(const WorkRequest& req, const QString& workerName,
                                           std::unique_ptr<RoundState>* roundState) {
    QElapsedTimer timer;
    timer.start();
    WorkResult out;
    out.step = req.step;
    out.samples = static_cast<int64_t>(req.indices.size());
    trainWithoutGraphOptimization();
    try {
        // Sync and async: one forward/backward over all the samples, returning the mean
        // gradient. A local round: its inner optimizer steps over consecutive slices, returning
        // what its mode sends back (local-SGD's parameter delta, start - end, which the
        // coordinator's outer optimizer treats as a gradient).
        const LocalRound* local = req.local.get();
        if (req.params)
            takeWeights(*req.params, *req.buffers, local != nullptr);
        std::unique_ptr<RoundState> scratch;
        std::unique_ptr<RoundState>& state = roundState ? *roundState : scratch;
        if (local) {
            if (!m_inner)
                m_inner = std::make_unique<Optimizer>(m_options.innerOptimizer, m_params);
            state = local->adopt(std::move(state));
            local->begin(*this, *state, req.params != nullptr || local->wholeWeights);
        }
        seedDevice(m_torchDevice, req.seed);
        const int inner = local ? std::max(1, local->innerSteps) : 1;
        const size_t n = req.indices.size();
        // DPO on every weight: the reference's figures of the request's samples, as sent or
        // from the table.
        std::vector<float> looked;
        if (req.referenceLogps.empty() && m_options.reference)
            looked = referenceRowsOf(*m_options.reference, req.indices);
        const std::vector<float>& rows = req.referenceLogps.empty() ? looked : req.referenceLogps;
        for (int h = 0; h < inner; ++h) {
            const size_t from = n * size_t(h) / size_t(inner),
                         to = n * size_t(h + 1) / size_t(inner);
            if (from == to)
                continue;
            accumulate(std::vector<int64_t>(req.indices.begin() + long(from),
                                            req.indices.begin() + long(to)),
                       out, local ? nullptr : &req.onGradient,
                       rows.size() == 2 * n ? rows.data() + 2 * from : nullptr);
            if (local) {
                std::vector<at::Tensor> g;
                for (const at::Tensor& p : m_params)
                    g.push_back(p.grad());
                m_inner->step(g, local->innerLr);
            }
        }
        const c10::Device resultDevice =
            m_options.resultsOnDevice ? m_torchDevice : c10::Device(at::kCPU);
        if (local) {
            out.grads = local->end(*this, *state);
        } else {
            out.grads.reserve(m_params.size());
            for (const at::Tensor& p : m_params)
                out.grads.push_back(p.grad().defined() ? p.grad().to(resultDevice) : at::Tensor());
        }
        out.buffers.reserve(m_buffers.size());
        for (const at::Tensor& b : m_buffers)
            out.buffers.push_back(b.detach().to(resultDevice, /*non_blocking=*/false,
                                                /*copy=*/m_options.resultsOnDevice));
        // The copies above wait for the device already where results leave it; this keeps the
        // timing honest where they do not, unless nobody needs the time.
        if (req.timed || !m_options.resultsOnDevice)
            synchronizeDevice(m_torchDevice);
        tensorMemoryStepDone();
        if (m_options.costUntilStep <= 0 || req.step < m_options.costUntilStep) {
            const double ms = m_options.costFixedMs + m_options.costPerSampleMs * double(n);
            if (ms > 0)
                std::this_thread::sleep_for(std::chrono::microseconds(int64_t(ms * 1000)));
        }
    } catch (const std::exception& e) {
        QString msg = QString::fromUtf8(e.what());
        msg.truncate(msg.indexOf(QLatin1Char('\n')) > 0 ? msg.indexOf(QLatin1Char('\n'))
                                                        : msg.size());
        if (isOutOfMemory(e))
            msg += QStringLiteral(" — even one sample at a time does not fit; free memory on %1 "
                                  "or use a smaller model")
                       .arg(m_device.name);
        return makeError(isOutOfMemory(e) ? ErrorCode::OutOfMemory : ErrorCode::Runtime,
                         QStringLiteral("worker %1 on %2: %3").arg(workerName, m_device.name, msg));
    }
    out.computeMs = double(timer.nsecsElapsed()) / 1e6;
    return out;
}

} // namespace tandem
