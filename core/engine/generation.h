#pragma once

// Continuing a prompt with a trained language model: the engine's public face for `tandem
// generate` and the app's "Try it…". Plain C++/Qt: nothing here includes LibTorch.

#include "common/expected.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <cstdint>
#include <functional>
#include <vector>

namespace tandem {

struct ChatMessage;

// One exchange of a chat: the user's message and the model's answer.
struct GenerateTurn {
    QString user;
    QString assistant;
};

struct GenerateOptions {
    // A run checkpoint (checkpoint.tandem), a TorchScript file (model.pt), a zoo name, or
    // hf:DIR, a Hugging Face folder (a run's hf-model/ export among them): a ModelSource.
    QString model;
    QByteArray prompt; // UTF-8 text; for a byte-level model its bytes are the tokens
    // Hugging Face models: the prompt is one user message, written with the chat template and
    // the assistant's turn opened; the answer ends at the end of that turn.
    bool chat = false;
    // With `chat`: a system message first (empty: none), and the conversation so far, written
    // with the template before the prompt, the newest turn last.
    QString system;
    QList<GenerateTurn> history;
    // Hugging Face models: sample only among the likeliest tokens whose probabilities add up
    // to top_p (1 keeps all).
    double topP = 1.0;
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

// Continues the prompt with the model `options.model` names and calls `onText` with the answer's
// UTF-8 as it is made, in whole characters only; generation stops early when it returns false.
// A byte-level model (a TorchScript file, a built-in, their run checkpoints) reads the prompt's
// bytes as tokens and is refused before anything is generated if its output is not next-byte
// logits; a Hugging Face model (hf:DIR, or its run's checkpoint) reads it through the folder's
// tokenizer (and, with `chat`, its chat template) and ends at an EOS token or at the most
// tokens it reads at once. Errors name the model. Runs on the calling thread: call it off a
// UI's.
// `stats`, when given, receives the tokens the answer holds and the seconds they took, from the
// prompt's first pass to the last token (the model's loading left out), stopped early or not.
struct GenerateStats {
    int64_t tokens = 0;
    double seconds = 0;
    double tokensPerSecond() const { return seconds > 0 ? double(tokens) / seconds : 0; }
};
// With `chat`, the messages the chat template writes: the system message, the history and the
// prompt as the user's newest message.
std::vector<ChatMessage> chatMessagesOf(const GenerateOptions& options);

Status generate(const GenerateOptions& options,
                const std::function<bool(const QByteArray&)>& onText,
                GenerateStats* stats = nullptr);

} // namespace tandem
