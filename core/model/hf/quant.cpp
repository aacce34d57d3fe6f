#include "model/hf/quant.h"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

namespace tandem {

namespace {

// The NormalFloat values as bitsandbytes' get_4bit_type("nf4") gives them, in fp32.
constexpr float kNf4[16] = {-1.0f,
                            -0.6961928009986877f,
                            -0.5250730514526367f,
                            -0.39491748809814453f,
                            -0.28444138169288635f,
                            -0.18477343022823334f,
                            -0.09105003625154495f,
                            0.0f,
                            0.07958029955625534f,
                            0.16093020141124725f,
                            0.24611230194568634f,
                            0.33791524171829224f,
                            0.44070982933044434f,
                            0.5626170039176941f,
                            0.7229568362236023f,
                            1.0f};

// 1/127 in fp32, as bitsandbytes' int8 dequantization multiplies by it.
constexpr float kInv127 = 7.874015718698502e-3f;

const char* kNf4State = ".quant_state.bitsandbytes__nf4";
const char* kFp4State = ".quant_state.bitsandbytes__fp4";

// The index of the value of `code` (ascending, `size` of them) nearest `s`, the first of equals,
// with the distances in fp32 as torch.argmin over |s - code| compares them; NaN (a block of
// zeros scaled by 1/0) takes index 0, as argmin takes the first NaN.
int nearest(const float* code, int size, float s) {
    if (std::isnan(s))
        return 0;
    const int at = int(std::lower_bound(code, code + size, s) - code);
    int best = std::max(0, at - 2);
    float bestDistance = std::fabs(s - code[best]);
    for (int j = best + 1; j <= std::min(size - 1, at + 2); ++j) {
        const float d = std::fabs(s - code[j]);
        if (d < bestDistance)
            best = j, bestDistance = d;
    }
    return best;
}

float clampUnit(float s) {
    return std::isnan(s) ? s : std::min(1.0f, std::max(-1.0f, s));
}

// Blockwise absmax quantization of `values` (n of them) to indices of `code`, as bitsandbytes'
// quantize_blockwise computes it: each block scaled by 1/absmax in fp32, clamped to [-1, 1].
// Returns false, having stopped early, where a value is an infinity or a NaN.
bool quantizeBlocks(const float* values, int64_t n, int64_t blocksize, const float* code,
                    int codeSize, float* absmax, uint8_t* indices) {
    // Blocks are independent: on every core, each block's figures the same whichever does it.
    const int64_t blocks = (n + blocksize - 1) / blocksize;
    std::atomic<bool> finite{true};
    at::parallel_for(
        0, blocks, std::max<int64_t>(1, 16384 / blocksize), [&](int64_t b0, int64_t b1) {
            for (int64_t b = b0; b < b1 && finite.load(std::memory_order_relaxed); ++b) {
                const int64_t start = b * blocksize, end = std::min(n, start + blocksize);
                float m = 0;
                for (int64_t i = start; i < end; ++i) {
                    if (!std::isfinite(values[i]))
                        finite = false;
                    m = std::max(m, std::fabs(values[i]));
                }
                absmax[b] = m;
                const float inv = 1.0f / m;
                for (int64_t i = start; i < end; ++i)
                    indices[i] = uint8_t(nearest(code, codeSize, clampUnit(values[i] * inv)));
            }
        });
    return finite;
}

Error refuse(const QString& name, const QString& why) {
    return Error{ErrorCode::InvalidArgument,
                 name.isEmpty() ? why : QStringLiteral("%1: %2").arg(name, why)};
}

const QString kNotFinite = QStringLiteral("the weight holds an infinity or a NaN, which cannot "
                                          "be quantized; the model folder is damaged");

// The weight, flattened, a part at a time in fp32: never more than one part's copy at once.
constexpr int64_t kPart = int64_t(1) << 22; // a multiple of every block size, and even

Expected<at::Tensor> flatWeight(const at::Tensor& w, const QString& name) {
    if (!w.is_floating_point() || w.dim() != 2)
        return refuse(name, QStringLiteral("only a floating-point matrix is quantized"));
    return w.detach().to(at::kCPU).contiguous().reshape({-1});
}

} // namespace

QString torchDtypeName(at::ScalarType t) {
    return t == at::kFloat  ? QStringLiteral("float32")
           : t == at::kHalf ? QStringLiteral("float16")
                            : QStringLiteral("bfloat16");
}

QString baseQuantName(BaseQuant q) {
    switch (q) {
    case BaseQuant::Nf4:
        return QStringLiteral("nf4");
    case BaseQuant::Int8:
        return QStringLiteral("int8");
    case BaseQuant::None:
        break;
    }
    return QStringLiteral("bf16");
}

int64_t QuantizedWeight::numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
        n *= d;
    return n;
}

int64_t QuantizedWeight::bytes() const {
    int64_t b = 0;
    for (const at::Tensor* t : {&packed, &absmax, &code, &nestedAbsmax, &nestedCode})
        if (t->defined())
            b += t->numel() * int64_t(t->element_size());
    return b;
}

void QuantizedWeight::to(const c10::Device& device) {
    const bool current = pairsCurrent();
    for (at::Tensor* t : {&packed, &absmax, &code, &pairs, &nestedAbsmax, &nestedCode})
        if (t->defined() && t->device() != device)
            *t = t->to(device);
    pairsOfVersion = current ? int64_t(code._version()) : -1;
}

void QuantizedWeight::makePairs() {
    pairs = nf4PairTable(code);
    pairsOfVersion = int64_t(code._version());
}

bool QuantizedWeight::pairsCurrent() const {
    return pairs.defined() && code.defined() && pairsOfVersion == int64_t(code._version());
}

at::Tensor nf4Code() {
    return at::from_blob(const_cast<float*>(kNf4), {16}, at::kFloat).clone();
}

at::Tensor dynamicCode() {
    // create_dynamic_map(signed=True, max_exponent_bits=7, total_bits=8): for each exponent i of
    // 7, the means of 2^i + 1 fp32 boundaries spaced evenly over [0.1, 1], times 10^(i - 6), with
    // both signs; then 0 and 1; sorted. Worked out once, not for every weight.
    static const std::vector<float> values = [] {
        std::vector<float> data;
        for (int i = 0; i < 7; ++i) {
            const at::Tensor b = at::linspace(0.1, 1, (int64_t(1) << i) + 1, at::kFloat);
            const int64_t k = b.numel() - 1;
            const at::Tensor means = (b.narrow(0, 0, k) + b.narrow(0, 1, k)) / 2.0;
            const double scale = std::pow(10.0, double(i - 6));
            for (const at::Tensor& t : {means * scale, means * -scale}) {
                const at::Tensor c = t.contiguous();
                data.insert(data.end(), c.data_ptr<float>(), c.data_ptr<float>() + k);
            }
        }
        data.push_back(0.0f);
        data.push_back(1.0f);
        std::sort(data.begin(), data.end());
        return data;
    }();
    return at::tensor(values, at::kFloat);
}

Expected<QuantizedWeight> quantizeNf4(const at::Tensor& w, bool doubleQuant, const QString& name) {
    at::NoGradGuard noGrad;
    auto flat = flatWeight(w, name);
    if (!flat)
        return flat.error();
    QuantizedWeight q;
    q.kind = BaseQuant::Nf4;
    q.shape = w.sizes().vec();
    q.dtype = w.scalar_type();
    const int64_t n = flat->numel(), blocks = (n + q.blocksize - 1) / q.blocksize;
    at::Tensor absmax = at::zeros({blocks}, at::kFloat);
    q.packed = at::empty({(n + 1) / 2, 1}, at::kByte);
    uint8_t* p = q.packed.data_ptr<uint8_t>();
    std::vector<uint8_t> idx(size_t(std::min(n, kPart) + 1));
    for (int64_t start = 0; start < n; start += kPart) {
        const int64_t len = std::min(kPart, n - start);
        const at::Tensor x = flat->narrow(0, start, len).to(at::kFloat).contiguous();
        idx[size_t(len)] = 7; // an odd count is padded with 0.0's index
        if (!quantizeBlocks(x.data_ptr<float>(), len, q.blocksize, kNf4, 16,
                            absmax.data_ptr<float>() + start / q.blocksize, idx.data()))
            return refuse(name, kNotFinite);
        for (int64_t i = 0; i < (len + 1) / 2; ++i)
            p[start / 2 + i] = uint8_t(idx[size_t(2 * i)] << 4 | idx[size_t(2 * i + 1)]);
    }
    q.code = nf4Code();
    q.makePairs();
    if (!doubleQuant) {
        q.absmax = absmax;
        return q;
    }
    // The mean as torch computes it, and the absmax values less it, in fp32.
    const at::Tensor offset = absmax.mean();
    const at::Tensor centred = (absmax - offset).contiguous();
    q.offset = offset.item<float>();
    q.nestedCode = dynamicCode();
    const int64_t nestedBlocks = (blocks + q.nestedBlocksize - 1) / q.nestedBlocksize;
    q.nestedAbsmax = at::zeros({nestedBlocks}, at::kFloat);
    q.absmax = at::empty({blocks}, at::kByte);
    if (!quantizeBlocks(centred.data_ptr<float>(), blocks, q.nestedBlocksize,
                        q.nestedCode.data_ptr<float>(), 256, q.nestedAbsmax.data_ptr<float>(),
                        q.absmax.data_ptr<uint8_t>()))
        return refuse(name, kNotFinite);
    return q;
}

Expected<QuantizedWeight> quantizeInt8(const at::Tensor& w, const QString& name) {
    at::NoGradGuard noGrad;
    auto flat = flatWeight(w, name);
    if (!flat)
        return flat.error();
    QuantizedWeight q;
    q.kind = BaseQuant::Int8;
    q.shape = w.sizes().vec();
    q.dtype = w.scalar_type();
    const int64_t rows = q.shape[0], cols = q.shape[1];
    q.absmax = at::zeros({rows}, at::kFloat);
    q.packed = at::empty({rows, cols}, at::kChar);
    const at::Tensor matrix = flat->view({rows, cols});
    const int64_t step = std::max<int64_t>(1, kPart / std::max<int64_t>(1, cols));
    std::atomic<bool> finite{true};
    for (int64_t first = 0; first < rows; first += step) {
        const int64_t count = std::min(step, rows - first);
        const at::Tensor x = matrix.narrow(0, first, count).to(at::kFloat).contiguous();
        const float* v = x.data_ptr<float>();
        float* a = q.absmax.data_ptr<float>() + first;
        int8_t* out = q.packed.data_ptr<int8_t>() + first * cols;
        at::parallel_for(0, count, 1, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                float m = 0;
                for (int64_t c = 0; c < cols; ++c) {
                    if (!std::isfinite(v[r * cols + c]))
                        finite = false;
                    m = std::max(m, std::fabs(v[r * cols + c]));
                }
                a[r] = m;
                // As `127.0 / absmax` computes in PyTorch: the reciprocal, times 127.
                const float scale = (1.0f / m) * 127.0f;
                for (int64_t c = 0; c < cols; ++c)
                    out[r * cols + c] = m > 0 && std::isfinite(m)
                                            ? int8_t(std::nearbyint(v[r * cols + c] * scale))
                                            : 0;
            }
        });
        if (!finite)
            return refuse(name, kNotFinite);
    }
    return q;
}

at::Tensor nf4PairTable(const at::Tensor& code) {
    const at::Tensor bytes = at::arange(256, code.options().dtype(at::kInt));
    return at::stack(
        {code.index_select(0, bytes.floor_divide(16)), code.index_select(0, bytes.remainder(16))},
        1);
}

// Each pass is one LibTorch operator over the whole weight: the products are computed in fp32
// and written straight in `dtype` (mul_out), where a product and then a conversion would write
// and read the fp32 weight once more. The rounding is the same: fp32, then `dtype`.
at::Tensor dequantize(const QuantizedWeight& q, at::ScalarType dtype) {
    at::NoGradGuard noGrad;
    if (q.kind == BaseQuant::Int8) {
        // By a tensor, not a Scalar: LibTorch 2.x's mul_out with a Scalar wants `out` in the
        // product's own dtype.
        at::Tensor out = at::empty(q.packed.sizes(), q.absmax.options().dtype(dtype));
        return at::mul_out(out, at::mul(q.packed, q.absmax.view({-1, 1})),
                           at::scalar_tensor(kInv127, at::kFloat));
    }
    at::Tensor absmax = q.absmax;
    if (q.nested()) {
        // The absmax values: the dynamic map's value times their block's absmax, plus the mean.
        const int64_t blocks = q.absmax.numel(), nb = q.nestedBlocksize;
        const int64_t padded = q.nestedAbsmax.numel() * nb;
        at::Tensor v = q.nestedCode.index_select(0, q.absmax.to(at::kInt));
        if (padded > blocks)
            v = at::cat({v, at::zeros({padded - blocks}, v.options())});
        absmax =
            (v.view({-1, nb}) * q.nestedAbsmax.view({-1, 1})).reshape({-1}).narrow(0, 0, blocks);
        absmax = absmax + q.offset;
    }
    // Each byte's two values at once, from the table of the 256 bytes' pairs.
    const at::Tensor pairs = q.pairsCurrent() ? q.pairs : nf4PairTable(q.code);
    const int64_t n = q.numel(), bs = q.blocksize, blocks = absmax.numel();
    at::Tensor values = pairs.index_select(0, q.packed.reshape({-1}).to(at::kInt)).reshape({-1});
    if (values.numel() < blocks * bs)
        values = at::cat({values, at::zeros({blocks * bs - values.numel()}, values.options())});
    values = values.narrow(0, 0, blocks * bs).view({blocks, bs});
    at::Tensor out = at::empty({blocks, bs}, values.options().dtype(dtype));
    at::mul_out(out, values, absmax.view({-1, 1}));
    return out.view({-1}).narrow(0, 0, n).view(q.shape);
}

// ---- bitsandbytes' serialization ---------------------------------------------------------------

int64_t nf4Bytes(const std::vector<int64_t>& shape, at::ScalarType dtype) {
    QuantizedWeight q;
    q.shape = shape;
    q.dtype = dtype;
    q.offset = 0.0123456789f; // a typical mean's length in the state's JSON
    const int64_t n = q.numel(), blocks = (n + q.blocksize - 1) / q.blocksize;
    q.packed = at::empty({(n + 1) / 2, 1}, at::TensorOptions(at::kByte).device(at::kMeta));
    q.absmax = at::empty({blocks}, at::TensorOptions(at::kByte).device(at::kMeta));
    q.code = at::empty({16}, at::TensorOptions(at::kFloat).device(at::kMeta));
    q.nestedAbsmax = at::empty({(blocks + q.nestedBlocksize - 1) / q.nestedBlocksize},
                               at::TensorOptions(at::kFloat).device(at::kMeta));
    q.nestedCode = at::empty({256}, at::TensorOptions(at::kFloat).device(at::kMeta));
    int64_t bytes = 0;
    for (const auto& [name, t] : bnbTensors(std::string(), q))
        bytes += t.numel() * int64_t(t.element_size());
    return bytes;
}

NamedTensors bnbTensors(const std::string& weight, const QuantizedWeight& q) {
    NamedTensors out;
    if (q.kind == BaseQuant::Int8) {
        out.emplace_back(weight, q.packed);
        out.emplace_back(weight.substr(0, weight.size() - 6) + "SCB", q.absmax);
        return out;
    }
    QJsonArray shape;
    for (int64_t d : q.shape)
        shape << qint64(d);
    QJsonObject state{{QStringLiteral("quant_type"), QStringLiteral("nf4")},
                      {QStringLiteral("blocksize"), qint64(q.blocksize)},
                      {QStringLiteral("dtype"), torchDtypeName(q.dtype)},
                      {QStringLiteral("shape"), shape}};
    out.emplace_back(weight, q.packed);
    out.emplace_back(weight + ".absmax", q.absmax);
    out.emplace_back(weight + ".quant_map", q.code);
    if (q.nested()) {
        out.emplace_back(weight + ".nested_absmax", q.nestedAbsmax);
        out.emplace_back(weight + ".nested_quant_map", q.nestedCode);
        state.insert(QStringLiteral("nested_blocksize"), qint64(q.nestedBlocksize));
        state.insert(QStringLiteral("nested_dtype"), QStringLiteral("float32"));
        state.insert(QStringLiteral("nested_offset"), double(q.offset));
    }
    const QByteArray json = QJsonDocument(state).toJson(QJsonDocument::Compact);
    at::Tensor bytes = at::empty({json.size()}, at::kByte);
    std::memcpy(bytes.data_ptr<uint8_t>(), json.constData(), size_t(json.size()));
    out.emplace_back(weight + kNf4State, bytes);
    return out;
}

namespace {

bool endsWith(const std::string& s, const std::string& tail) {
    return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

} // namespace

bool isBnbCompanion(const std::string& name) {
    for (const char* tail : {".weight.absmax", ".weight.quant_map", ".weight.nested_absmax",
                             ".weight.nested_quant_map", ".SCB", ".weight_format"})
        if (endsWith(name, tail))
            return true;
    return endsWith(name, std::string(".weight") + kNf4State) ||
           endsWith(name, std::string(".weight") + kFp4State);
}

Expected<QuantizedWeight> readBnb(const std::string& name,
                                  const std::map<std::string, at::Tensor>& tensors,
                                  const std::vector<int64_t>& expected) {
    const QString shown = QString::fromStdString(name);
    auto bad = [&](const QString& why) {
        return Error{ErrorCode::Incompatible, QStringLiteral("%1: %2").arg(shown, why),
                     ErrorSubject::Model};
    };
    auto get = [&](const std::string& n) {
        auto it = tensors.find(n);
        return it == tensors.end() ? at::Tensor() : it->second;
    };
    const at::Tensor packed = get(name);
    QuantizedWeight q;
    q.packed = packed;
    if (packed.scalar_type() == at::kChar) {
        // LLM.int8: the row-wise scales beside the weight.
        q.kind = BaseQuant::Int8;
        q.absmax = get(name.substr(0, name.size() - 6) + "SCB");
        q.shape = packed.sizes().vec();
        q.dtype = at::kBFloat16;
        if (!q.absmax.defined() || q.absmax.scalar_type() != at::kFloat || packed.dim() != 2 ||
            q.absmax.numel() != packed.size(0))
            return bad(QStringLiteral("an int8 weight needs its row scales (SCB), fp32, one a "
                                      "row"));
        if (!expected.empty() && q.shape != expected)
            return bad(QStringLiteral("the int8 weight's shape is not the model's"));
        return q;
    }
    if (get(name + kFp4State).defined())
        return bad(QStringLiteral("this weight is quantized as fp4, which Tandem does not read; "
                                  "use the model's nf4 or unquantized folder"));
    const at::Tensor state = get(name + kNf4State);
    if (!state.defined() || state.scalar_type() != at::kByte)
        return bad(QStringLiteral("a uint8 weight without bitsandbytes' nf4 quant_state; Tandem "
                                  "reads nf4 and int8 bitsandbytes folders"));
    const at::Tensor cpu = state.to(at::kCPU).contiguous();
    QJsonParseError err;
    const QJsonObject s =
        QJsonDocument::fromJson(
            QByteArray(reinterpret_cast<const char*>(cpu.data_ptr<uint8_t>()), int(cpu.numel())),
            &err)
            .object();
    if (err.error != QJsonParseError::NoError)
        return bad(QStringLiteral("its quant_state is not JSON"));
    if (s.value(QStringLiteral("quant_type")).toString() != QLatin1String("nf4"))
        return bad(QStringLiteral("its quant_type is \"%1\"; Tandem reads nf4")
                       .arg(s.value(QStringLiteral("quant_type")).toString()));
    for (const QJsonValue& d : s.value(QStringLiteral("shape")).toArray())
        q.shape.push_back(d.toInteger(-1));
    const QString dtype = s.value(QStringLiteral("dtype")).toString();
    q.dtype = dtype == QLatin1String("float32")   ? at::kFloat
              : dtype == QLatin1String("float16") ? at::kHalf
                                                  : at::kBFloat16;
    q.blocksize = s.value(QStringLiteral("blocksize")).toInteger(0);
    q.absmax = get(name + ".absmax");
    q.code = get(name + ".quant_map");
    q.nestedAbsmax = get(name + ".nested_absmax");
    q.nestedCode = get(name + ".nested_quant_map");
    // Against the model's own shape first: no arithmetic on figures a file made up.
    if (q.shape.size() != 2 || q.shape[0] <= 0 || q.shape[1] <= 0 ||
        q.shape[0] > (int64_t(1) << 31) || q.shape[1] > (int64_t(1) << 31) ||
        (!expected.empty() && q.shape != expected))
        return bad(QStringLiteral("its quant_state's shape is not the model's"));
    const int64_t n = q.shape[0] * q.shape[1];
    if (q.blocksize < 2 || q.blocksize > 4096 || q.blocksize % 2 != 0)
        return bad(
            QStringLiteral("its block size %1 is not one bitsandbytes writes").arg(q.blocksize));
    const int64_t blocks = (n + q.blocksize - 1) / q.blocksize;
    if (packed.numel() != (n + 1) / 2)
        return bad(QStringLiteral("it holds %1 bytes; its shape needs %2")
                       .arg(packed.numel())
                       .arg((n + 1) / 2));
    if (!q.code.defined() || q.code.scalar_type() != at::kFloat || q.code.numel() != 16)
        return bad(QStringLiteral("its quant_map is not 16 fp32 values"));
    if (!q.absmax.defined() || q.absmax.numel() != blocks)
        return bad(QStringLiteral("its absmax is not one value a block"));
    if (q.nestedAbsmax.defined()) {
        q.nestedBlocksize = s.value(QStringLiteral("nested_blocksize")).toInteger(0);
        q.offset = float(s.value(QStringLiteral("nested_offset")).toDouble());
        if (q.absmax.scalar_type() != at::kByte || q.nestedBlocksize < 1 ||
            q.nestedBlocksize > 4096 || q.nestedAbsmax.scalar_type() != at::kFloat ||
            !q.nestedCode.defined() || q.nestedCode.scalar_type() != at::kFloat ||
            q.nestedCode.numel() != 256 ||
            q.nestedAbsmax.numel() != (blocks + q.nestedBlocksize - 1) / q.nestedBlocksize)
            return bad(QStringLiteral("its double quantization (nested_absmax, "
                                      "nested_quant_map, nested_blocksize) does not fit it"));
    } else if (q.absmax.scalar_type() != at::kFloat) {
        return bad(QStringLiteral("its absmax is not fp32"));
    }
    q.packed = packed.reshape({-1, 1});
    if (!q.code.is_meta())
        q.makePairs();
    return q;
}

} // namespace tandem
