// The Trainer's placing of the run in this machine's memory: where the weights and the
// optimizer's state live, how a CPU slow at bf16 computes a frozen base, and what each device
// is planned to hold.

#include "engine/coordinator/trainer.h"
#include "engine/shard/shardplan.h"
#include "engine/step/memoryplan.h"
#include "engine/step/modelcheck.h"

#include <QLoggingCategory>

Q_DECLARE_LOGGING_CATEGORY(lcTrain)

namespace tandem {

// A sync run on this machine's accelerator keeps the weights and the optimizer's state there:
// a step copies neither the model to the device nor its gradients back. A frozen base (LoRA)
// goes there too, once, and the worker's replica shares it. Elsewhere (the CPU, local-SGD)
// they stay in the host's memory, where a frozen base is read straight from its file (or, on a
// CPU slow at bf16, from an fp32 copy).
void Trainer::placeMaster() {
    auto device = chooseDevice(m_devices, m_cfg.device);
    if (!m_cfg.localWorker || !device) // startLocalWorker says why a named device is missing
        return;
    if (device->kind == DeviceKind::Cpu) {
        const MasterCopy m = mastersBeside(*device, false, m_cfg);
        if (QString s = widenSlowFrozenBase(m_module, m_data->train, m_cfg, *device, m);
            !s.isEmpty())
            m_obs.onMessage(s);
    }
    if (device->kind == DeviceKind::Cpu || m_cfg.mode != TrainMode::Sync)
        return;
    try {
        at::NoGradGuard noGrad;
        m_module.to(c10::Device(device->torchDevice().toStdString()));
        m_master = modelTensors(m_module);
        m_masterOnDevice = true;
    } catch (const std::exception& e) {
        qCInfo(lcTrain) << "the weights stay in the host's memory:" << firstLine(e);
        at::NoGradGuard noGrad;
        m_module.to(c10::Device(at::kCPU));
        m_master = modelTensors(m_module);
    }
}

void Trainer::planMemory() {
    // Worked out once, from the model and the data as the run has them, for each MasterCopy.
    MemoryNeed need[3];
    for (MasterCopy m : {MasterCopy::None, MasterCopy::Shared, MasterCopy::Separate})
        need[size_t(m)] = memoryNeed(m_module, m_data->train, m_cfg, m);
    // In a sharded run every machine that computes, this one too, is planned as planShardedRun
    // plans it, which then sizes each machine's range in what is left.
    if (m_cfg.shard)
        need[size_t(MasterCopy::None)] = shardWorkerNeed(m_module, m_data->train, m_cfg);
    m_pool.setMemoryPlan([need, cfg = m_cfg, on = m_masterOnDevice](
                             const DeviceInfo& d, const QString& name, bool local) {
        const MasterCopy m = local && !cfg.shard ? mastersBeside(d, on, cfg) : MasterCopy::None;
        return samplesThatFit(need[size_t(m)], d, local ? QStringLiteral("this machine") : name);
    });
}

} // namespace tandem
