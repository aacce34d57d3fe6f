#pragma once

// A model's chat template: the Jinja text in tokenizer_config.json that turns a conversation
// into the one string the model was trained on. Rendered by a small interpreter of the part
// of Jinja the supported families' templates use, with Hugging Face's settings (trim_blocks,
// lstrip_blocks):
//   {{ }}, {% if/elif/else %}, {% for x in … %} with loop.index0/index/first/last/length,
//   {% set x = … %} (and ns.x with namespace()), {# #}, whitespace control with "-";
//   literals, [..] and {..}, ., [], slices, + - * / // % ~, comparisons, and/or/not, in,
//   "x if c else y", is defined/none/string/number/mapping/iterable/true/false;
//   filters trim, length, count, upper, lower, capitalize, title, first, last, join, default,
//   tojson, string, int, list, items, replace, safe; string methods strip, lstrip, rstrip,
//   startswith, endswith, split, upper, lower, title, replace; get, items, keys, values;
//   raise_exception(), range(), namespace(); {% generation %} passes its text through.
// Anything else is refused when the template is read, naming the construct and its line.

#include "common/expected.h"

#include <QString>

#include <QJsonValue>

#include <memory>
#include <vector>

namespace tandem {

struct ChatMessage {
    QString role;
    QString content;
};

// One message of a conversation in JSON, {"role": …, "content": "…"}: a system, user or
// assistant message with its text. The error says what is wrong with it; the caller says where.
Expected<ChatMessage> chatMessageFromJson(const QJsonValue& value);

class ChatTemplate {
public:
    struct Node;

    // `name` is for errors (the file the template came from).
    static Expected<ChatTemplate> parse(const QString& source, const QString& name);

    // The conversation as the template writes it; `addGenerationPrompt` adds what opens the
    // assistant's next turn. A template that raises an exception, or fails on these messages,
    // is an error naming its line.
    Expected<QString> render(const std::vector<ChatMessage>& messages, bool addGenerationPrompt,
                             const QString& bosToken, const QString& eosToken) const;

private:
    std::shared_ptr<const Node> m_root;
    QString m_name;
};

} // namespace tandem
