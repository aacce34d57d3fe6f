#pragma once

#include "engine/internal.h"

// Engine-internal: what a step minimises and what the test figures mean. One place turns a
// model's output and a batch's targets into a loss, for the workers' steps and for the
// coordinator's evaluation alike, so that the loss a run reports is the loss it trained on.

#include "common/expected.h"
#include "engine/training.h"
#include "formats/dataset.h"

#include "model/model.h"
#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <vector>

namespace tandem {

struct Objective {
    LossKind loss = LossKind::CrossEntropy; // never Auto
    Task task = Task::Classification;
    double beta = 0.1; // dpo's beta, orpo's lambda (RunConfig::beta)
    // DPO on a model without adapters: the reference's log-probabilities of each pair's chosen
    // and rejected answer, two a pair, for the training and the held-out pairs, computed before
    // training from the model the run started from (referenceLogps()). Null otherwise.
    std::shared_ptr<const std::vector<float>> reference{}, testReference{};
};

// Whether a dataset's samples are preference pairs: two sequences each, the chosen answer's and
// the rejected one's (formats/prefdata.h).
bool holdsPairs(const Dataset& d);

// A batch through the model as its objective reads it. Preference pairs [B, 2, T] go in as 2B
// sequences, the B chosen first (preference.h), and for DPO through the base alone as well,
// the adapters off and without a graph: the reference. A model without adapters has its
// reference's log-probabilities given instead, two a pair in the batch's order
// (`referenceRows`: Objective::reference's rows of the batch's samples). Any other batch goes in
// as it is.
struct ObjectiveOutput {
    at::Tensor output{};
    at::Tensor reference{};      // DPO on adapters: the base's logits
    at::Tensor referenceLogps{}; // DPO on every weight: [2B], the chosen first
    // Defined: `output` holds these positions of the batch only ([K, vocab]; rows as
    // countedRows() gives them), and the loss takes the target's at the same positions.
    at::Tensor rows{};
};
// `counted` (from countedRows(), on x's device): a sequence's loss needs the output at these
// positions only, and a model that computes just those (Model::outputsAtRows) is asked for
// them.
ObjectiveOutput objectiveForward(const Objective& objective, const Model& model,
                                 const at::Tensor& x, const float* referenceRows = nullptr,
                                 const at::Tensor& counted = {});

// The positions a cross-entropy over token windows counts, as flat indices b·T + t of
// `target` ([B, T] int64 on the CPU): defined only where `objective` is such a loss, `model`
// computes its output at some positions alone, and some of the target's positions are
// ignored (kIgnoredTarget: a chat's prompts and padding). Read on the host, so that a device
// never waits for it.
at::Tensor countedRows(const Objective& objective, const Model& model, const at::Tensor& target);

// Objective::reference's rows (two a sample) for `samples` of `table`.
std::vector<float> referenceRowsOf(const std::vector<float>& table,
                                   const std::vector<int64_t>& samples);

// The log-probabilities `model` gives each pair's chosen and rejected answer, two a pair, for
// every pair of `pairs`, `batch` pairs at a time without a graph: DPO's reference for a full
// fine-tune, from the model as the run starts. `progress` is told the pairs done.
std::vector<float> referenceLogps(const Model& model, const Dataset& pairs, int batch,
                                  const std::function<void(int64_t, int64_t)>& progress = {});

// The task `loss` gives on data with `targets`: cross-entropy on one class per sample is
// classification, on ids per position a sequence; MSE, L1 and Huber are regression; BCE is
// multi-label; the model's own loss is custom.
Task taskOf(LossKind loss, Dataset::Targets targets);

// The model check before a run: runs the model on two training samples and picks the loss for
// `asked` from its output and the data's targets (auto), or checks that the loss asked for
// fits them. A mismatch is refused naming the shapes and dtypes and what would fit: logits
// [B,T,V] against targets [B], a token id at or above V, MSE on integer targets.
Expected<Objective> resolveObjective(LossKind asked, const Model& model, const DatasetSplits& data,
                                     const QString& modelName);

// One batch's loss, in fp32: the mean over what it counts (samples, or the positions whose
// target is not -100), with the hits the task's accuracy counts. All three stay on the
// output's device, so that computing them never waits for it; `correct` and `counted` (int64)
// are undefined where the task has no accuracy.
struct BatchLoss {
    at::Tensor loss;
    at::Tensor correct;
    at::Tensor counted;
    // Preference tuning: TRL's five figures summed over the batch's pairs, fp32
    // [PairFigures::kCount] (undefined for any other objective).
    at::Tensor pairSums;
};
BatchLoss batchLoss(const Objective& objective, const Model& model, const at::Tensor& output,
                    const at::Tensor& target);
// The same from objectiveForward()'s output. For preference pairs, the loss is the mean over
// the batch's pairs, and `correct` and `counted` are the pairs whose chosen answer's reward is
// the higher and the pairs (TRL's rewards/accuracies).
BatchLoss batchLoss(const Objective& objective, const Model& model, const ObjectiveOutput& output,
                    const at::Tensor& target);

// Cross-entropy summed over the rows of `logits` [N, V] (any floating dtype) against `target`
// [N], rows whose target is -100 counting for nothing: the same sum as nll_loss over
// log_softmax in fp32, to fp32 rounding, but computed `rows` rows at a time in the forward and
// the backward pass alike, so that neither holds the fp32 logits or their softmax whole (for
// a 152 k vocabulary, 2.5 GB each at 4 × 1,024 tokens). batchLoss() uses it where the logits
// are larger than one part (crossEntropyRows() rows).
at::Tensor chunkedCrossEntropySum(const at::Tensor& logits, const at::Tensor& target, int64_t rows);
// The rows of a part: about 64 MB of fp32 logits.
int64_t crossEntropyRows(int64_t vocab);

// BatchLoss::pairSums (on any device) as the figures of `pairs` pairs.
PairFigures pairFiguresOf(const at::Tensor& sums, int64_t pairs);

// The test figures, summed batch by batch.
class Evaluation {
public:
    explicit Evaluation(Objective objective)
        : m_objective(objective) {}
    void add(const Model& model, const at::Tensor& output, const at::Tensor& target);
    void add(const Model& model, const ObjectiveOutput& output, const at::Tensor& target);
    TestMetrics result() const;

private:
    Objective m_objective;
    double m_lossSum = 0; // each batch's mean times its weight
    double m_weight = 0;  // samples, or counted positions for sequences
    int64_t m_correct = 0;
    int64_t m_counted = 0;
    PairFigures m_pairs;
    // Regression: over every target value.
    double m_n = 0, m_sum = 0, m_sumSq = 0, m_sse = 0, m_sae = 0;
};

} // namespace tandem
