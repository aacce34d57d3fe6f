#pragma once

#include "engine/internal.h"

// Engine-internal: tensors to and from the bytes that travel in blobs. A bundle is every
// parameter-shaped tensor (weights, gradients or deltas) in the run's wire dtype, followed by
// every buffer in its own dtype, in schema order. Both sides know the schema, so the expected
// size is exact and checked before anything is read.

#include "common/expected.h"
#include "common/runenums.h"
#include "formats/tensorfile.h"
#include "wire/messages.h"

#include <ATen/ATen.h>

#include <QByteArray>

#include <mutex>
#include <vector>

namespace tandem {

struct ModelLayout {
    std::vector<std::string> paramNames;
    std::vector<std::vector<int64_t>> paramShapes;
    std::vector<std::string> bufferNames;
    std::vector<std::vector<int64_t>> bufferShapes;
    std::vector<at::ScalarType> bufferTypes;

    static ModelLayout of(const std::vector<std::string>& paramNames,
                          const std::vector<at::Tensor>& params,
                          const std::vector<std::string>& bufferNames,
                          const std::vector<at::Tensor>& buffers);
    static Expected<ModelLayout> fromWire(const QList<wire::TensorMeta>& params,
                                          const QList<wire::TensorMeta>& buffers);
    QList<wire::TensorMeta> paramMetas() const;
    QList<wire::TensorMeta> bufferMetas() const;
    int64_t paramCount() const;
    qint64 bundleBytes(DType wire) const;
};

// How tensors of a wire format are stored in a bundle, and back.
DType storageDtype(WireDtype wire);
WireDtype wireDtypeOf(DType storage);
// Rounds each of `params` in place to what a bundle in `wire` carries of it (nothing over fp32):
// what unpackInto() would write into them from packBundle() of themselves.
void roundToWire(std::vector<at::Tensor>& params, DType wire);

// The order of the parameter-shaped tensors in a bundle. Weights travel in schema order;
// gradients and deltas in the reverse, the order a backward pass produces them, so that a
// worker can send the front of its result while the rest is still being computed.
enum class BundleOrder { Schema, Backward };

// With `spare` given, the bundle is written into it when it has the right size and nobody else
// holds it (the previous bundle has been sent), and it then shares the result: a step reuses
// the same pages instead of faulting in fresh ones for every bundle.
QByteArray packBundle(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& buffers,
                      DType wire, QByteArray* spare = nullptr,
                      BundleOrder order = BundleOrder::Schema);
// Copies a bundle straight into existing tensors (a replica's parameters and buffers, on any
// device), converting from the wire dtype on the way: one copy, no intermediate tensors.
Status unpackInto(const QByteArray& bytes, const ModelLayout& layout, DType wire,
                  std::vector<at::Tensor>& params, std::vector<at::Tensor>& buffers);
// Float32 CPU tensors shaped as the layout says. At fp32 they are views of `bytes` (which they
// keep alive), not copies.
Status unpackBundle(const QByteArray& bytes, const ModelLayout& layout, DType wire,
                    std::vector<at::Tensor>* params, std::vector<at::Tensor>* buffers,
                    BundleOrder order = BundleOrder::Schema);

// A result bundle (BundleOrder::Backward) filled as the backward pass produces gradients.
// Each gradient is written into its place as it becomes final; ready() is how many bytes
// from the front are final and can be sent while the rest is computed (gradients that come
// out of order wait for those before them).
class GradientBundle {
public:
    GradientBundle(const ModelLayout& layout, DType wire);

    // A bundle for the next result, in the memory of the last one once nobody else holds it.
    // Resets what is ready.
    QByteArray begin();
    // Parameter `i`'s final gradient (any device and float dtype). Returns ready() when this
    // made more bytes ready, or -1. Safe to call from the autograd engine's threads.
    qint64 add(size_t i, const at::Tensor& grad);
    // Writes every parameter not added yet (zeros where `grads` has none) and the buffers; the
    // whole bundle is then ready.
    void finish(const std::vector<at::Tensor>& grads, const std::vector<at::Tensor>& buffers);
    qint64 ready() const;
    qint64 size() const { return m_size; }

private:
    void write(size_t i, const at::Tensor& grad); // m_mutex held

    ModelLayout m_layout;
    at::ScalarType m_wire;
    std::vector<qint64> m_offset; // parameter i's byte offset in the bundle
    std::vector<qint64> m_bytes;  // and its size
    qint64 m_paramBytes = 0;      // where the buffers start
    qint64 m_size = 0;
    QByteArray m_spare;
    char* m_data = nullptr;
    mutable std::mutex m_mutex;
    std::vector<bool> m_done;
    size_t m_frontier = 0; // parameters final from the front, in bundle order
    qint64 m_ready = 0;
};

} // namespace tandem
