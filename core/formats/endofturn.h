#pragma once

// The tokens that end a turn in the chat formats Tandem's families use (<|eot_id|>,
// <|im_end|>, <end_of_turn>, …): generation stops at each of them that the tokenizer holds as
// a special token and its chat template writes, besides the EOS, as llama.cpp stops at its
// end-of-generation tokens. `tandem generate`, Try it… and the GGUF export's Ollama Modelfile
// take them from here.

#include <QString>
#include <QStringList>

#include <cstdint>
#include <vector>

namespace tandem {

class Tokenizer;

// The spellings, most common first.
const QStringList& endOfTurnSpellings();
// Those of `tok`'s special tokens that its chat template writes (none without a template).
std::vector<int32_t> endOfTurnTokens(const Tokenizer& tok);

} // namespace tandem
