// Generation with a Hugging Face model: its tokenizer, its chat template, a KV cache, and
// temperature and top-p sampling; the answer streams as UTF-8 while it is made.

#include "engine/hfgenerate.h"

#include "engine/devices.h"

#include "engine/hf/hfmodel.h"
#include "engine/hf/transformer.h"
#include "engine/modelcheck.h"
#include "formats/chattemplate.h"
#include "formats/tokenizer.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <limits>
#include <random>
#include <set>

namespace tandem {

namespace {

// The ids that end an answer: the tokenizer's EOS and those generation_config.json names.
std::set<int32_t> stopIds(const Tokenizer& tok, const QString& folder) {
    std::set<int32_t> stop;
    if (tok.eos() >= 0)
        stop.insert(tok.eos());
    QFile f(QDir(folder).filePath(QStringLiteral("generation_config.json")));
    if (f.open(QIODevice::ReadOnly)) {
        const QJsonValue v =
            QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("eos_token_id"));
        for (const auto& id : v.isArray() ? v.toArray() : QJsonArray{v})
            if (id.toInt(-1) >= 0)
                stop.insert(int32_t(id.toInt()));
    }
    return stop;
}

// The next token from the last position's logits: the likeliest at temperature 0, else a
// draw among the likeliest tokens whose probabilities reach topP, from our own generator so
// that a seed gives the same text everywhere.
int64_t sample(const at::Tensor& logits, double temperature, double topP, std::mt19937_64& rng) {
    if (temperature <= 0)
        return logits.argmax().item<int64_t>();
    const at::Tensor p = at::softmax(logits.to(at::kDouble).div(temperature), 0).contiguous();
    const double* prob = p.data_ptr<double>();
    std::vector<int64_t> order(size_t(p.numel()));
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = int64_t(i);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return prob[a] > prob[b] || (prob[a] == prob[b] && a < b);
    });
    double kept = 0;
    size_t n = 0;
    while (n < order.size() && (n == 0 || kept < topP))
        kept += prob[order[n++]];
    double u = double(rng() >> 11) * (1.0 / 9007199254740992.0) * kept;
    for (size_t i = 0; i < n; ++i) {
        u -= prob[order[i]];
        if (u < 0)
            return order[i];
    }
    return order[n - 1];
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

// The prompt's token ids: as text with the tokenizer's template, or with `chat` as one user
// message written with the chat template, the assistant's turn opened.
Expected<std::vector<int32_t>> promptIds(const Tokenizer& tok, const QString& folder,
                                         const GenerateOptions& o) {
    const QString prompt = QString::fromUtf8(o.prompt);
    if (!o.chat)
        return tok.encode(prompt, true);
    const QString source = tok.chatTemplate();
    if (source.isEmpty())
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("%1 has no chat_template in tokenizer_config.json; "
                                        "leave out --chat to continue the prompt as text")
                             .arg(folder));
    auto tmpl = ChatTemplate::parse(source, folder + QStringLiteral("/tokenizer_config.json"));
    if (!tmpl)
        return tmpl.error();
    auto text =
        tmpl->render({{QStringLiteral("user"), prompt}}, true, tok.bosToken(), tok.eosToken());
    if (!text)
        return text.error();
    return tok.encode(*text, false);
}

} // namespace

Status generateWithTokenizer(const GenerateOptions& o,
                             const std::function<bool(const QByteArray&)>& onText) {
    if (!o.model.startsWith(QLatin1String("hf:")))
        return generateText(o, onText); // a checkpoint: it says what built it
    auto m = openHfModel(o.model.mid(3), QString(), false, 0);
    if (!m)
        return m.error();
    return generateHf(*m, o.model.mid(3), o, onText);
}

Status generateHf(const Model& loaded, const QString& folder, const GenerateOptions& o,
                  const std::function<bool(const QByteArray&)>& onText) {
    const HfTransformer* model = loaded.transformer();
    if (!model)
        return makeError(ErrorCode::Incompatible,
                         QStringLiteral("%1 is not a Hugging Face model").arg(o.model));
    auto tok = Tokenizer::fromFolder(folder);
    if (!tok)
        return tok.error();
    auto device = chooseDevice(detectDevices(), o.device);
    if (!device)
        return device.error();
    const c10::Device on(device->torchDevice().toStdString());
    auto prompt = promptIds(**tok, folder, o);
    if (!prompt)
        return prompt.error();
    const std::vector<int32_t>& ids = *prompt;
    if (ids.empty())
        return makeError(ErrorCode::InvalidArgument,
                         QStringLiteral("the prompt gives no tokens; write a prompt"));
    const std::set<int32_t> stop = stopIds(**tok, folder);
    std::mt19937_64 rng(o.seed);
    at::NoGradGuard noGrad;
    loaded.eval();
    try {
        loaded.to(on);
    } catch (const std::exception& e) {
        return makeError(
            ErrorCode::Runtime,
            QStringLiteral("cannot move the model to %1: %2").arg(device->name, firstLine(e)));
    }
    HfTransformer::KvCache cache;
    std::vector<int32_t> answer;
    QByteArray sent;
    std::vector<int64_t> all(ids.begin(), ids.end());
    try {
        auto onDevice = [&](const std::vector<int64_t>& v) {
            return at::tensor(v, at::kLong).reshape({1, int64_t(v.size())}).to(on);
        };
        // The most tokens the model reads at once: GPT-2's positions, Mistral's window. The
        // answer ends there rather than failing.
        const HfConfig& c = model->config();
        const size_t limit = size_t(c.family == HfFamily::Gpt2 ? c.maxPositions
                                    : c.slidingWindow > 0      ? c.slidingWindow
                                                          : std::numeric_limits<int64_t>::max());
        if (all.size() > limit)
            return makeError(ErrorCode::InvalidArgument,
                             QStringLiteral("the prompt is %1 tokens, more than the %2 the model "
                                            "reads at once; write a shorter one")
                                 .arg(all.size())
                                 .arg(limit));
        at::Tensor next = onDevice(all);
        for (int n = 0; n < o.tokens && all.size() <= limit; ++n) {
            const at::Tensor logits =
                o.kvCache ? model->logits(next, cache) : model->logits(onDevice(all));
            const at::Tensor last = logits[0][logits.size(1) - 1].to(at::kFloat).cpu();
            if (!at::isfinite(last).all().item<bool>())
                return makeError(ErrorCode::Runtime,
                                 QStringLiteral("the model's scores for the next token are not "
                                                "finite (NaN or infinity): its weights may have "
                                                "diverged"));
            const int64_t id = sample(last, o.temperature, o.topP, rng);
            if (stop.count(int32_t(id)))
                break;
            answer.push_back(int32_t(id));
            all.push_back(id);
            next = onDevice({id});
            QByteArray text = (*tok)->decode(answer, true);
            text.chop(incompleteTail(text));
            if (text.size() > sent.size() && text.startsWith(sent)) {
                const QByteArray piece = text.mid(sent.size());
                sent = text;
                if (!onText(piece))
                    break;
            }
        }
    } catch (const std::invalid_argument& e) {
        return makeError(ErrorCode::InvalidArgument, QString::fromUtf8(e.what()));
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Runtime, firstLine(e));
    }
    const QByteArray text = (*tok)->decode(answer, true);
    if (text.size() > sent.size() && text.startsWith(sent))
        onText(text.mid(sent.size()));
    return success();
}

} // namespace tandem
