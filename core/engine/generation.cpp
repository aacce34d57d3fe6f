// Generation: one loop for every model that generates. The model (model/model.h) gives a
// session that holds the tokens so far; a Sampler picks each next token; what the tokens are as
// text is the model's kind's: a byte-level model's tokens are bytes, a Hugging Face model's go
// through its tokenizer. Text is handed on in whole UTF-8 characters only.

#include "engine/generation.h"

#include "engine/devices.h"
#include "engine/record/runcheckpoint.h"
#include "formats/chattemplate.h"
#include "formats/endofturn.h"
#include "formats/tokenizer.h"
#include "model/generation.h"
#include "model/model.h"
#include "model/openmodel.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QScopeGuard>

#include <set>

namespace tandem {

std::vector<ChatMessage> chatMessagesOf(const GenerateOptions& o) {
    std::vector<ChatMessage> messages;
    if (!o.system.isEmpty())
        messages.push_back({QStringLiteral("system"), o.system});
    for (const GenerateTurn& t : o.history) {
        messages.push_back({QStringLiteral("user"), t.user});
        messages.push_back({QStringLiteral("assistant"), t.assistant});
    }
    messages.push_back({QStringLiteral("user"), QString::fromUtf8(o.prompt)});
    return messages;
}

namespace {

constexpr int kDefaultContext = 256;

// The context a run cut its data into: "context=N" in its data spec, else the default.
int contextOf(const QString& dataSpec) {
    static const QRegularExpression re(QStringLiteral("[,:]context=(\\d+)"));
    const auto m = re.match(dataSpec);
    return m.hasMatch() ? m.captured(1).toInt() : kDefaultContext;
}

// The model to generate with, and where it came from: a Hugging Face model's folder holds its
// tokenizer.
struct Loaded {
    Model model;
    ModelSource source;
    int context = kDefaultContext;
};

Expected<Loaded> load(const GenerateOptions& o) {
    Loaded out;
    out.source = ModelSource::parse(o.model);
    if (out.source.kind == ModelSource::Kind::Checkpoint) {
        auto c = loadRunCheckpoint(out.source.path);
        if (!c)
            return c.error();
        out.model = c->module;
        out.context = contextOf(c->state.config.data);
        out.source = ModelSource::parse(c->state.config.model);
    } else {
        auto m = openModel(out.source, {});
        if (!m)
            return m.error();
        out.model = *m;
    }
    if (o.context > 0)
        out.context = o.context;
    return out;
}

// How many bytes at the end of `s` are the start of a UTF-8 character not yet complete.
int incompleteTail(const QByteArray& s) {
    for (int back = 1; back <= 3 && back <= s.size(); ++back) {
        const uchar c = uchar(s[s.size() - back]);
        if ((c & 0xC0) == 0x80)
            continue;
        const int need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        return need > back ? back : 0;
    }
    return 0;
}

// What the answer's tokens say: the prompt's ids, the ids that end an answer, and the answer's
// text so far.
class Vocabulary {
public:
    virtual ~Vocabulary() = default;
    virtual Expected<std::vector<int64_t>> prompt(const GenerateOptions& o) const = 0;
    virtual std::set<int64_t> stops() const { return {}; }
    virtual QByteArray text(const std::vector<int64_t>& answer) const = 0;
};

// A byte-level model: its tokens are the text's bytes.
class Bytes final : public Vocabulary {
public:
    Expected<std::vector<int64_t>> prompt(const GenerateOptions& o) const override {
        std::vector<int64_t> ids;
        for (char c : o.prompt)
            ids.push_back(int64_t(uchar(c)));
        if (ids.empty())
            ids.push_back(int64_t('\n')); // something to start from
        return ids;
    }
    QByteArray text(const std::vector<int64_t>& answer) const override {
        QByteArray s;
        for (int64_t b : answer)
            s.append(char(uchar(b)));
        return s;
    }
};

// A Hugging Face model's tokenizer, chat template and end-of-answer ids.
class HfVocabulary final : public Vocabulary {
public:
    HfVocabulary(std::shared_ptr<const Tokenizer> tok, QString folder)
        : m_tok(std::move(tok))
        , m_folder(std::move(folder)) {}

    // The prompt as text with the tokenizer's template, or with `chat` as one user message
    // written with the chat template, the assistant's turn opened.
    Expected<std::vector<int64_t>> prompt(const GenerateOptions& o) const override {
        const QString prompt = QString::fromUtf8(o.prompt);
        std::vector<int32_t> ids;
        if (!o.chat) {
            ids = m_tok->encode(prompt, true);
        } else {
            const QString source = m_tok->chatTemplate();
            if (source.isEmpty())
                return makeError(ErrorCode::InvalidArgument,
                                 QStringLiteral("%1 has no chat_template in "
                                                "tokenizer_config.json; leave out --chat to "
                                                "continue the prompt as text")
                                     .arg(m_folder));
            auto tmpl =
                ChatTemplate::parse(source, m_folder + QStringLiteral("/tokenizer_config.json"));
            if (!tmpl)
                return tmpl.error();
            auto text = tmpl->render(chatMessagesOf(o), true, m_tok->bosToken(), m_tok->eosToken());
            if (!text)
                return text.error();
            ids = m_tok->encode(*text, false);
        }
        if (ids.empty())
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("the prompt gives no tokens; write a prompt"));
        return std::vector<int64_t>(ids.begin(), ids.end());
    }
    // The tokenizer's EOS, those generation_config.json names, and the end-of-turn tokens its
    // chat template writes (a base model's tokenizer whose EOS is <|end_of_text|> ends a chat
    // answer with <|eot_id|>).
    std::set<int64_t> stops() const override {
        std::set<int64_t> stop;
        if (m_tok->eos() >= 0)
            stop.insert(m_tok->eos());
        for (int32_t id : endOfTurnTokens(*m_tok))
            stop.insert(id);
        QFile f(QDir(m_folder).filePath(QStringLiteral("generation_config.json")));
        if (f.open(QIODevice::ReadOnly) && f.size() < (1 << 20)) {
            const QJsonValue v =
                QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("eos_token_id"));
            for (const auto& id : v.isArray() ? v.toArray() : QJsonArray{v})
                if (id.toInt(-1) >= 0)
                    stop.insert(id.toInt());
        }
        return stop;
    }
    QByteArray text(const std::vector<int64_t>& answer) const override {
        return m_tok->decode(std::vector<int32_t>(answer.begin(), answer.end()), true);
    }

private:
    std::shared_ptr<const Tokenizer> m_tok;
    QString m_folder;
};

Expected<std::unique_ptr<Vocabulary>> vocabularyOf(const Loaded& l) {
    if (l.model.kind() == ModelKind::TorchScript)
        return std::unique_ptr<Vocabulary>(std::make_unique<Bytes>());
    if (!l.source.isHf())
        return makeError(ErrorCode::Incompatible,
                         QStringLiteral("the run's model has no Hugging Face folder to take its "
                                        "tokenizer from"));
    auto tok = Tokenizer::fromFolder(l.source.path);
    if (!tok)
        return tok.error();
    return std::unique_ptr<Vocabulary>(std::make_unique<HfVocabulary>(*tok, l.source.path));
}

// A byte-level model runs where it was trained to be tried, on the CPU; a transformer on the
// machine's best device, or the one asked for.
Status place(const Loaded& l, const GenerateOptions& o) {
    if (l.model.kind() == ModelKind::TorchScript)
        return success();
    auto device = chooseDevice(detectDevices(), o.device);
    if (!device)
        return device.error();
    try {
        l.model.to(c10::Device(device->torchDevice().toStdString()));
    } catch (const std::exception& e) {
        return makeError(
            ErrorCode::Runtime,
            QStringLiteral("cannot move the model to %1: %2").arg(device->name, firstLine(e)));
    }
    return success();
}

} // namespace

Status generate(const GenerateOptions& o, const std::function<bool(const QByteArray&)>& onText,
                GenerateStats* stats) {
    auto loaded = load(o);
    if (!loaded)
        return loaded.error();
    auto vocabulary = vocabularyOf(*loaded);
    if (!vocabulary)
        return vocabulary.error();
    const Vocabulary& v = **vocabulary;
    auto prompt = v.prompt(o);
    if (!prompt)
        return prompt.error();
    if (auto st = place(*loaded, o); !st)
        return st;
    loaded->model.eval();
    std::unique_ptr<GenerationSession> session = loaded->model.startGeneration(loaded->context);
    if (!session)
        return makeError(ErrorCode::Incompatible,
                         QStringLiteral("%1 does not generate text").arg(o.model));
    const int64_t limit = session->limit();
    if (limit > 0 && int64_t(prompt->size()) > limit)
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("the prompt is %1 tokens, more than the %2 the model "
                                        "reads at once; write a shorter one")
                             .arg(prompt->size())
                             .arg(limit));
    const std::set<int64_t> stops = v.stops();
    Sampler sampler(o.temperature, o.topP, o.seed);
    std::vector<int64_t> answer, next = *prompt;
    QByteArray sent;
    QElapsedTimer clock;
    clock.start();
    // However the loop ends: what it made, and in how long.
    const auto count = qScopeGuard([&] {
        if (stats)
            *stats = {int64_t(answer.size()), double(clock.nsecsElapsed()) / 1e9};
    });
    for (int n = 0; n < o.tokens && (limit == 0 || session->length() < limit); ++n) {
        auto logits = session->next(next);
        if (!logits)
            return makeError(logits.error().code,
                             QStringLiteral("%1: %2").arg(o.model, logits.error().message));
        if (!at::isfinite(*logits).all().item<bool>())
            return makeError(ErrorCode::Runtime,
                             QStringLiteral("the model's scores for the next token are not "
                                            "finite (NaN or infinity): its weights may have "
                                            "diverged"));
        const int64_t id = sampler.pick(*logits);
        if (stops.count(id))
            break;
        answer.push_back(id);
        next = {id};
        QByteArray text = v.text(answer);
        text.chop(incompleteTail(text));
        if (text.size() > sent.size() && text.startsWith(sent)) {
            const QByteArray piece = text.mid(sent.size());
            sent = text;
            if (!onText(piece))
                return success();
        }
    }
    // An answer cut off inside a character ends before it.
    QByteArray text = v.text(answer);
    text.chop(incompleteTail(text));
    if (text.size() > sent.size() && text.startsWith(sent))
        onText(text.mid(sent.size()));
    return success();
}

} // namespace tandem
