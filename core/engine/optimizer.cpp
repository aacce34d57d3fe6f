#include "engine/optimizer.h"

#include "engine/scriptmodel.h"

#include <cmath>

namespace tandem {

Optimizer::Optimizer(OptimizerConfig config, std::vector<at::Tensor> params)
    : m_cfg(config)
    , m_params(std::move(params))
    , m_buf(m_params.size())
    , m_expAvg(m_params.size())
    , m_expSq(m_params.size())
    , m_paramSteps(m_params.size(), 0) {}

void Optimizer::step(const std::vector<at::Tensor>& grads, double lr) {
    at::NoGradGuard noGrad;
    ++m_steps;
    for (size_t i = 0; i < m_params.size(); ++i) {
        if (i >= grads.size() || !grads[i].defined())
            continue;
        at::Tensor p = m_params[i];
        at::Tensor g = grads[i];
        switch (m_cfg.kind) {
        case OptimizerConfig::Kind::Sgd: {
            // torch.optim.SGD, dampening 0: buf = momentum*buf + g (buf = g at first);
            // p -= lr * (nesterov ? g + momentum*buf : buf).
            if (m_cfg.weightDecay != 0)
                g = g.add(p, m_cfg.weightDecay);
            if (m_cfg.momentum != 0) {
                if (!m_buf[i].defined())
                    m_buf[i] = g.clone();
                else
                    m_buf[i].mul_(m_cfg.momentum).add_(g);
                g = m_cfg.nesterov ? g.add(m_buf[i], m_cfg.momentum) : m_buf[i];
            }
            p.add_(g, -lr);
            break;
        }
        case OptimizerConfig::Kind::Adam:
        case OptimizerConfig::Kind::AdamW: {
            // torch.optim.Adam/AdamW: m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g^2;
            // p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps).
            // Adam's weight decay is L2 on the gradient; AdamW's scales p by (1 - lr*wd).
            if (m_cfg.weightDecay != 0) {
                if (m_cfg.kind == OptimizerConfig::Kind::AdamW)
                    p.mul_(1.0 - lr * m_cfg.weightDecay);
                else
                    g = g.add(p, m_cfg.weightDecay);
            }
            if (!m_expAvg[i].defined()) {
                m_expAvg[i] = at::zeros_like(p);
                m_expSq[i] = at::zeros_like(p);
            }
            const int64_t t = ++m_paramSteps[i];
            m_expAvg[i].mul_(m_cfg.beta1).add_(g, 1.0 - m_cfg.beta1);
            m_expSq[i].mul_(m_cfg.beta2).addcmul_(g, g, 1.0 - m_cfg.beta2);
            const double bc1 = 1.0 - std::pow(m_cfg.beta1, double(t));
            const double bc2 = 1.0 - std::pow(m_cfg.beta2, double(t));
            at::Tensor denom = m_expSq[i].sqrt().div_(std::sqrt(bc2)).add_(m_cfg.eps);
            p.addcdiv_(m_expAvg[i], denom, -lr / bc1);
            break;
        }
        }
    }
}

QList<TensorRecord> Optimizer::stateRecords() const {
    QList<TensorRecord> out;
    for (size_t i = 0; i < m_params.size(); ++i) {
        const std::string idx = std::to_string(i);
        if (m_buf[i].defined())
            out << toRecord("momentum_buffer." + idx, m_buf[i]);
        if (m_expAvg[i].defined()) {
            out << toRecord("exp_avg." + idx, m_expAvg[i]);
            out << toRecord("exp_avg_sq." + idx, m_expSq[i]);
            TensorRecord s = toRecord("step." + idx, at::scalar_tensor(m_paramSteps[i], at::kLong));
            out << s;
        }
    }
    return out;
}

Status Optimizer::restore(int64_t steps, const QList<TensorRecord>& records) {
    std::vector<at::Tensor> buf(m_params.size()), avg(m_params.size()), sq(m_params.size());
    std::vector<int64_t> psteps(m_params.size(), 0);
    for (const TensorRecord& r : records) {
        const qsizetype dot = r.name.lastIndexOf(QLatin1Char('.'));
        bool ok = false;
        const qlonglong i = r.name.mid(dot + 1).toLongLong(&ok);
        if (dot <= 0 || !ok || i < 0 || size_t(i) >= m_params.size())
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("optimizer state %1 names no parameter").arg(r.name));
        const QString slot = r.name.left(dot);
        auto t = fromRecord(r);
        if (!t)
            return t.error();
        if (slot == QLatin1String("step")) {
            if (t->numel() != 1)
                return makeError(ErrorCode::Corrupt, QStringLiteral("bad optimizer step count"));
            psteps[size_t(i)] = t->item<int64_t>();
            continue;
        }
        if (!t->sizes().equals(m_params[size_t(i)].sizes()))
            return makeError(
                ErrorCode::Incompatible,
                QStringLiteral("optimizer state %1 does not fit its parameter").arg(r.name));
        at::Tensor v = t->to(m_params[size_t(i)].options());
        if (slot == QLatin1String("momentum_buffer"))
            buf[size_t(i)] = v;
        else if (slot == QLatin1String("exp_avg"))
            avg[size_t(i)] = v;
        else if (slot == QLatin1String("exp_avg_sq"))
            sq[size_t(i)] = v;
        else
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("unknown optimizer state %1").arg(r.name));
    }
    for (size_t i = 0; i < m_params.size(); ++i)
        if (avg[i].defined() != sq[i].defined())
            return makeError(
                ErrorCode::Corrupt,
                QStringLiteral("optimizer state for parameter %1 is incomplete").arg(i));
    m_buf = std::move(buf);
    m_expAvg = std::move(avg);
    m_expSq = std::move(sq);
    m_paramSteps = std::move(psteps);
    m_steps = steps;
    return success();
}

} // namespace tandem
