#include "engine/step/preference.h"

#include "formats/dataset.h"

#include <stdexcept>

namespace tandem {

namespace {

// log(1 - e^x) for x < 0 without losing it near either end: log(-expm1(x)) where e^x is close
// to 1, log1p(-e^x) where it is small (Mächler, "Accurately computing log(1 - exp(-|a|))").
at::Tensor log1mexp(const at::Tensor& x) {
    const at::Tensor nearZero = x > -0.6931471805599453; // -log 2
    return at::where(nearZero, at::log(-at::expm1(x)), at::log1p(-at::exp(x)));
}

// The first and second halves of a batch of 2N sequences: the chosen answers, the rejected.
std::pair<at::Tensor, at::Tensor> halves(const at::Tensor& t) {
    const int64_t n = t.size(0) / 2;
    return {t.narrow(0, 0, n), t.narrow(0, n, n)};
}

void checkPairs(const SequenceLogps& s, const char* what) {
    if (!s.sum.defined() || s.sum.dim() != 1 || s.sum.size(0) % 2 != 0 || s.sum.size(0) == 0)
        throw std::invalid_argument(std::string(what) +
                                    ": a batch of pairs holds 2N sequences, the chosen first");
}

} // namespace

SequenceLogps sequenceLogps(const at::Tensor& logits, const at::Tensor& targets) {
    if (logits.dim() != 3 || targets.dim() != 2 || logits.size(0) != targets.size(0) ||
        logits.size(1) != targets.size(1))
        throw std::invalid_argument("sequenceLogps takes logits [S, T, V] and targets [S, T]");
    const at::Tensor counts = targets != kIgnoredTarget;
    const at::Tensor safe = at::where(counts, targets, at::zeros_like(targets));
    const at::Tensor logp =
        at::log_softmax(logits.to(at::kFloat), -1).gather(-1, safe.unsqueeze(-1)).squeeze(-1);
    SequenceLogps out;
    out.sum = at::where(counts, logp, at::zeros_like(logp)).sum(1);
    out.count = counts.sum(1).to(at::kFloat);
    return out;
}

PreferenceLoss dpoLoss(const SequenceLogps& policy, const SequenceLogps& reference, double beta) {
    checkPairs(policy, "dpoLoss");
    checkPairs(reference, "dpoLoss");
    const auto [pc, pr] = halves(policy.sum);
    const auto [rc, rr] = halves(reference.sum.detach());
    const at::Tensor z = ((pc - pr) - (rc - rr)) * beta;
    PreferenceLoss l;
    l.loss = -at::log_sigmoid(z).mean();
    l.chosenRewards = ((pc - rc) * beta).detach();
    l.rejectedRewards = ((pr - rr) * beta).detach();
    l.chosenLogps = pc.detach();
    l.rejectedLogps = pr.detach();
    return l;
}

PreferenceLoss orpoLoss(const SequenceLogps& policy, double lambda) {
    checkPairs(policy, "orpoLoss");
    const auto [sc, sr] = halves(policy.sum);
    const auto [nc, nr] = halves(policy.count.clamp_min(1));
    const at::Tensor ac = sc / nc, ar = sr / nr;
    const at::Tensor logOdds = (ac - ar) - (log1mexp(ac) - log1mexp(ar));
    // Each chosen answer's cross-entropy per token, in the pair's own term (the paper's
    // expectation over pairs), so that the loss is a mean over pairs and a batch split between
    // workers sums to the same.
    PreferenceLoss l;
    l.loss = (-ac - at::log_sigmoid(logOdds) * lambda).mean();
    l.chosenRewards = (ac * lambda).detach();
    l.rejectedRewards = (ar * lambda).detach();
    l.chosenLogps = ac.detach();
    l.rejectedLogps = ar.detach();
    l.logOdds = logOdds.detach();
    return l;
}

PreferenceFigures preferenceFigures(const PreferenceLoss& l) {
    const at::Tensor c = l.chosenRewards.to(at::kDouble).cpu();
    const at::Tensor r = l.rejectedRewards.to(at::kDouble).cpu();
    PreferenceFigures f;
    f.chosenReward = c.mean().item<double>();
    f.rejectedReward = r.mean().item<double>();
    f.accuracy = (c > r).to(at::kDouble).mean().item<double>();
    f.margin = (c - r).mean().item<double>();
    f.chosenLogps = l.chosenLogps.to(at::kDouble).mean().item<double>();
    f.rejectedLogps = l.rejectedLogps.to(at::kDouble).mean().item<double>();
    return f;
}

} // namespace tandem
