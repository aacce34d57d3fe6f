#pragma once

#include "engine/internal.h"

// Engine-internal: preference tuning's objectives, on pairs of answers to one prompt, the
// chosen and the rejected. Both are written as TRL writes them, from the papers' equations:
//
// DPO (Rafailov et al., 2023), the sigmoid loss: with log pi(y|x) summed over the answer's
// tokens for the policy and for the frozen reference,
//   z = beta * ((pi_c - pi_r) - (ref_c - ref_r)),   loss = mean(-log sigmoid(z)),
// and the rewards beta * (pi - ref) of each answer.
//
// ORPO (Hong et al., 2024), with no reference: with each answer's mean log-probability per
// token a, the odds a / (1 - a) in logs,
//   log_odds = (a_c - a_r) - (log(1 - e^a_c) - log(1 - e^a_r)),
//   loss = mean over pairs of (-a_c - lambda * log sigmoid(log_odds)),
// the paper's eq. 6, whose L_SFT is each chosen answer's cross-entropy per token (-a_c) inside
// the expectation over pairs; and the rewards are lambda * a of each answer. TRL takes the
// cross-entropy over every chosen token of the batch at once instead, which is the same where
// the chosen answers are equally long; a mean over pairs is what lets a batch be split between
// workers, a pair to one worker, with the same loss as one process.
//
// A batch holds its pairs as 2N sequences, the N chosen first and then their N rejected, each
// with targets where -100 marks what does not count (the prompt, padding).

#include <ATen/ATen.h>

namespace tandem {

// Each sequence's log-probability of its targets under `logits` [S, T, V] (any floating dtype;
// summed in fp32) against `targets` [S, T]: the sum over the positions that count, and how many
// count, [S] each.
struct SequenceLogps {
    at::Tensor sum;
    at::Tensor count;
};
SequenceLogps sequenceLogps(const at::Tensor& logits, const at::Tensor& targets);

// A batch's preference loss with the figures TRL logs for it, per pair and detached:
// rewards/chosen and rewards/rejected (their margin and accuracy follow), logps/chosen and
// logps/rejected (the sums for DPO, the means per token for ORPO, as TRL reports each).
struct PreferenceLoss {
    at::Tensor loss; // the batch's mean, fp32, with its graph
    at::Tensor chosenRewards, rejectedRewards;
    at::Tensor chosenLogps, rejectedLogps;
    at::Tensor logOdds; // ORPO: each pair's log odds ratio (undefined for DPO)
};

// `policy` and `reference` are the 2N sequences' logps (the reference's without a graph).
PreferenceLoss dpoLoss(const SequenceLogps& policy, const SequenceLogps& reference, double beta);
PreferenceLoss orpoLoss(const SequenceLogps& policy, double lambda);

// TRL's batch means: rewards/chosen, rewards/rejected, rewards/accuracies (the pairs whose
// chosen reward is the higher), rewards/margins, logps/chosen, logps/rejected.
struct PreferenceFigures {
    double chosenReward = 0, rejectedReward = 0, accuracy = 0, margin = 0;
    double chosenLogps = 0, rejectedLogps = 0;
};
PreferenceFigures preferenceFigures(const PreferenceLoss& l);

} // namespace tandem
