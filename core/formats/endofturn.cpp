#include "formats/endofturn.h"

#include "formats/tokenizer.h"

namespace tandem {

const QStringList& endOfTurnSpellings() {
    static const QStringList spellings{
        QStringLiteral("<|im_end|>"),     QStringLiteral("<|eot_id|>"),
        QStringLiteral("<|end|>"),        QStringLiteral("<end_of_turn>"),
        QStringLiteral("<|eom_id|>"),     QStringLiteral("<|endoftext|>"),
        QStringLiteral("<|end_of_text|>")};
    return spellings;
}

std::vector<int32_t> endOfTurnTokens(const Tokenizer& tok) {
    std::vector<int32_t> out;
    const QString chat = tok.chatTemplate();
    for (const QString& s : endOfTurnSpellings()) {
        const int32_t id = tok.idOf(s);
        if (id >= 0 && tok.isSpecial(id) && chat.contains(s))
            out.push_back(id);
    }
    return out;
}

} // namespace tandem
