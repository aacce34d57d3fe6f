#pragma once

// Preference pairs in TRL's formats, one JSON object a line, for DPO and ORPO:
//   {"prompt": "…", "chosen": "…", "rejected": "…"}                            plain text
//   {"prompt": [messages…], "chosen": [assistant turn], "rejected": [assistant turn]}
//                                                                             conversational
// and, conversational with no "prompt", "chosen" and "rejected" as whole conversations that
// share their first messages, which are then the prompt (TRL's implicit prompt).
//
// Plain text is tokenized as TRL does for a decoder-only model: the prompt with no special
// tokens, each answer with no special tokens and the tokenizer's EOS after it. Conversations
// are written with the chat template, as chat: data is: the prompt with the generation prompt,
// and each answer as what writing the whole conversation adds after it, its end-of-turn tokens
// included. Only an answer's tokens are targets.
//
// A pair is one sample of two sequences: the chosen answer after the prompt, then the rejected
// one, each cut to `context` input positions with targets one token later (-100 where a
// position is the prompt's or padding). A pair longer than context + 1 tokens is refused by
// its line rather than cut: a prompt cut from its start (TRL's way) may lose the question the
// answers reply to, and the user should choose a larger context or shorter pairs. Every bad
// line is refused with the file and the line.

#include "common/expected.h"
#include "formats/dataset.h"

#include <QByteArray>
#include <QString>

namespace tandem {

class ChatTemplate;
class Tokenizer;

// The pairs of a file's bytes as a dataset: I64 samples of shape {2, context} (token ids; a
// padded position holds the EOS), Ids targets of the same shape. `tmpl` may be null when no
// line is conversational. `file` names the file in errors.
Expected<Dataset> readPreferencePairs(const QByteArray& bytes, const QString& file,
                                      const Tokenizer& tok, const ChatTemplate* tmpl,
                                      int64_t context);

} // namespace tandem
