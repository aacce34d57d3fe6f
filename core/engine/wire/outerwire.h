#pragma once

#include "engine/internal.h"

// Engine-internal: how local-SGD's outer traffic travels. A round moves two things per remote
// worker: the new global weights down, and the worker's parameter delta up. Both are sent as
// one flat float vector (every parameter, schema order) in the run's outer-wire format:
//
//   fp32   4 bytes a value
//   fp16   2 bytes a value
//   int8   blocks of 256 values: a float32 minimum and step, then one byte a value
//   int4   blocks of 128 values: a float32 minimum and step, then half a byte a value
//
// The receiver decodes value = minimum + q * step. What a format cannot carry is not lost: the
// sender keeps it (ErrorFeedback) and adds it to what it sends next, so the sum of everything
// decoded over a run trails the sum of everything meant by one round's rounding at most.
// Weights go down as the difference from what the worker was last sent (WeightMirror), which
// puts them under the same feedback: the worker's copy converges on the coordinator's.
// Buffers (batch-norm statistics) follow the vector in their own dtypes, as in a tensor bundle.

#include "common/expected.h"
#include "common/runenums.h"
#include "engine/modes/fragments.h"
#include "engine/wire/wiretensors.h"

#include <ATen/ATen.h>

#include <QByteArray>

#include <vector>

namespace tandem {

// Bytes that n values take in format w.
qint64 outerVectorBytes(OuterWire w, int64_t n);
// The bytes of an outer bundle for the layout: the vector (every parameter, or `values` of them
// for one fragment), then the buffers.
qint64 outerBundleBytes(const ModelLayout& layout, OuterWire w, int64_t values = -1);

// Encodes the flat float32 CPU vector x into out (outerVectorBytes(w, x.numel()) bytes) and
// returns what the receiver will decode from them: over fp32, x itself.
at::Tensor encodeOuter(const at::Tensor& x, OuterWire w, char* out);
// Decodes n values. The size must be exact.
Expected<at::Tensor> decodeOuter(const char* in, qint64 size, OuterWire w, int64_t n);

// The sender's side of error feedback: what was meant but not sent, carried to the next send.
class ErrorFeedback {
public:
    // Encodes x plus the carried residual into out and keeps what the encoding lost; `sent`
    // (where given) becomes what the receiver decodes. Over fp32 nothing is lost, and `sent` is
    // x itself.
    void encode(const at::Tensor& x, OuterWire w, char* out, at::Tensor* sent = nullptr);
    void reset() { m_residual = at::Tensor(); }
    const at::Tensor& residual() const { return m_residual; }

private:
    at::Tensor m_residual;
};

// Every parameter as one float32 CPU vector, schema order.
at::Tensor flattenParams(const std::vector<at::Tensor>& params);
// The vector back into tensors of the layout's shapes (views into `flat`).
std::vector<at::Tensor> splitParams(const at::Tensor& flat, const ModelLayout& layout);

// A delta or weight vector with the buffers after it, ready to send.
QByteArray packOuter(const at::Tensor& flat, const std::vector<at::Tensor>& buffers, OuterWire w,
                     ErrorFeedback* feedback, at::Tensor* decoded = nullptr);
// Reads a bundle made by packOuter: the decoded vector and float32/integer CPU buffers.
Status unpackOuter(const QByteArray& bytes, const ModelLayout& layout, OuterWire w,
                   at::Tensor* flat, std::vector<at::Tensor>* buffers, int64_t values = -1);

// The coordinator's record of the weights one remote worker holds: what the worker has
// decoded from everything sent to it so far, tracked bit for bit.
class WeightMirror {
public:
    bool empty() const { return !m_held.defined(); }
    // The worker was sent `weights` whole (its first round, or after it reconnected).
    void sentWhole(const at::Tensor& weights) { m_held = weights.clone(); }
    // The bundle that brings the worker from what it holds to `weights`, as far as the format
    // allows; the remainder goes with the next one.
    QByteArray update(const at::Tensor& weights, const std::vector<at::Tensor>& buffers,
                      OuterWire w);
    // Streaming: the bundle that brings the worker's copy of one fragment to `values`.
    QByteArray updateFragment(const at::Tensor& values, const Fragment& f,
                              const std::vector<at::Tensor>& buffers, OuterWire w);
    const at::Tensor& held() const { return m_held; }

private:
    at::Tensor m_held;
};

// A worker's side: the weights the coordinator's bundles add up to, and what its own deltas
// have rounded away.
class OuterWorkerSide {
public:
    explicit OuterWorkerSide(OuterWire w)
        : m_wire(w) {}
    OuterWire wire() const { return m_wire; }
    // Whole weights were unpacked into `params`: later differences apply to them.
    void tookWhole(const std::vector<at::Tensor>& params) {
        m_held = flattenParams(params);
        m_fragmentFeedback.clear();
    }
    // Applies a difference bundle: `params` become the updated weights, `buffers` are replaced.
    Status applyDifference(const QByteArray& bytes, const ModelLayout& layout,
                           std::vector<at::Tensor>& params, std::vector<at::Tensor>& buffers);
    // A round's parameter delta and buffers, ready to send.
    // `delta` is let go once flattened, before it is encoded: the two would otherwise be two
    // copies of the model beside the bytes.
    QByteArray packDelta(std::vector<at::Tensor>&& delta, const std::vector<at::Tensor>& buffers) {
        at::Tensor flat = flattenParams(delta);
        delta.clear();
        return packOuter(flat, buffers, m_wire, &m_feedback);
    }
    // Streaming: applies a fragment's bundle and returns the fragment's new global values.
    Expected<at::Tensor> applyFragment(const QByteArray& bytes, const ModelLayout& layout,
                                       const Fragment& f, std::vector<at::Tensor>& buffers);
    // Streaming: fragment k's delta, with what rounding lost on k's last send added.
    QByteArray packFragmentDelta(const at::Tensor& flat, const std::vector<at::Tensor>& buffers,
                                 int k);

private:
    // Adds a fragment's bundle to the record, takes its buffers, and returns the fragment's
    // part of the record (a view).
    Expected<at::Tensor> addFragment(const QByteArray& bytes, const ModelLayout& layout,
                                     const Fragment& f, std::vector<at::Tensor>& buffers);

    OuterWire m_wire;
    at::Tensor m_held;
    ErrorFeedback m_feedback;
    std::vector<ErrorFeedback> m_fragmentFeedback;
};

} // namespace tandem
