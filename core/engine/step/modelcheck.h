#pragma once

#include "engine/internal.h"

// Engine-internal: running a model outside training. The check before a run (does the model
// take the data's inputs and return class scores?) and the evaluation on the test split.

#include "common/expected.h"
#include "engine/step/objective.h"
#include "formats/dataset.h"
#include "model/model.h"

#include <exception>
#include <functional>
#include <utility>

namespace tandem {

// A Hugging Face folder's first look, before its tokenizer reads the data: a folder that is
// not one (no config.json, no weights) is the model's problem, said as such, not the
// dataset's. Success for any other kind of model.
Status checkModelFolder(const ModelSource& source);

// A language model reads at most its config.json's max_position_embeddings (n_positions)
// tokens at once: a context above that is refused, saying what would fit, before the data is
// read (the context `dataSpec` asks for) and once it is (its windows' length, with `data`).
// Past its positions a model with learned ones cannot run, and one with rotary ones was never
// trained there. Success for any model without such a figure.
Status checkContext(const ModelSource& source, const QString& dataSpec,
                    const DatasetSplits* data = nullptr);

// The exports a run asks for beyond its model's own (`gguf`: a GGUF file's quantization, empty
// for none), checked as far as they can be before anything loads: the GGUF file's family,
// tokenizer and shapes, so that a model llama.cpp cannot read is refused before it trains.
Status checkRunExports(const QString& model, const QString& gguf);

// A language-model run learns little from a handful of steps: where `windows` training windows
// in batches of `batch` over `epochs` make fewer than kUsefulSteps, what to say, with a batch
// that makes that many (or, where even one window a step is too few, what else would). Empty
// for a run long enough, and for one whose --max-steps the user set lower.
constexpr int64_t kUsefulSteps = 20;
QString fewStepsWarning(int64_t windows, int batch, int epochs, int64_t maxSteps);
// The batch that makes kUsefulSteps steps of `windows` over `epochs` (0 where even one window a
// step makes fewer).
int proposedBatch(int64_t windows, int epochs);

// Whether the model keeps running statistics (batch normalisation's running_mean).
bool hasRunningStats(const Model& model);

// Gathers the running statistics again for the weights as they are: `batches` forward passes
// in training mode, without gradients, over training samples spread evenly through `train`.
// Local-SGD's outer step moves the weights away from those the workers gathered the statistics
// with (momentum carries it past them), and evaluating with stale statistics can put a network
// with batch normalisation at chance; SWA re-estimates them after averaging for the same reason.
void refreshRunningStats(const Model& model, const Dataset& train, int batch, int batches);

// The test figures of `objective` over `test`, in batches of `batch`. `progress`, when given,
// is told the samples done and the total after each batch.
using EvaluationProgress = std::function<void(int64_t done, int64_t total)>;
TestMetrics evaluate(const Model& model, const Objective& objective, const Dataset& test, int batch,
                     const EvaluationProgress& progress = {});

} // namespace tandem
