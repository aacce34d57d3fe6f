#pragma once

// Continuing a prompt with a trained language model: the engine's public face for `tandem
// generate` and the app's "Try it…". Plain C++/Qt: nothing here includes LibTorch.

#include "common/expected.h"

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <functional>

namespace tandem {

struct GenerateOptions {
    // A run checkpoint (checkpoint.tandem), a TorchScript file (model.pt), a zoo name, or
    // hf:DIR, a Hugging Face folder (a run's hf-model/ export among them).
    QString model;
    QByteArray prompt; // UTF-8 text; for a byte-level model its bytes are the tokens
    // Hugging Face models: the prompt is one user message, written with the chat template and
    // the assistant's turn opened; the answer ends at the end of that turn.
    bool chat = false;
    // Hugging Face models: sample only among the likeliest tokens whose probabilities add up
    // to top_p (1 keeps all).
    double topP = 1.0;
    // Hugging Face models: keep each block's keys and values (off only to measure it).
    bool kvCache = true;
    // Hugging Face models: "cuda:N", "mps" or "cpu"; empty for this machine's best.
    QString device;
    int tokens = 200; // how many to add
    // 0 picks the likeliest token every time; above 0 samples from softmax(logits / T).
    double temperature = 0.8;
    uint64_t seed = 0;
    // The most tokens the model is given at once (a model with learned positions knows no more);
    // 0: the context the checkpoint's data was cut into, or 256.
    int context = 0;
};

// Feeds the prompt to a byte-level model ([B, T] ids in, [B, T, 256] logits out) and calls
// `onToken` with each new byte as it is made; generation stops early when it returns false.
// Errors name the file; a model whose output is not next-byte logits is refused before anything
// is generated. Runs on the calling thread: call it off a UI's.
Status generateText(const GenerateOptions& options,
                    const std::function<bool(const QByteArray&)>& onToken);

// The same for a Hugging Face model (hf:DIR; a run checkpoint goes through generateText(),
// which passes a Hugging Face run's model on): the prompt goes through the folder's tokenizer
// (and its chat template with `chat`), and `onText` receives the answer's UTF-8 as it is made,
// never cut inside a character; it ends at an EOS token or at the model's positions.
Status generateWithTokenizer(const GenerateOptions& options,
                             const std::function<bool(const QByteArray&)>& onText);

} // namespace tandem
