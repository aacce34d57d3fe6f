// The transformer's quantized base: quantizing its linear weights at load, and what they hold
// and would save, for the memory plan (quant.h holds the format).
#include "model/hf/transformer.h"
#include "model/hf/weights.h"

#include <set>

namespace tandem {

bool HfTransformer::isQuantizedWeight(const std::string& name, const at::Tensor& t) {
    return (t.scalar_type() == at::kByte || t.scalar_type() == at::kChar) &&
           !weightModule(name).empty();
}

int64_t HfTransformer::nf4Saving() const {
    const std::vector<std::string> linear = linearWeights();
    const std::set<std::string> targets(linear.begin(), linear.end());
    int64_t saved = 0, largest = 0, elem = 2;
    for (const auto& [name, t] : m_params) {
        if (!targets.count(name) || !t.is_floating_point())
            continue;
        const int64_t n = t.numel();
        saved += n * int64_t(t.element_size()) - nf4Bytes(t.sizes().vec(), t.scalar_type());
        largest = std::max(largest, n);
        elem = int64_t(t.element_size());
    }
    return saved > 0 ? std::max<int64_t>(0, saved - largest * std::max<int64_t>(6, 4 + elem)) : 0;
}

Status HfTransformer::quantizeBase(BaseQuant kind, const std::function<void(int, int)>& progress) {
    if (kind == BaseQuant::None)
        return success();
    const std::vector<std::string> linear = linearWeights();
    const std::set<std::string> targets(linear.begin(), linear.end());
    NamedTensors out;
    int done = 0;
    for (auto& [name, t] : m_params) {
        if (!targets.count(name) || !t.is_floating_point()) {
            out.emplace_back(name, t);
            continue;
        }
        // One weight at a time, from the mapping: its pages are dropped once it is quantized.
        const at::Tensor w = m_config.family->conv1d ? t.t() : t;
        auto q = kind == BaseQuant::Nf4 ? quantizeNf4(w, true, QString::fromStdString(name))
                                        : quantizeInt8(w, QString::fromStdString(name));
        if (!q) {
            // Some weights are gone already: the model holds none rather than half of them.
            m_params.clear();
            m_bound.reset();
            return q.error();
        }
        q->to(t.device());
        dropMappedPages(t);
        t = at::Tensor();
        for (auto& part : bnbTensors(name, *q))
            out.push_back(std::move(part));
        if (progress)
            progress(++done, int(targets.size()));
    }
    for (auto& [name, t] : out)
        if (t.is_floating_point())
            t.set_requires_grad(false);
    m_params = std::move(out);
    bind();
    return success();
}

BaseQuant HfTransformer::baseQuant() const {
    for (const auto& [name, t] : m_params)
        if (isQuantizedWeight(name, t))
            return t.scalar_type() == at::kChar ? BaseQuant::Int8 : BaseQuant::Nf4;
    return BaseQuant::None;
}

int64_t HfTransformer::dequantizedBytes(int64_t elem) const {
    // The largest quantized weight, dequantized: its fp32 values and their index, or those
    // values beside its copy in the pass's dtype.
    int64_t largest = 0;
    for (const auto& [name, t] : m_params)
        if (isQuantizedWeight(name, t))
            largest = std::max<int64_t>(largest,
                                        t.scalar_type() == at::kChar ? t.numel() : 2 * t.numel());
    return largest * std::max<int64_t>(6, 4 + elem);
}

} // namespace tandem
