// ggml's block formats (ggmlquant.h). The quantizers are ggml-quants.c's reference routines
// (quantize_row_*_ref), the ones llama.cpp's quantizer runs without an importance matrix, done
// in the same order with the same float arithmetic, so that the bytes agree.
#include "formats/ggmlquant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

namespace tandem {

namespace {

constexpr int kSuper = 256; // QK_K

// Rounds to the nearest integer, ties to even, as ggml's nearest_int does (|f| < 2^22).
int nearestInt(float f) {
    const float v = f + 12582912.f;
    int32_t i;
    std::memcpy(&i, &v, 4);
    return (i & 0x007fffff) - 0x00400000;
}

void putHalf(char* p, float f) {
    const uint16_t h = fp32ToFp16(f);
    std::memcpy(p, &h, 2);
}

float getHalf(const char* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return fp16ToFp32(h);
}

uint16_t fp32ToBf16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffff) > 0x7f800000) // NaN: kept quiet
        return uint16_t((u >> 16) | 64);
    return uint16_t((u + (0x7fff + ((u >> 16) & 1))) >> 16);
}

// The scale and minimum of a sub-block that fit `x` best under `weights` (make_qkx2_quants):
// levels 0..nmax, the minimum never above zero; a search over nstep scales around the plain one.
float fitScaleMin(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* theMin,
                  uint8_t* Laux, float rmin, float rdelta, int nstep) {
    float min = x[0], max = x[0];
    float sumW = weights[0];
    float sumX = sumW * x[0];
    for (int i = 1; i < n; ++i) {
        min = std::min(min, x[i]);
        max = std::max(max, x[i]);
        sumW += weights[i];
        sumX += weights[i] * x[i];
    }
    if (min > 0)
        min = 0;
    if (max == min) {
        std::fill(L, L + n, 0);
        *theMin = -min;
        return 0.f;
    }
    float iscale = nmax / (max - min);
    float scale = 1 / iscale;
    float bestError = 0;
    for (int i = 0; i < n; ++i) {
        const int l = nearestInt(iscale * (x[i] - min));
        L[i] = uint8_t(std::max(0, std::min(nmax, l)));
        const float diff = scale * L[i] + min - x[i];
        bestError += weights[i] * diff * diff;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * is + nmax) / (max - min);
        float sumL = 0, sumL2 = 0, sumXL = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::max(0, std::min(nmax, nearestInt(iscale * (x[i] - min))));
            Laux[i] = uint8_t(l);
            const float w = weights[i];
            sumL += w * l;
            sumL2 += w * l * l;
            sumXL += w * l * x[i];
        }
        const float D = sumW * sumL2 - sumL * sumL;
        if (D > 0) {
            float thisScale = (sumW * sumXL - sumX * sumL) / D;
            float thisMin = (sumL2 * sumX - sumL * sumXL) / D;
            if (thisMin > 0) {
                thisMin = 0;
                thisScale = sumXL / sumL2;
            }
            float error = 0;
            for (int i = 0; i < n; ++i) {
                const float diff = thisScale * Laux[i] + thisMin - x[i];
                error += weights[i] * diff * diff;
            }
            if (error < bestError) {
                std::copy(Laux, Laux + n, L);
                bestError = error;
                scale = thisScale;
                min = thisMin;
            }
        }
    }
    *theMin = -min;
    return scale;
}

// The signed scale of a sub-block with levels -nmax..nmax-1 weighted by x² (make_qx_quants with
// rmse_type 1), searching 18 scales around the plain one.
float fitSymmetricScale(int n, int nmax, const float* x, int8_t* L) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; ++i)
        if (std::fabs(x[i]) > amax) {
            amax = std::fabs(x[i]);
            max = x[i];
        }
    if (amax < 1e-15f) {
        std::fill(L, L + n, 0);
        return 0.f;
    }
    float iscale = -nmax / max;
    float sumLX = 0, sumL2 = 0;
    for (int i = 0; i < n; ++i) {
        const int l = std::max(-nmax, std::min(nmax - 1, nearestInt(iscale * x[i])));
        L[i] = int8_t(l + nmax);
        const float w = x[i] * x[i];
        sumLX += w * x[i] * l;
        sumL2 += w * l * l;
    }
    float scale = sumL2 ? sumLX / sumL2 : 0.0f;
    float best = scale * sumLX;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0)
            continue;
        iscale = -(nmax + 0.1f * is) / max;
        sumLX = sumL2 = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::max(-nmax, std::min(nmax - 1, nearestInt(iscale * x[i])));
            const float w = x[i] * x[i];
            sumLX += w * x[i] * l;
            sumL2 += w * l * l;
        }
        if (sumL2 > 0 && sumLX * sumLX > best * sumL2) {
            for (int i = 0; i < n; ++i)
                L[i] =
                    int8_t(nmax + std::max(-nmax, std::min(nmax - 1, nearestInt(iscale * x[i]))));
            scale = sumLX / sumL2;
            best = scale * sumLX;
        }
    }
    return scale;
}

// The 6-bit scale and minimum of sub-block j from a K block's 12 packed bytes.
void scaleMinK4(int j, const uint8_t* q, uint8_t* d, uint8_t* m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// Q4_K and Q5_K: eight sub-blocks of 32 with a scale and a minimum each (levels 0..nmax).
// Fills `scales12`, d and dmin in `block` and the levels in L.
void quantizeKScales(const float* x, int nmax, float rmin, float rdelta, int nstep, char* block,
                     uint8_t* scales12, uint8_t* L) {
    float mins[8], scales[8], weights[32];
    uint8_t Laux[32];
    float maxScale = 0, maxMin = 0;
    for (int j = 0; j < 8; ++j) {
        float sumX2 = 0;
        for (int l = 0; l < 32; ++l)
            sumX2 += x[32 * j + l] * x[32 * j + l];
        const float avX = std::sqrt(sumX2 / 32);
        for (int l = 0; l < 32; ++l)
            weights[l] = avX + std::fabs(x[32 * j + l]);
        scales[j] = fitScaleMin(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin,
                                rdelta, nstep);
        maxScale = std::max(maxScale, scales[j]);
        maxMin = std::max(maxMin, mins[j]);
    }
    const float invScale = maxScale > 0 ? 63.f / maxScale : 0.f;
    const float invMin = maxMin > 0 ? 63.f / maxMin : 0.f;
    std::memset(scales12, 0, 12);
    for (int j = 0; j < 8; ++j) {
        const uint8_t ls = std::min<uint8_t>(63, uint8_t(nearestInt(invScale * scales[j])));
        const uint8_t lm = std::min<uint8_t>(63, uint8_t(nearestInt(invMin * mins[j])));
        if (j < 4) {
            scales12[j] = ls;
            scales12[j + 4] = lm;
        } else {
            scales12[j + 4] = uint8_t((ls & 0xF) | ((lm & 0xF) << 4));
            scales12[j - 4] |= uint8_t((ls >> 4) << 6);
            scales12[j] |= uint8_t((lm >> 4) << 6);
        }
    }
    putHalf(block, maxScale / 63.f);
    putHalf(block + 2, maxMin / 63.f);
    const float d = getHalf(block), dmin = getHalf(block + 2);
    for (int j = 0; j < 8; ++j) {
        uint8_t sc, m;
        scaleMinK4(j, scales12, &sc, &m);
        const float dj = d * sc;
        if (!dj)
            continue;
        const float dm = dmin * m;
        for (int ii = 0; ii < 32; ++ii)
            L[32 * j + ii] =
                uint8_t(std::max(0, std::min(nmax, nearestInt((x[32 * j + ii] + dm) / dj))));
    }
}

void quantizeQ4K(const float* x, char* b) { // d, dmin, scales[12], qs[128]
    uint8_t L[kSuper];
    auto* scales = reinterpret_cast<uint8_t*>(b + 4);
    quantizeKScales(x, 15, -1.f, 0.1f, 20, b, scales, L);
    auto* q = reinterpret_cast<uint8_t*>(b + 16);
    for (int j = 0; j < kSuper; j += 64, q += 32)
        for (int l = 0; l < 32; ++l)
            q[l] = uint8_t(L[j + l] | (L[j + l + 32] << 4));
}

void quantizeQ5K(const float* x, char* b) { // d, dmin, scales[12], qh[32], qs[128]
    uint8_t L[kSuper];
    auto* scales = reinterpret_cast<uint8_t*>(b + 4);
    quantizeKScales(x, 31, -0.5f, 0.1f, 15, b, scales, L);
    auto* qh = reinterpret_cast<uint8_t*>(b + 16);
    auto* ql = reinterpret_cast<uint8_t*>(b + 48);
    std::memset(qh, 0, 32);
    uint8_t m1 = 1, m2 = 2;
    for (int n = 0; n < kSuper; n += 64, ql += 32) {
        for (int j = 0; j < 32; ++j) {
            int l1 = L[n + j], l2 = L[n + j + 32];
            if (l1 > 15) {
                l1 -= 16;
                qh[j] |= m1;
            }
            if (l2 > 15) {
                l2 -= 16;
                qh[j] |= m2;
            }
            ql[j] = uint8_t(l1 | (l2 << 4));
        }
        m1 = uint8_t(m1 << 2);
        m2 = uint8_t(m2 << 2);
    }
}

void quantizeQ6K(const float* x, char* b) { // ql[128], qh[64], scales[16], d
    int8_t L[kSuper];
    float scales[16];
    float maxScale = 0, maxAbsScale = 0;
    for (int ib = 0; ib < 16; ++ib) {
        scales[ib] = fitSymmetricScale(16, 32, x + 16 * ib, L + 16 * ib);
        if (std::fabs(scales[ib]) > maxAbsScale) {
            maxAbsScale = std::fabs(scales[ib]);
            maxScale = scales[ib];
        }
    }
    std::memset(b, 0, 210);
    if (maxAbsScale < 1e-15f)
        return;
    auto* sc = reinterpret_cast<int8_t*>(b + 192);
    const float iscale = -128.f / maxScale;
    putHalf(b + 208, 1 / iscale);
    for (int ib = 0; ib < 16; ++ib)
        sc[ib] = int8_t(std::min(127, nearestInt(iscale * scales[ib])));
    const float d0 = getHalf(b + 208);
    for (int j = 0; j < 16; ++j) {
        const float d = d0 * sc[j];
        if (!d)
            continue;
        for (int ii = 0; ii < 16; ++ii)
            L[16 * j + ii] =
                int8_t(std::max(-32, std::min(31, nearestInt(x[16 * j + ii] / d))) + 32);
    }
    auto* ql = reinterpret_cast<uint8_t*>(b);
    auto* qh = reinterpret_cast<uint8_t*>(b + 128);
    for (int j = 0; j < kSuper; j += 128, ql += 64, qh += 32)
        for (int l = 0; l < 32; ++l) {
            const uint8_t q1 = L[j + l] & 0xF, q2 = L[j + l + 32] & 0xF, q3 = L[j + l + 64] & 0xF,
                          q4 = L[j + l + 96] & 0xF;
            ql[l] = uint8_t(q1 | (q3 << 4));
            ql[l + 32] = uint8_t(q2 | (q4 << 4));
            qh[l] = uint8_t((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                            ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
        }
}

// Q5_0 (d, qh[4], qs[16]) and Q5_1 (d, m, qh[4], qs[16]), 32 values each.
void quantizeQ5(const float* x, char* b, bool withMin) {
    float d, min = 0;
    if (withMin) {
        float lo = std::numeric_limits<float>::max(), hi = -lo;
        for (int j = 0; j < 32; ++j) {
            lo = std::min(lo, x[j]);
            hi = std::max(hi, x[j]);
        }
        min = lo;
        d = (hi - lo) / 31;
    } else {
        float amax = 0, max = 0;
        for (int j = 0; j < 32; ++j)
            if (amax < std::fabs(x[j])) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        d = max / -16;
    }
    const float id = d ? 1.0f / d : 0.0f;
    putHalf(b, d);
    if (withMin)
        putHalf(b + 2, min);
    char* qhAt = b + (withMin ? 4 : 2);
    auto* qs = reinterpret_cast<uint8_t*>(qhAt + 4);
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
        uint8_t v0, v1;
        if (withMin) {
            v0 = uint8_t((x[j] - min) * id + 0.5f);
            v1 = uint8_t((x[j + 16] - min) * id + 0.5f);
        } else {
            v0 = uint8_t(std::min(31, int(int8_t(x[j] * id + 16.5f))));
            v1 = uint8_t(std::min(31, int(int8_t(x[j + 16] * id + 16.5f))));
        }
        qs[j] = uint8_t((v0 & 0x0F) | ((v1 & 0x0F) << 4));
        qh |= uint32_t((v0 & 0x10u) >> 4) << j;
        qh |= uint32_t((v1 & 0x10u) >> 4) << (j + 16);
    }
    std::memcpy(qhAt, &qh, 4);
}

void quantizeQ8(const float* v, char* o) {
    float amax = 0;
    for (int j = 0; j < 32; ++j)
        amax = std::max(amax, std::fabs(v[j]));
    const float d = amax / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    putHalf(o, d);
    for (int j = 0; j < 32; ++j)
        o[2 + j] = char(int8_t(std::round(v[j] * id)));
}

// One block of `t` back into 32 or 256 values.
void dequantizeBlock(GgmlType t, const char* b, float* y) {
    switch (t) {
    case GgmlType::Q8_0: {
        const float d = getHalf(b);
        for (int j = 0; j < 32; ++j)
            y[j] = d * float(int8_t(b[2 + j]));
        break;
    }
    case GgmlType::Q5_0:
    case GgmlType::Q5_1: {
        const bool withMin = t == GgmlType::Q5_1;
        const float d = getHalf(b), m = withMin ? getHalf(b + 2) : 0.f;
        const char* qhAt = b + (withMin ? 4 : 2);
        uint32_t qh;
        std::memcpy(&qh, qhAt, 4);
        const auto* qs = reinterpret_cast<const uint8_t*>(qhAt + 4);
        for (int j = 0; j < 16; ++j) {
            const int h0 = ((qh >> j) << 4) & 0x10, h1 = (qh >> (j + 12)) & 0x10;
            const int x0 = (qs[j] & 0x0F) | h0, x1 = (qs[j] >> 4) | h1;
            y[j] = withMin ? x0 * d + m : float(x0 - 16) * d;
            y[j + 16] = withMin ? x1 * d + m : float(x1 - 16) * d;
        }
        break;
    }
    case GgmlType::Q4_K:
    case GgmlType::Q5_K: {
        const bool five = t == GgmlType::Q5_K;
        const float d = getHalf(b), dmin = getHalf(b + 2);
        const auto* scales = reinterpret_cast<const uint8_t*>(b + 4);
        const auto* qh = reinterpret_cast<const uint8_t*>(b + 16);
        const auto* q = reinterpret_cast<const uint8_t*>(b + (five ? 48 : 16));
        uint8_t u1 = 1, u2 = 2;
        for (int j = 0, is = 0; j < kSuper; j += 64, q += 32, is += 2) {
            uint8_t sc, m;
            scaleMinK4(is, scales, &sc, &m);
            const float d1 = d * sc, m1 = dmin * m;
            scaleMinK4(is + 1, scales, &sc, &m);
            const float d2 = d * sc, m2 = dmin * m;
            for (int l = 0; l < 32; ++l) {
                y[j + l] = d1 * float((q[l] & 0xF) + (five && (qh[l] & u1) ? 16 : 0)) - m1;
                y[j + l + 32] = d2 * float((q[l] >> 4) + (five && (qh[l] & u2) ? 16 : 0)) - m2;
            }
            u1 = uint8_t(u1 << 2);
            u2 = uint8_t(u2 << 2);
        }
        break;
    }
    case GgmlType::Q6_K: {
        const float d = getHalf(b + 208);
        const auto* ql = reinterpret_cast<const uint8_t*>(b);
        const auto* qh = reinterpret_cast<const uint8_t*>(b + 128);
        const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
        for (int n = 0; n < kSuper; n += 128, ql += 64, qh += 32, sc += 8)
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[n + l] = d * sc[is] * q1;
                y[n + l + 32] = d * sc[is + 2] * q2;
                y[n + l + 64] = d * sc[is + 4] * q3;
                y[n + l + 96] = d * sc[is + 6] * q4;
            }
        break;
    }
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
        break;
    }
}

} // namespace

int64_t ggmlBlockElements(GgmlType t) {
    switch (t) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
        return 1;
    case GgmlType::Q5_0:
    case GgmlType::Q5_1:
    case GgmlType::Q8_0:
        return 32;
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K:
        return kSuper;
    }
    return 0;
}

int64_t ggmlBlockBytes(GgmlType t) {
    switch (t) {
    case GgmlType::F32:
        return 4;
    case GgmlType::F16:
    case GgmlType::BF16:
        return 2;
    case GgmlType::Q5_0:
        return 22;
    case GgmlType::Q5_1:
        return 24;
    case GgmlType::Q8_0:
        return 34;
    case GgmlType::Q4_K:
        return 144;
    case GgmlType::Q5_K:
        return 176;
    case GgmlType::Q6_K:
        return 210;
    }
    return 0;
}

QString ggmlTypeName(GgmlType t) {
    switch (t) {
    case GgmlType::F32:
        return QStringLiteral("F32");
    case GgmlType::F16:
        return QStringLiteral("F16");
    case GgmlType::BF16:
        return QStringLiteral("BF16");
    case GgmlType::Q5_0:
        return QStringLiteral("Q5_0");
    case GgmlType::Q5_1:
        return QStringLiteral("Q5_1");
    case GgmlType::Q8_0:
        return QStringLiteral("Q8_0");
    case GgmlType::Q4_K:
        return QStringLiteral("Q4_K");
    case GgmlType::Q5_K:
        return QStringLiteral("Q5_K");
    case GgmlType::Q6_K:
        return QStringLiteral("Q6_K");
    }
    return QStringLiteral("type %1").arg(uint32_t(t));
}

bool ggmlTypeKnown(uint32_t t) {
    return ggmlBlockBytes(GgmlType(t)) > 0;
}

QByteArray ggmlQuantize(GgmlType t, const float* x, int64_t n) {
    const int64_t block = ggmlBlockElements(t);
    QByteArray out(qsizetype(n / block * ggmlBlockBytes(t)), '\0');
    char* o = out.data();
    switch (t) {
    case GgmlType::F32:
        std::memcpy(o, x, size_t(n) * 4);
        break;
    case GgmlType::F16:
    case GgmlType::BF16: {
        auto* h = reinterpret_cast<uint16_t*>(o);
        for (int64_t i = 0; i < n; ++i)
            h[i] = t == GgmlType::F16 ? fp32ToFp16(x[i]) : fp32ToBf16(x[i]);
        break;
    }
    default: {
        // Blocks are independent: a large tensor's are shared among the cores.
        const int64_t bytes = ggmlBlockBytes(t), blocks = n / block;
        auto range = [&](int64_t from, int64_t to) {
            for (int64_t b = from; b < to; ++b) {
                const float* v = x + b * block;
                char* ob = o + b * bytes;
                if (t == GgmlType::Q8_0)
                    quantizeQ8(v, ob);
                else if (t == GgmlType::Q5_0 || t == GgmlType::Q5_1)
                    quantizeQ5(v, ob, t == GgmlType::Q5_1);
                else if (t == GgmlType::Q4_K)
                    quantizeQ4K(v, ob);
                else if (t == GgmlType::Q5_K)
                    quantizeQ5K(v, ob);
                else if (t == GgmlType::Q6_K)
                    quantizeQ6K(v, ob);
            }
        };
        const int64_t threads =
            std::min<int64_t>(std::max(1u, std::thread::hardware_concurrency()), blocks / 256 + 1);
        std::vector<std::thread> pool;
        for (int64_t i = 1; i < threads; ++i)
            pool.emplace_back(range, blocks * i / threads, blocks * (i + 1) / threads);
        range(0, blocks / threads);
        for (std::thread& th : pool)
            th.join();
    }
    }
    return out;
}

std::vector<float> ggmlDequantize(GgmlType t, const char* data, int64_t n) {
    std::vector<float> out(size_t(std::max<int64_t>(n, 0)));
    if (t == GgmlType::F32) {
        std::memcpy(out.data(), data, out.size() * 4);
    } else if (t == GgmlType::F16 || t == GgmlType::BF16) {
        for (int64_t i = 0; i < n; ++i) {
            uint16_t h;
            std::memcpy(&h, data + i * 2, 2);
            if (t == GgmlType::F16) {
                out[size_t(i)] = fp16ToFp32(h);
            } else {
                const uint32_t bits = uint32_t(h) << 16;
                std::memcpy(&out[size_t(i)], &bits, 4);
            }
        }
    } else {
        const int64_t block = ggmlBlockElements(t), bytes = ggmlBlockBytes(t);
        for (int64_t b = 0; b < n / block; ++b)
            dequantizeBlock(t, data + b * bytes, out.data() + b * block);
    }
    return out;
}

uint16_t fp32ToFp16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000;
    const uint32_t absx = x & 0x7fffffff;
    if (absx >= 0x7f800000) // infinity or NaN
        return uint16_t(sign | 0x7c00 | (absx > 0x7f800000 ? 0x200 : 0));
    if (absx >= 0x477ff000) // rounds to 65536 or more: infinity
        return uint16_t(sign | 0x7c00);
    if (absx < 0x38800000) { // below the smallest normal half: a subnormal, rounded to even
        if (absx < 0x33000000)
            return uint16_t(sign);
        const uint32_t mant = (absx & 0x7fffff) | 0x800000;
        const int shift = 126 - int(absx >> 23); // to the half's units of 2^-24
        const uint32_t whole = mant >> shift, rest = mant & ((1u << shift) - 1),
                       half = 1u << (shift - 1);
        const uint32_t h = whole + (rest > half || (rest == half && (whole & 1)) ? 1 : 0);
        return uint16_t(sign | h);
    }
    // A normal half: rebias the exponent, round the 13 dropped bits to nearest even.
    uint32_t h = ((absx >> 13) - ((127 - 15) << 10));
    const uint32_t rest = absx & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
        ++h;
    return uint16_t(sign | h);
}

float fp16ToFp32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    float f;
    if (exp == 0) {
        f = std::ldexp(float(mant), -24);
    } else if (exp == 31) {
        f = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    } else {
        const uint32_t bits = ((exp + 112) << 23) | (mant << 13);
        std::memcpy(&f, &bits, 4);
    }
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits |= sign;
    std::memcpy(&f, &bits, 4);
    return f;
}

} // namespace tandem
