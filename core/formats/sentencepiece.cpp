// tokenizer.model read with protobuf's own wire reader (no generated code: only the few fields
// below are read, every other one is skipped), then written as the tokenizer.json that the rest
// of the tokenizer reads. Field numbers are those of SentencePiece's sentencepiece_model.proto.

#include "formats/sentencepiece.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace tandem {

namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

enum class PieceType {
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6
};

struct Piece {
    QString text;
    float score = 0;
    PieceType type = PieceType::Normal;
};

struct Model {
    std::vector<Piece> pieces;
    int modelType = 1; // TrainerSpec.model_type: 1 unigram (the proto's default), 2 BPE
    bool byteFallback = false;
    bool treatWhitespaceAsSuffix = false;
    int bosId = 1, eosId = 2, unkId = 0; // the proto's defaults
    QString normalizer;                  // NormalizerSpec.name
    bool precompiledCharsmap = false;
    bool addDummyPrefix = true;
    bool removeExtraWhitespaces = true;
    bool escapeWhitespaces = true;
};

struct Corrupt {};

uint32_t fieldOf(uint32_t tag) {
    return uint32_t(WireFormatLite::GetTagFieldNumber(tag));
}

bool wireType(uint32_t tag, WireFormatLite::WireType t) {
    return WireFormatLite::GetTagWireType(tag) == t;
}

uint64_t varint(CodedInputStream& in) {
    uint64_t v = 0;
    if (!in.ReadVarint64(&v))
        throw Corrupt{};
    return v;
}

QString text(CodedInputStream& in) {
    std::string s;
    if (!WireFormatLite::ReadString(&in, &s))
        throw Corrupt{};
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

void skip(CodedInputStream& in, uint32_t tag) {
    if (!WireFormatLite::SkipField(&in, tag))
        throw Corrupt{};
}

// Reads one embedded message, calling `field(tag)` for each of its fields; `field` returns
// false for a field it does not read, which is skipped.
template <typename F> void message(CodedInputStream& in, F&& field) {
    uint32_t length = 0;
    // A length past what is left is refused before anything is read under it.
    if (!in.ReadVarint32(&length) || int64_t(length) > in.BytesUntilLimit())
        throw Corrupt{};
    const auto limit = in.PushLimit(int(length));
    while (const uint32_t tag = in.ReadTag())
        if (!field(tag))
            skip(in, tag);
    if (!in.ConsumedEntireMessage())
        throw Corrupt{};
    in.PopLimit(limit);
}

Piece readPiece(CodedInputStream& in) {
    Piece p;
    message(in, [&](uint32_t tag) {
        switch (fieldOf(tag)) {
        case 1:
            p.text = text(in);
            return true;
        case 2: {
            uint32_t bits = 0;
            if (!wireType(tag, WireFormatLite::WIRETYPE_FIXED32) || !in.ReadLittleEndian32(&bits))
                throw Corrupt{};
            std::memcpy(&p.score, &bits, sizeof bits);
            return true;
        }
        case 3:
            p.type = PieceType(varint(in));
            return true;
        default:
            return false;
        }
    });
    return p;
}

void readTrainerSpec(CodedInputStream& in, Model& m) {
    message(in, [&](uint32_t tag) {
        if (!wireType(tag, WireFormatLite::WIRETYPE_VARINT))
            return false;
        switch (fieldOf(tag)) {
        case 3:
            m.modelType = int(varint(in));
            return true;
        case 24:
            m.treatWhitespaceAsSuffix = varint(in) != 0;
            return true;
        case 35:
            m.byteFallback = varint(in) != 0;
            return true;
        case 40:
            m.unkId = int(int32_t(varint(in)));
            return true;
        case 41:
            m.bosId = int(int32_t(varint(in)));
            return true;
        case 42:
            m.eosId = int(int32_t(varint(in)));
            return true;
        default:
            return false;
        }
    });
}

void readNormalizerSpec(CodedInputStream& in, Model& m) {
    message(in, [&](uint32_t tag) {
        switch (fieldOf(tag)) {
        case 1:
            m.normalizer = text(in);
            return true;
        case 2: {
            std::string charsmap;
            if (!WireFormatLite::ReadBytes(&in, &charsmap))
                throw Corrupt{};
            m.precompiledCharsmap = !charsmap.empty();
            return true;
        }
        case 3:
            m.addDummyPrefix = varint(in) != 0;
            return true;
        case 4:
            m.removeExtraWhitespaces = varint(in) != 0;
            return true;
        case 5:
            m.escapeWhitespaces = varint(in) != 0;
            return true;
        default:
            return false;
        }
    });
}

Model parse(const QByteArray& bytes) {
    Model m;
    CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.constData()), int(bytes.size()));
    in.PushLimit(int(bytes.size())); // so that every embedded length is checked against it
    while (const uint32_t tag = in.ReadTag()) {
        const bool embedded = wireType(tag, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
        if (embedded && fieldOf(tag) == 1)
            m.pieces.push_back(readPiece(in));
        else if (embedded && fieldOf(tag) == 2)
            readTrainerSpec(in, m);
        else if (embedded && fieldOf(tag) == 3)
            readNormalizerSpec(in, m);
        else
            skip(in, tag);
    }
    if (!in.ConsumedEntireMessage())
        throw Corrupt{};
    return m;
}

// What the tokenizer pipeline cannot do as SentencePiece does; empty when it can.
QString unsupported(const Model& m) {
    if (m.modelType != 2)
        return m.modelType == 1 ? QStringLiteral("it is a unigram model (only BPE models are read)")
                                : QStringLiteral("its model type %1 is not BPE").arg(m.modelType);
    if (m.precompiledCharsmap ||
        (!m.normalizer.isEmpty() && m.normalizer != QLatin1String("identity")))
        return QStringLiteral("its normalization rule \"%1\" is not implemented (identity is)")
            .arg(m.normalizer);
    if (m.removeExtraWhitespaces)
        return QStringLiteral("it removes extra whitespace (remove_extra_whitespaces), which is "
                              "not implemented");
    if (!m.escapeWhitespaces || m.treatWhitespaceAsSuffix)
        return QStringLiteral("it does not mark spaces as a \"▁\" prefix (escape_whitespaces, "
                              "treat_whitespace_as_suffix)");
    return {};
}

QJsonObject addedToken(int id, const QString& content, bool special) {
    return {{QStringLiteral("id"), id},
            {QStringLiteral("content"), content},
            {QStringLiteral("single_word"), false},
            {QStringLiteral("lstrip"), false},
            {QStringLiteral("rstrip"), false},
            {QStringLiteral("normalized"), false},
            {QStringLiteral("special"), special}};
}

// Each pair of pieces that makes a normal piece, the pieces that score highest first (and, for
// one piece, by the ids of its halves): the order SentencePiece's BPE merges them in.
QJsonArray mergesOf(const Model& m, const QHash<QString, int>& ids) {
    std::vector<int> order;
    for (int i = 0; i < int(m.pieces.size()); ++i)
        if (m.pieces[size_t(i)].type == PieceType::Normal)
            order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return m.pieces[size_t(a)].score > m.pieces[size_t(b)].score;
    });
    QJsonArray merges;
    for (int i : order) {
        const QString& piece = m.pieces[size_t(i)].text;
        std::vector<std::pair<int, int>> halves;
        for (qsizetype cut = 1; cut < piece.size(); ++cut) {
            if (piece.at(cut).isLowSurrogate())
                continue; // never inside a character
            const int l = ids.value(piece.left(cut), -1), r = ids.value(piece.mid(cut), -1);
            if (l >= 0 && r >= 0)
                halves.emplace_back(l, r);
        }
        std::sort(halves.begin(), halves.end());
        for (const auto& [l, r] : halves)
            merges.append(QJsonArray{m.pieces[size_t(l)].text, m.pieces[size_t(r)].text});
    }
    return merges;
}

QJsonObject step(const char* type, std::initializer_list<std::pair<QString, QJsonValue>> more) {
    QJsonObject o{{QStringLiteral("type"), QLatin1String(type)}};
    for (const auto& [k, v] : more)
        o.insert(k, v);
    return o;
}

QByteArray toTokenizerJson(const Model& m) {
    QJsonObject vocab;
    QHash<QString, int> ids;
    QJsonArray added;
    for (int i = 0; i < int(m.pieces.size()); ++i) {
        const Piece& p = m.pieces[size_t(i)];
        if (!ids.contains(p.text)) {
            ids.insert(p.text, i);
            vocab.insert(p.text, i);
        }
        if (p.type == PieceType::Unknown || p.type == PieceType::Control)
            added.append(addedToken(i, p.text, true));
        else if (p.type == PieceType::UserDefined)
            added.append(addedToken(i, p.text, false));
    }
    const QString space = QStringLiteral("\u2581");
    const QJsonObject toSpace = step(
        "Replace",
        {{QStringLiteral("pattern"), QJsonObject{{QStringLiteral("String"), QStringLiteral(" ")}}},
         {QStringLiteral("content"), space}});
    QJsonArray normalizers;
    if (m.addDummyPrefix)
        normalizers.append(step("Prepend", {{QStringLiteral("prepend"), space}}));
    normalizers.append(toSpace);
    QJsonArray decoders{step(
        "Replace", {{QStringLiteral("pattern"), QJsonObject{{QStringLiteral("String"), space}}},
                    {QStringLiteral("content"), QStringLiteral(" ")}})};
    if (m.byteFallback)
        decoders.append(step("ByteFallback", {}));
    decoders.append(step("Fuse", {}));
    if (m.addDummyPrefix)
        decoders.append(step("Strip", {{QStringLiteral("content"), QStringLiteral(" ")},
                                       {QStringLiteral("start"), 1},
                                       {QStringLiteral("stop"), 0}}));
    const bool unk = m.unkId >= 0 && m.unkId < int(m.pieces.size());
    QJsonObject model =
        step("BPE", {{QStringLiteral("vocab"), vocab},
                     {QStringLiteral("merges"), mergesOf(m, ids)},
                     {QStringLiteral("unk_token"),
                      unk ? QJsonValue(m.pieces[size_t(m.unkId)].text) : QJsonValue()},
                     {QStringLiteral("fuse_unk"), true},
                     {QStringLiteral("byte_fallback"), m.byteFallback}});
    QJsonObject t{
        {QStringLiteral("added_tokens"), added},
        {QStringLiteral("normalizer"),
         step("Sequence", {{QStringLiteral("normalizers"), normalizers}})},
        {QStringLiteral("pre_tokenizer"), QJsonValue()},
        {QStringLiteral("decoder"), step("Sequence", {{QStringLiteral("decoders"), decoders}})},
        {QStringLiteral("model"), model}};
    if (m.bosId >= 0 && m.bosId < int(m.pieces.size())) {
        const QString bos = m.pieces[size_t(m.bosId)].text;
        const QJsonObject special{
            {QStringLiteral("SpecialToken"),
             QJsonObject{{QStringLiteral("id"), bos}, {QStringLiteral("type_id"), 0}}}};
        const QJsonObject a{
            {QStringLiteral("Sequence"), QJsonObject{{QStringLiteral("id"), QStringLiteral("A")},
                                                     {QStringLiteral("type_id"), 0}}}};
        t.insert(
            QStringLiteral("post_processor"),
            step("TemplateProcessing",
                 {{QStringLiteral("single"), QJsonArray{special, a}},
                  {QStringLiteral("special_tokens"),
                   QJsonObject{{bos, QJsonObject{{QStringLiteral("id"), bos},
                                                 {QStringLiteral("ids"), QJsonArray{m.bosId}},
                                                 {QStringLiteral("tokens"), QJsonArray{bos}}}}}}}));
    }
    return QJsonDocument(t).toJson(QJsonDocument::Compact);
}

} // namespace

Expected<SentencePieceModel> readSentencePieceModel(const QByteArray& bytes, const QString& name) {
    if (bytes.size() > kMaxSentencePieceBytes)
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1 is %2 MB, more than a SentencePiece model holds")
                             .arg(name)
                             .arg(bytes.size() >> 20));
    Model m;
    try {
        m = parse(bytes);
    } catch (const Corrupt&) {
        return makeError(ErrorCode::Corrupt,
                         QStringLiteral("%1 is not a SentencePiece model (it does not read as "
                                        "sentencepiece.ModelProto)")
                             .arg(name));
    }
    if (m.pieces.empty())
        return makeError(
            ErrorCode::Corrupt,
            QStringLiteral("%1 holds no pieces: it is not a SentencePiece model").arg(name));
    if (const QString why = unsupported(m); !why.isEmpty())
        return makeError(ErrorCode::Unsupported, QStringLiteral("%1 cannot be used: %2; a "
                                                                "tokenizer.json written by "
                                                                "Hugging Face's tokenizers can be")
                                                     .arg(name, why));
    SentencePieceModel out;
    out.tokenizerJson = toTokenizerJson(m);
    auto piece = [&](int id) {
        return id >= 0 && id < int(m.pieces.size()) ? m.pieces[size_t(id)].text : QString();
    };
    out.bosPiece = piece(m.bosId);
    out.eosPiece = piece(m.eosId);
    return out;
}

} // namespace tandem
