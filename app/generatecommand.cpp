// `tandem generate`: a trained language model continues a prompt (or answers it, --chat),
// printing the text as it is made and its speed at the end.

#include "app/cli.h"
#include "app/nodecommands.h"
#include "engine/generation.h"

#include <cstdio>
#include <type_traits>

namespace tandem::cli {

int cmdGenerate(const QStringList& args) {
    Parser p;
    const GenerateOptions defaults;
    auto opt = [&](const char* name, const QString& help, const char* valueName) {
        p.addOption({QLatin1String(name), help, QString::fromUtf8(valueName)});
    };
    opt("model",
        QStringLiteral("hf:DIR (a Hugging Face folder, a run's hf-model/ among them), a run "
                       "checkpoint, or a TorchScript file of a byte-level model."),
        "MODEL");
    opt("prompt", QStringLiteral("The text to continue, or with --chat the user's message."),
        "TEXT");
    p.addOption({QStringLiteral("chat"),
                 QStringLiteral("Hugging Face models: write the prompt with the model's chat "
                                "template and print the assistant's answer.")});
    opt("system", QStringLiteral("With --chat: a system message before the user's."), "TEXT");
    opt("tokens", QStringLiteral("How many tokens to add at most [%1].").arg(defaults.tokens), "N");
    opt("device", QStringLiteral("Hugging Face models: cuda:N, mps or cpu [this machine's best]."),
        "DEV");
    opt("top-p",
        QStringLiteral("Hugging Face models: sample among the likeliest tokens that make up "
                       "this much probability [1]."),
        "P");
    opt("temperature",
        QStringLiteral("0 takes the likeliest byte; above 0 samples [%1].")
            .arg(defaults.temperature),
        "T");
    opt("seed", QStringLiteral("Seed for sampling [0]."), "S");
    opt("context",
        QStringLiteral("Most bytes the model sees at once [the run's context=, or 256]."), "N");
    int exit = kOk;
    if (!parse(p, QStringLiteral("generate"), args,
               QStringLiteral("Continues a prompt with a trained language model, or answers it "
                              "(--chat), printing the text as it is made."),
               &exit))
        return exit;
    GenerateOptions o;
    o.model = p.value(QStringLiteral("model"));
    o.prompt = p.value(QStringLiteral("prompt")).toUtf8();
    o.chat = p.isSet(QStringLiteral("chat"));
    o.system = p.value(QStringLiteral("system"));
    if (!o.system.isEmpty() && !o.chat)
        return fail(makeError(ErrorCode::InvalidArgument,
                              QStringLiteral("--system is a chat's: add --chat")));
    o.device = p.value(QStringLiteral("device"));
    if (o.model.isEmpty())
        return fail(makeError(ErrorCode::InvalidArgument,
                              QStringLiteral("generate needs --model (hf:DIR, a "
                                             "checkpoint.tandem or a model.pt)")));
    bool ok = true;
    auto number = [&](const char* name, auto* out, double lo, double hi) {
        if (!p.isSet(QLatin1String(name)))
            return;
        bool good = false;
        const double v = p.value(QLatin1String(name)).toDouble(&good);
        if (!good || !(v >= lo && v <= hi)) {
            ok = false;
            printErr(QStringLiteral("--%1 takes a number from %2 to %3")
                         .arg(QLatin1String(name))
                         .arg(lo)
                         .arg(hi));
            return;
        }
        *out = static_cast<std::remove_pointer_t<decltype(out)>>(v);
    };
    number("tokens", &o.tokens, 0, 1e6);
    number("temperature", &o.temperature, 0, 100);
    number("top-p", &o.topP, 1e-6, 1);
    number("seed", &o.seed, 0, 9.0e15);
    number("context", &o.context, 1, 1 << 16);
    if (!ok)
        return kUsage;
    if (!o.chat)
        fputs(o.prompt.constData(), stdout);
    GenerateStats stats;
    const Status st = generate(
        o,
        [](const QByteArray& token) {
            fwrite(token.constData(), 1, size_t(token.size()), stdout);
            fflush(stdout);
            return true;
        },
        &stats);
    fputc('\n', stdout);
    if (!st)
        return fail(st.error());
    // The speed on stderr, apart from the text a script reads.
    printErr(QStringLiteral("%1 token(s) in %2 s, %3 tokens/s")
                 .arg(stats.tokens)
                 .arg(stats.seconds, 0, 'f', 2)
                 .arg(stats.tokensPerSecond(), 0, 'f', 1));
    return kOk;
}

} // namespace tandem::cli
