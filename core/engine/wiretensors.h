#pragma once

#include "engine/internal.h"

// Engine-internal: tensors to and from the bytes that travel in blobs. A bundle is every
// parameter-shaped tensor (weights, gradients or deltas) in the run's wire dtype, followed by
// every buffer in its own dtype, in schema order. Both sides know the schema, so the expected
// size is exact and checked before anything is read.

#include "common/expected.h"
#include "engine/runenums.h"
#include "formats/tensorfile.h"
#include "wire/messages.h"

#include <ATen/ATen.h>

#include <QByteArray>

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

Expected<DType> wireDtypeFromName(const QString& name); // fp32, fp16, bf16, F32, ...
DType storageDtype(WireDtype wire);

// With `spare` given, the bundle is written into it when it has the right size and nobody else
// holds it (the previous bundle has been sent), and it then shares the result: a step reuses
// the same pages instead of faulting in fresh ones for every bundle.
QByteArray packBundle(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& buffers,
                      DType wire, QByteArray* spare = nullptr);
// Copies a bundle straight into existing tensors (a replica's parameters and buffers, on any
// device), converting from the wire dtype on the way: one copy, no intermediate tensors.
Status unpackInto(const QByteArray& bytes, const ModelLayout& layout, DType wire,
                  std::vector<at::Tensor>& params, std::vector<at::Tensor>& buffers);
// Float32 CPU tensors shaped as the layout says. At fp32 they are views of `bytes` (which they
// keep alive), not copies.
Status unpackBundle(const QByteArray& bytes, const ModelLayout& layout, DType wire,
                    std::vector<at::Tensor>* params, std::vector<at::Tensor>* buffers);

} // namespace tandem
