#include "engine/generation.h"

#include "engine/hfgenerate.h"

#include "engine/modelcheck.h"
#include "engine/runcheckpoint.h"
#include "engine/scriptmodel.h"
#include "formats/tensorfile.h"

#include <QFile>
#include <QRegularExpression>

#include <random>

namespace tandem {

namespace {

constexpr int kDefaultContext = 256;
constexpr int64_t kByteVocabulary = 256;

bool isCheckpoint(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) && f.read(8) == QByteArrayLiteral("TANDEMCK");
}

// The context a run cut its data into: "context=N" in its data spec, else the default.
int contextOf(const QString& dataSpec) {
    static const QRegularExpression re(QStringLiteral("[,:]context=(\\d+)"));
    const auto m = re.match(dataSpec);
    return m.hasMatch() ? m.captured(1).toInt() : kDefaultContext;
}

struct Loaded {
    Model module;
    int context = kDefaultContext;
    QString hfFolder; // a Hugging Face run's model folder: its tokenizer
};

Expected<Loaded> loadForGeneration(const QString& model) {
    Loaded out;
    if (isZooModel(model)) {
        auto m = buildZooModel(model, 0);
        if (!m)
            return m.error();
        out.module = *m;
    } else if (isCheckpoint(model)) {
        auto c = loadRunCheckpoint(model);
        if (!c)
            return c.error();
        out.module = c->module;
        out.context = contextOf(c->state.config.data);
        out.hfFolder = hfFolderOf(c->state.config.model);
    } else {
        auto m = loadScriptModule(model);
        if (!m)
            return m.error();
        out.module = *m;
    }
    return out;
}

// The next token from the last position's logits.
int64_t pick(const at::Tensor& logits, double temperature, std::mt19937_64& rng) {
    if (temperature <= 0)
        return logits.argmax().item<int64_t>();
    const at::Tensor p = at::softmax(logits.to(at::kDouble).div(temperature), 0).contiguous();
    const double* prob = p.data_ptr<double>();
    // Our own draw from the generator, so that a seed gives the same text on every platform.
    const double u = double(rng() >> 11) * (1.0 / 9007199254740992.0);
    double acc = 0;
    for (int64_t i = 0; i < p.numel(); ++i) {
        acc += prob[i];
        if (u < acc)
            return i;
    }
    return p.numel() - 1;
}

} // namespace

Status generateText(const GenerateOptions& o,
                    const std::function<bool(const QByteArray&)>& onToken) {
    if (o.model.startsWith(QLatin1String("hf:")))
        return generateWithTokenizer(o, onToken);
    auto loaded = loadForGeneration(o.model);
    if (!loaded)
        return loaded.error();
    const Model& m = loaded->module;
    if (m.transformer())
        return generateHf(m, loaded->hfFolder, o, onToken);
    const int context = o.context > 0 ? o.context : loaded->context;
    std::vector<int64_t> ids;
    for (char c : o.prompt)
        ids.push_back(int64_t(uchar(c)));
    if (ids.empty())
        ids.push_back(int64_t('\n')); // something to start from
    std::mt19937_64 rng(o.seed);
    at::NoGradGuard noGrad;
    m.eval();
    for (int n = 0; n < o.tokens; ++n) {
        const size_t from = ids.size() > size_t(context) ? ids.size() - size_t(context) : 0;
        const std::vector<int64_t> window(ids.begin() + long(from), ids.end());
        at::Tensor logits;
        try {
            logits = m.forward(at::tensor(window, at::kLong).reshape({1, int64_t(window.size())}));
        } catch (const NotOneTensor&) {
            logits = at::Tensor();
        } catch (const std::exception& e) {
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("%1 is not a byte-level language model: it fails on "
                                            "[1, %2] token ids: %3")
                                 .arg(o.model)
                                 .arg(window.size())
                                 .arg(firstLine(e)));
        }
        if (!logits.defined() || logits.dim() != 3 || logits.size(0) != 1 ||
            logits.size(1) != int64_t(window.size()) || logits.size(2) < kByteVocabulary)
            return makeError(ErrorCode::Incompatible,
                             QStringLiteral("%1 is not a byte-level language model: it must "
                                            "return [1, T, 256] next-byte logits for [1, T] "
                                            "ids")
                                 .arg(o.model));
        const int64_t next =
            pick(logits[0][logits.size(1) - 1].slice(0, 0, kByteVocabulary), o.temperature, rng);
        ids.push_back(next);
        if (!onToken(QByteArray(1, char(next))))
            break;
    }
    return success();
}

} // namespace tandem
