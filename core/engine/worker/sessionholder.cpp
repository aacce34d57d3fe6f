#include "engine/worker/session.h"

// A worker that only holds a range of a sharded run (--hold-only). It computes nothing, so it
// keeps neither the model nor the dataset: the trainable tensors' shapes in the run's
// description say where its range lies, and the range's fp32 weights (and a resumed run's
// state) come with the coordinator's setup.

#include "engine/shard/shardplan.h"
#include "engine/worker/admission.h"
#include "model/tensormemory.h"
#include "net/connection.h"

namespace tandem {

void WorkerSession::holdRange(const wire::RunSpec& spec) {
    // The model came with the description; nothing here reads it.
    (void)m_conn->takeBlob(spec.modelBlob);
    auto layout = ModelLayout::fromWire(spec.params, spec.buffers);
    if (!layout)
        return refuse(wire::RejectCode::Internal,
                      QStringLiteral("the coordinator's run description is malformed"));
    auto options = replicaOptions(spec.settings);
    if (!options)
        return refuse(wire::RejectCode::Internal, options.error().message);
    // Shapes without values: no memory for the model's weights.
    m_heldShapes.clear();
    for (const std::vector<int64_t>& shape : layout->paramShapes)
        m_heldShapes.push_back(
            at::empty(shape, at::TensorOptions().dtype(at::kFloat).device(at::kMeta)));
    m_conn->setBlobCap(wire::BlobKind::Tensors, shardStateCap(layout->paramCount()));
    // No step of a model's runs here, whose blocks of memory the tensor cache would keep for
    // the next: the range's state is made once and kept, and a block kept for reuse, up to half
    // as large again as the tensor it then serves, would hold memory the plan does not count
    // beside the range and the arriving gradients at their most. Each block is made at its size.
    limitCachedTensorMemory(0);
    auto port =
        startShardPart(spec, storageDtype(spec.wire), options->innerOptimizer, &m_heldShapes);
    if (!port)
        return refuse(wire::RejectCode::Protocol, port.error().message);
    wire::Ready ready;
    ready.schemaHash = spec.schemaHash;
    ready.device = m_device;
    ready.precision = nameOf(Precision::Fp32);
    ready.shardPort = *port;
    ready.holdsOnly = true;
    m_events.joined(spec.runId, spec.mode, m_device.name, spec.datasetSpec, nullptr);
    m_state = State::Working;
    m_conn->send(ready);
    m_log(QStringLiteral("ready to hold a range of the run; this machine computes nothing and "
                         "keeps neither the model nor the dataset (--hold-only)"));
}

} // namespace tandem
