// Fuzz target: a chat template (formats/chattemplate.h), the Jinja program a downloaded model's
// tokenizer_config.json holds: read, then rendered against fixed conversations.

#include "formats/chattemplate.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const QString source = QString::fromUtf8(reinterpret_cast<const char*>(data), qsizetype(size));
    auto t = tandem::ChatTemplate::parse(source, QStringLiteral("fuzz"));
    if (!t)
        return 0;
    const std::vector<tandem::ChatMessage> talk = {
        {QStringLiteral("system"), QStringLiteral("Be brief.")},
        {QStringLiteral("user"), QStringLiteral("What colour is a plum?")},
        {QStringLiteral("assistant"), QStringLiteral("Purple. 紫色。")},
        {QStringLiteral("user"), QStringLiteral("And a lemon?")}};
    (void)t->render(talk, true, QStringLiteral("<s>"), QStringLiteral("</s>"));
    (void)t->render({}, false, QString(), QString());
    return 0;
}
