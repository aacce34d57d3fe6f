#include "model/hf/lora.h"

namespace tandem {

namespace {

Error invalid(const QString& why) {
    return Error{ErrorCode::InvalidArgument, QStringLiteral("--lora: %1").arg(why)};
}

} // namespace

Expected<LoraConfig> parseLoraSpec(const QString& spec, const Family& family) {
    LoraConfig c;
    bool alphaGiven = false;
    bool inTargets = false;
    for (const QString& raw : spec.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QString item = raw.trimmed();
        const qsizetype eq = item.indexOf(QLatin1Char('='));
        if (eq < 0 && inTargets) {
            c.targets << item;
            continue;
        }
        if (eq < 0)
            return invalid(
                QStringLiteral("\"%1\" is not KEY=VALUE (r, alpha, dropout, base, targets)")
                    .arg(item));
        const QString key = item.left(eq), value = item.mid(eq + 1);
        inTargets = false;
        bool ok = false;
        if (key == QLatin1String("r")) {
            c.rank = value.toLongLong(&ok);
            if (!ok || c.rank < 1 || c.rank > 4096)
                return invalid(QStringLiteral("r must be a whole number from 1 to 4096"));
        } else if (key == QLatin1String("alpha")) {
            c.alpha = value.toDouble(&ok);
            alphaGiven = true;
            if (!ok || !(c.alpha > 0) || !std::isfinite(c.alpha))
                return invalid(QStringLiteral("alpha must be a positive number"));
        } else if (key == QLatin1String("dropout")) {
            c.dropout = value.toDouble(&ok);
            if (!ok || !(c.dropout >= 0 && c.dropout < 1))
                return invalid(QStringLiteral("dropout must be at least 0 and below 1"));
        } else if (key == QLatin1String("base")) {
            const QString v = value.toLower();
            if (v == QLatin1String("nf4"))
                c.base = BaseQuant::Nf4;
            else if (v == QLatin1String("int8"))
                c.base = BaseQuant::Int8;
            else if (v == QLatin1String("bf16") || v == QLatin1String("fp16") ||
                     v == QLatin1String("fp32"))
                c.base = BaseQuant::None;
            else
                return invalid(QStringLiteral("base must be nf4 (4 bits), int8 (8 bits) or bf16 "
                                              "(the folder's own dtype)"));
        } else if (key == QLatin1String("targets")) {
            inTargets = true;
            if (!value.isEmpty())
                c.targets << value;
        } else {
            return invalid(
                QStringLiteral("unknown key \"%1\" (r, alpha, dropout, base, targets)").arg(key));
        }
    }
    if (!alphaGiven)
        c.alpha = 2.0 * double(c.rank);
    if (c.targets.isEmpty())
        c.targets = family.defaultTargets;
    c.targets.removeDuplicates();
    for (const QString& t : c.targets)
        if (!family.loraTargets.contains(t))
            return invalid(QStringLiteral("\"%1\" is not a linear layer of %2; the layers "
                                          "adapters can target are %3")
                               .arg(t, QLatin1String(family.architecture),
                                    family.loraTargets.join(QStringLiteral(", "))));
    return c;
}

} // namespace tandem
