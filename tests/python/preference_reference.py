"""DPO's and ORPO's losses, rewards and gradients in float64 from the papers' equations, with no
code of Tandem's: the reference for core/engine/step/preference.cpp.

    preference_reference.py CASE.json     prints the figures as JSON

CASE.json holds "shape" [S, T, V] (S = 2N sequences: the N chosen answers, then their N
rejected), "logits" and "reference" (the policy's and the frozen reference's scores, flat),
"targets" (flat, -100 where a position does not count), "beta" and "lambda". The output holds,
for each loss, "loss", "chosen_rewards", "rejected_rewards", "chosen_logps", "rejected_logps" and
"grad" (d loss / d logits, flat).

DPO (Rafailov et al., 2023, eq. 7): with log pi(y|x) the sum of the answer's token log-probs,
loss = -mean log sigmoid(beta * (log pi(y_c) - log ref(y_c) - log pi(y_r) + log ref(y_r))), and
each answer's reward beta * (log pi(y) - log ref(y)).
ORPO (Hong et al., 2024, eqs. 4-7): with P(y|x) = exp of the mean token log-prob of the answer,
odds(y) = P / (1 - P), loss = the mean over pairs of L_SFT - lambda * log sigmoid(log(odds(y_c)
/ odds(y_r))), L_SFT being the chosen answer's cross-entropy per token (eq. 6, the expectation
over pairs of eq. 2's mean over the answer's tokens), and each answer's reward lambda * log P(y|x).
"""
import json
import math
import sys

import torch


def token_logps(logits, targets):
    counts = targets != -100
    lp = torch.log_softmax(logits, -1)
    picked = lp.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return (picked * counts).sum(1), counts.sum(1).double()


def dpo(logits, reference, targets, beta):
    s, c = token_logps(logits, targets)
    with torch.no_grad():
        r, _ = token_logps(reference, targets)
    n = s.shape[0] // 2
    z = beta * ((s[:n] - r[:n]) - (s[n:] - r[n:]))
    loss = -torch.nn.functional.logsigmoid(z).mean()
    return loss, beta * (s[:n] - r[:n]), beta * (s[n:] - r[n:]), s[:n], s[n:]


def orpo(logits, targets, lam):
    s, c = token_logps(logits, targets)
    n = s.shape[0] // 2
    mean = s / c
    p_c, p_r = mean[:n], mean[n:]
    # log odds(y) = log P - log(1 - P)
    log_odds = (p_c - torch.log(-torch.expm1(p_c))) - (p_r - torch.log(-torch.expm1(p_r)))
    sft = -s[:n] / c[:n]
    loss = (sft - lam * torch.nn.functional.logsigmoid(log_odds)).mean()
    return loss, lam * p_c, lam * p_r, p_c, p_r


def main():
    with open(sys.argv[1]) as f:
        case = json.load(f)
    shape = case["shape"]
    targets = torch.tensor(case["targets"], dtype=torch.long).reshape(shape[0], shape[1])
    reference = torch.tensor(case["reference"], dtype=torch.float64).reshape(shape)
    out = {}
    for name in ("dpo", "orpo"):
        logits = torch.tensor(case["logits"], dtype=torch.float64).reshape(shape).requires_grad_()
        if name == "dpo":
            loss, rc, rr, lc, lr = dpo(logits, reference, targets, case["beta"])
        else:
            loss, rc, rr, lc, lr = orpo(logits, targets, case["lambda"])
        loss.backward()
        assert math.isfinite(loss.item())
        out[name] = {"loss": loss.item(), "chosen_rewards": rc.tolist(),
                     "rejected_rewards": rr.tolist(), "chosen_logps": lc.tolist(),
                     "rejected_logps": lr.tolist(), "grad": logits.grad.reshape(-1).tolist()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
