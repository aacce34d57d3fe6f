#include "engine/wire/outerwire.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace tandem {

namespace {

struct Blocks {
    int64_t size = 0; // values per block
    int levels = 0;   // the largest code
    int perByte = 1;  // codes per byte
    bool valid() const { return size > 0; }
};

Blocks blocksOf(OuterWire w) {
    switch (w) {
    case OuterWire::Int8:
        return {256, 255, 1};
    case OuterWire::Int4:
        return {128, 15, 2};
    case OuterWire::Fp32:
    case OuterWire::Fp16:
        break;
    }
    return {};
}

// The layout's buffers alone: what follows the vector in an outer bundle.
ModelLayout buffersOf(const ModelLayout& layout) {
    ModelLayout out = layout;
    out.paramNames.clear();
    out.paramShapes.clear();
    return out;
}

int64_t blockCount(int64_t n, const Blocks& b) {
    return (n + b.size - 1) / b.size;
}

// Values a rounding format encodes or decodes at a time: whole blocks of either integer
// format. What a chunk needs beside the vector is a few of its own sizes, a megabyte or two,
// where the whole vector at once needs several copies of a model-sized vector for a moment.
constexpr int64_t kChunkValues = int64_t(1) << 16;

// The one formula both sides decode with, so that the sender knows bit for bit what the
// receiver holds.
at::Tensor dequantize(const at::Tensor& codes, const at::Tensor& mins, const at::Tensor& steps,
                      int64_t n) {
    return codes.to(at::kFloat)
        .mul_(steps.unsqueeze(1))
        .add_(mins.unsqueeze(1))
        .view(-1)
        .narrow(0, 0, n);
}

} // namespace

qint64 outerVectorBytes(OuterWire w, int64_t n) {
    switch (w) {
    case OuterWire::Fp32:
        return qint64(n) * 4;
    case OuterWire::Fp16:
        return qint64(n) * 2;
    case OuterWire::Int8:
    case OuterWire::Int4:
        break;
    }
    const Blocks b = blocksOf(w);
    const int64_t nb = blockCount(n, b);
    return qint64(nb) * 8 + qint64(nb) * (b.size / b.perByte);
}

qint64 outerBundleBytes(const ModelLayout& layout, OuterWire w, int64_t values) {
    return outerVectorBytes(w, values < 0 ? layout.paramCount() : values) +
           buffersOf(layout).bundleBytes(DType::F32);
}

namespace {

// Encodes `chunk`, the values [from, from + chunk.numel()) of a vector of n (fp32 CPU,
// contiguous; `from` a multiple of kChunkValues), into their place in `out`, the vector's
// outerVectorBytes(w, n) bytes, and returns what the receiver decodes from them. Over fp32,
// the values themselves.
at::Tensor encodeChunk(const at::Tensor& chunk, int64_t from, int64_t n, OuterWire w, char* out) {
    const int64_t len = chunk.numel();
    if (w == OuterWire::Fp32) {
        std::memcpy(out + from * 4, chunk.data_ptr(), size_t(len) * 4);
        return chunk;
    }
    if (w == OuterWire::Fp16) {
        const at::Tensor h = chunk.to(at::kHalf);
        std::memcpy(out + from * 2, h.data_ptr(), size_t(len) * 2);
        return h.to(at::kFloat);
    }
    const Blocks b = blocksOf(w);
    const int64_t nb = blockCount(n, b);
    const int64_t first = from / b.size, count = blockCount(len, b);
    // The last block is padded with its own last value, so the padding widens no range.
    at::Tensor m = at::empty({count * b.size}, at::kFloat);
    m.narrow(0, 0, len).copy_(chunk);
    if (count * b.size > len)
        m.narrow(0, len, count * b.size - len).fill_(chunk[len - 1].item<float>());
    m = m.view({count, b.size});
    const at::Tensor mins = std::get<0>(m.min(1));
    at::Tensor steps = (std::get<0>(m.max(1)) - mins).div_(double(b.levels));
    // A block of equal values has no range: any step decodes it exactly.
    steps.masked_fill_(steps.le(0), 1.0);
    const at::Tensor codes = m.sub_(mins.unsqueeze(1))
                                 .div_(steps.unsqueeze(1))
                                 .round_()
                                 .clamp_(0, double(b.levels))
                                 .to(at::kByte);
    std::memcpy(out + first * 4, mins.data_ptr(), size_t(count) * 4);
    std::memcpy(out + nb * 4 + first * 4, steps.data_ptr(), size_t(count) * 4);
    char* data = out + nb * 8 + first * (b.size / b.perByte);
    if (b.perByte == 1) {
        std::memcpy(data, codes.data_ptr(), size_t(count * b.size));
    } else {
        const at::Tensor pairs = codes.view({count, b.size / 2, 2}).to(at::kInt);
        const at::Tensor packed =
            (pairs.select(2, 0) + pairs.select(2, 1) * 16).to(at::kByte).contiguous();
        std::memcpy(data, packed.data_ptr(), size_t(count * b.size / 2));
    }
    return dequantize(codes, mins, steps, len);
}

// Hands `each` the chunks of the n values in turn: (first value, values).
template <typename Each> void forEachChunk(int64_t n, Each each) {
    for (int64_t from = 0; from < n; from += kChunkValues)
        each(from, std::min(kChunkValues, n - from));
}

} // namespace

at::Tensor encodeOuter(const at::Tensor& x, OuterWire w, char* out) {
    at::NoGradGuard noGrad;
    const at::Tensor v = x.detach().to(at::kCPU, at::kFloat).contiguous().view(-1);
    const int64_t n = v.numel();
    if (w == OuterWire::Fp32) {
        // Sent as it is: the values themselves, where x already was fp32 on the CPU, rather
        // than a copy the size of the model.
        return encodeChunk(v, 0, n, w, out);
    }
    at::Tensor sent = at::empty({n}, at::kFloat);
    forEachChunk(n, [&](int64_t from, int64_t len) {
        sent.narrow(0, from, len).copy_(encodeChunk(v.narrow(0, from, len), from, n, w, out));
    });
    return sent;
}

Expected<at::Tensor> decodeOuter(const char* in, qint64 size, OuterWire w, int64_t n) {
    if (n < 0 || size != outerVectorBytes(w, n))
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("an outer update of %1 bytes; %2 were expected")
                             .arg(size)
                             .arg(outerVectorBytes(w, std::max<int64_t>(n, 0))));
    char* src = const_cast<char*>(in); // from_blob wants non-const; only read
    if (w == OuterWire::Fp32)
        return at::from_blob(src, {n}, at::kFloat).clone();
    if (w == OuterWire::Fp16)
        return at::from_blob(src, {n}, at::kHalf).to(at::kFloat);
    // A chunk at a time, into the one vector returned (kChunkValues).
    const Blocks b = blocksOf(w);
    const int64_t nb = blockCount(n, b);
    at::Tensor values = at::empty({n}, at::kFloat);
    forEachChunk(n, [&](int64_t from, int64_t len) {
        const int64_t first = from / b.size, count = blockCount(len, b);
        const at::Tensor mins = at::from_blob(src + first * 4, {count}, at::kFloat);
        const at::Tensor steps = at::from_blob(src + nb * 4 + first * 4, {count}, at::kFloat);
        char* data = src + nb * 8 + first * (b.size / b.perByte);
        at::Tensor codes;
        if (b.perByte == 1) {
            codes = at::from_blob(data, {count, b.size}, at::kByte);
        } else {
            const at::Tensor packed =
                at::from_blob(data, {count, b.size / 2}, at::kByte).to(at::kInt);
            codes = at::stack({packed.remainder(16), packed.div(16, "floor")}, 2)
                        .view({count, b.size})
                        .to(at::kByte);
        }
        values.narrow(0, from, len).copy_(dequantize(codes, mins, steps, len));
    });
    return values;
}

void ErrorFeedback::encode(const at::Tensor& x, OuterWire w, char* out, at::Tensor* sent) {
    at::NoGradGuard noGrad;
    if (w == OuterWire::Fp32) {
        // Lossless: nothing is left over to carry into the next send.
        m_residual = at::Tensor();
        at::Tensor s = encodeOuter(x, w, out);
        if (sent)
            *sent = std::move(s);
        return;
    }
    const at::Tensor v = x.detach().to(at::kCPU, at::kFloat).contiguous().view(-1);
    const int64_t n = v.numel();
    // What is meant, x plus the residual, is made in the residual's own memory a chunk at a
    // time, and what the chunk's encoding lost is left there: the send holds no vector of the
    // model's size beside x and the residual.
    if (!m_residual.defined() || m_residual.numel() != n)
        m_residual = at::zeros({n}, at::kFloat);
    if (sent)
        *sent = at::empty({n}, at::kFloat);
    forEachChunk(n, [&](int64_t from, int64_t len) {
        at::Tensor meant = m_residual.narrow(0, from, len).add_(v.narrow(0, from, len));
        const at::Tensor s = encodeChunk(meant, from, n, w, out);
        if (sent)
            sent->narrow(0, from, len).copy_(s);
        meant.sub_(s);
    });
}

at::Tensor flattenParams(const std::vector<at::Tensor>& params) {
    at::NoGradGuard noGrad;
    std::vector<at::Tensor> flat;
    flat.reserve(params.size());
    for (const at::Tensor& p : params)
        flat.push_back(p.detach().to(at::kCPU, at::kFloat).reshape(-1));
    return flat.empty() ? at::empty({0}, at::kFloat) : at::cat(flat);
}

std::vector<at::Tensor> splitParams(const at::Tensor& flat, const ModelLayout& layout) {
    std::vector<at::Tensor> out;
    int64_t at = 0;
    for (const auto& shape : layout.paramShapes) {
        int64_t n = 1;
        for (int64_t d : shape)
            n *= d;
        out.push_back(flat.narrow(0, at, n).view(shape));
        at += n;
    }
    return out;
}

namespace {

// An outer bundle of n values and the buffers after them: `encode` writes the vector's bytes
// at the front of what it is given.
template <typename Encode>
QByteArray outerBundle(int64_t n, OuterWire w, const std::vector<at::Tensor>& buffers,
                       Encode encode) {
    const QByteArray tail = packBundle({}, buffers, DType::F32);
    const qint64 vec = outerVectorBytes(w, n);
    QByteArray out(vec + tail.size(), Qt::Uninitialized);
    encode(out.data());
    std::memcpy(out.data() + vec, tail.constData(), size_t(tail.size()));
    return out;
}

} // namespace

QByteArray packOuter(const at::Tensor& flat, const std::vector<at::Tensor>& buffers, OuterWire w,
                     ErrorFeedback* feedback, at::Tensor* decoded) {
    return outerBundle(flat.numel(), w, buffers, [&](char* out) {
        if (feedback) {
            feedback->encode(flat, w, out, decoded);
            return;
        }
        at::Tensor sent = encodeOuter(flat, w, out);
        if (decoded)
            *decoded = std::move(sent);
    });
}

Status unpackOuter(const QByteArray& bytes, const ModelLayout& layout, OuterWire w,
                   at::Tensor* flat, std::vector<at::Tensor>* buffers, int64_t values) {
    const int64_t n = values < 0 ? layout.paramCount() : values;
    if (bytes.size() != outerBundleBytes(layout, w, n))
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("an outer bundle of %1 bytes; %2 were expected")
                             .arg(bytes.size())
                             .arg(outerBundleBytes(layout, w, n)));
    const qint64 vec = outerVectorBytes(w, n);
    auto v = decodeOuter(bytes.constData(), vec, w, n);
    if (!v)
        return v.error();
    *flat = std::move(*v);
    std::vector<at::Tensor> none;
    return unpackBundle(bytes.mid(vec), buffersOf(layout), DType::F32, &none, buffers);
}

namespace {
// Every parameter, as one fragment: what a whole-model update covers.
Fragment wholeOf(int64_t values) {
    return Fragment{0, 0, 0, values};
}
} // namespace

QByteArray WeightMirror::update(const at::Tensor& weights, const std::vector<at::Tensor>& buffers,
                                OuterWire w) {
    return updateFragment(weights, wholeOf(m_held.numel()), buffers, w);
}

QByteArray WeightMirror::updateFragment(const at::Tensor& values, const Fragment& f,
                                        const std::vector<at::Tensor>& buffers, OuterWire w) {
    at::NoGradGuard noGrad;
    at::Tensor held = m_held.narrow(0, f.offset, f.count);
    const at::Tensor v = values.detach().to(at::kCPU, at::kFloat).contiguous().view(-1);
    const int64_t n = held.numel();
    if (v.numel() != n)
        throw std::invalid_argument("a weight update of another size than the values it updates");
    // A chunk at a time: the difference and what the worker decodes from it are each a
    // chunk's size, and the record moves by what was decoded.
    return outerBundle(n, w, buffers, [&](char* out) {
        forEachChunk(n, [&](int64_t from, int64_t len) {
            at::Tensor h = held.narrow(0, from, len);
            h.add_(encodeChunk(v.narrow(0, from, len) - h, from, n, w, out));
        });
    });
}

Expected<at::Tensor> OuterWorkerSide::applyFragment(const QByteArray& bytes,
                                                    const ModelLayout& layout, const Fragment& f,
                                                    std::vector<at::Tensor>& buffers) {
    auto held = addFragment(bytes, layout, f, buffers);
    if (!held)
        return held.error();
    return held->clone();
}

Expected<at::Tensor> OuterWorkerSide::addFragment(const QByteArray& bytes,
                                                  const ModelLayout& layout, const Fragment& f,
                                                  std::vector<at::Tensor>& buffers) {
    if (!m_held.defined() || f.offset + f.count > m_held.numel())
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("the coordinator sent a weight update before the "
                                        "weights it updates"));
    at::Tensor step;
    std::vector<at::Tensor> newBuffers;
    if (auto st = unpackOuter(bytes, layout, m_wire, &step, &newBuffers, f.count); !st)
        return st.error();
    at::NoGradGuard noGrad;
    at::Tensor held = m_held.narrow(0, f.offset, f.count);
    held.add_(step);
    step.reset();
    for (size_t i = 0; i < newBuffers.size() && i < buffers.size(); ++i)
        buffers[i].copy_(newBuffers[i]);
    return held;
}

QByteArray OuterWorkerSide::packFragmentDelta(const at::Tensor& flat,
                                              const std::vector<at::Tensor>& buffers, int k) {
    if (m_fragmentFeedback.size() <= size_t(k))
        m_fragmentFeedback.resize(size_t(k) + 1);
    return packOuter(flat, buffers, m_wire, &m_fragmentFeedback[size_t(k)]);
}

Status OuterWorkerSide::applyDifference(const QByteArray& bytes, const ModelLayout& layout,
                                        std::vector<at::Tensor>& params,
                                        std::vector<at::Tensor>& buffers) {
    // The parameters are copied from the record itself: no second copy of the model.
    auto held = addFragment(bytes, layout, wholeOf(layout.paramCount()), buffers);
    if (!held)
        return held.error();
    at::NoGradGuard noGrad;
    const std::vector<at::Tensor> split = splitParams(*held, layout);
    for (size_t i = 0; i < split.size() && i < params.size(); ++i)
        params[i].copy_(split[i]);
    return success();
}

} // namespace tandem
