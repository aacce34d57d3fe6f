#include "formats/gguf.h"

#include "common/failpoint.h"
#include "common/files.h"

#include <QSaveFile>
#include <QSet>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

namespace tandem {

namespace {

constexpr uint32_t kGgufMagic = 0x46554747; // "GGUF"
constexpr int kMaxDims = 4;                 // GGML_MAX_DIMS
constexpr int64_t kMaxElements = int64_t(1) << 50;

// Reads little-endian fields from the file, every read checked against what is left.
class Cursor {
public:
    Cursor(QByteArrayView b, const QString& name)
        : m_b(b)
        , m_name(name) {}

    qint64 pos() const { return m_pos; }
    qint64 left() const { return m_b.size() - m_pos; }
    bool failed() const { return m_error.has_value(); }
    const Error& error() const { return *m_error; }

    void fail(const QString& why) {
        if (!m_error)
            m_error =
                makeError(ErrorCode::Corrupt,
                          QStringLiteral("%1 is not a GGUF file Tandem can read: ").arg(m_name) +
                              why + QStringLiteral(" (byte %1)").arg(m_pos));
    }
    template <typename T> T read(const char* what) {
        T v{};
        if (failed())
            return v;
        if (left() < qint64(sizeof(T))) {
            fail(QStringLiteral("it ends inside %1").arg(QLatin1String(what)));
            return v;
        }
        std::memcpy(&v, m_b.data() + m_pos, sizeof(T));
        m_pos += sizeof(T);
        return v;
    }
    QByteArray string(const char* what) {
        const uint64_t n = read<uint64_t>(what);
        if (failed())
            return {};
        if (n > uint64_t(left())) {
            fail(QStringLiteral("%1 says it is %2 bytes long, more than the file holds")
                     .arg(QLatin1String(what))
                     .arg(n));
            return {};
        }
        QByteArray s(m_b.data() + m_pos, qsizetype(n));
        m_pos += qint64(n);
        return s;
    }

private:
    QByteArrayView m_b;
    QString m_name;
    qint64 m_pos = 0;
    std::optional<Error> m_error;
};

int scalarBytes(GgufValue::Type t) {
    using T = GgufValue::Type;
    switch (t) {
    case T::U8:
    case T::I8:
    case T::Bool:
        return 1;
    case T::U16:
    case T::I16:
        return 2;
    case T::U32:
    case T::I32:
    case T::F32:
        return 4;
    case T::U64:
    case T::I64:
    case T::F64:
        return 8;
    case T::String:
    case T::Array:
        break;
    }
    return 0;
}

// One scalar of type `t` into `v` (integer or real), or its string.
void readScalar(Cursor& c, GgufValue::Type t, int64_t* integer, double* real, QByteArray* text) {
    using T = GgufValue::Type;
    switch (t) {
    case T::U8:
        *integer = c.read<uint8_t>("a value");
        break;
    case T::I8:
        *integer = c.read<int8_t>("a value");
        break;
    case T::Bool:
        *integer = c.read<uint8_t>("a value") != 0;
        break;
    case T::U16:
        *integer = c.read<uint16_t>("a value");
        break;
    case T::I16:
        *integer = c.read<int16_t>("a value");
        break;
    case T::U32:
        *integer = c.read<uint32_t>("a value");
        break;
    case T::I32:
        *integer = c.read<int32_t>("a value");
        break;
    case T::U64:
        *integer = int64_t(c.read<uint64_t>("a value"));
        break;
    case T::I64:
        *integer = c.read<int64_t>("a value");
        break;
    case T::F32:
        *real = c.read<float>("a value");
        break;
    case T::F64:
        *real = c.read<double>("a value");
        break;
    case T::String:
        *text = c.string("a string value");
        break;
    case T::Array:
        break;
    }
}

bool knownValueType(uint32_t t) {
    return t <= uint32_t(GgufValue::Type::F64);
}

GgufValue readValue(Cursor& c, const QByteArray& key) {
    GgufValue v;
    const uint32_t type = c.read<uint32_t>("a value's type");
    if (c.failed())
        return v;
    if (!knownValueType(type)) {
        c.fail(QStringLiteral("the value of %1 has the unknown type %2")
                   .arg(QString::fromUtf8(key), QString::number(type)));
        return v;
    }
    v.type = GgufValue::Type(type);
    if (v.type != GgufValue::Type::Array) {
        readScalar(c, v.type, &v.integer, &v.real, &v.text);
        return v;
    }
    const uint32_t element = c.read<uint32_t>("an array's element type");
    const uint64_t count = c.read<uint64_t>("an array's length");
    if (c.failed())
        return v;
    if (!knownValueType(element) || GgufValue::Type(element) == GgufValue::Type::Array) {
        c.fail(QStringLiteral("the array %1 holds elements of type %2, which GGUF arrays of "
                              "Tandem's do not")
                   .arg(QString::fromUtf8(key), QString::number(element)));
        return v;
    }
    v.element = GgufValue::Type(element);
    // Each element takes at least its own bytes (a string its 8-byte length): a count the rest of
    // the file cannot hold is refused before anything is allocated for it.
    const int minBytes = v.element == GgufValue::Type::String ? 8 : scalarBytes(v.element);
    if (count > uint64_t(c.left() / minBytes)) {
        c.fail(QStringLiteral("the array %1 says it holds %2 elements, more than the file holds")
                   .arg(QString::fromUtf8(key), QString::number(count)));
        return v;
    }
    for (uint64_t i = 0; i < count && !c.failed(); ++i) {
        int64_t integer = 0;
        double real = 0;
        QByteArray text;
        readScalar(c, v.element, &integer, &real, &text);
        if (v.element == GgufValue::Type::String)
            v.strings.push_back(std::move(text));
        else if (v.element == GgufValue::Type::F32 || v.element == GgufValue::Type::F64)
            v.reals.push_back(real);
        else
            v.integers.push_back(integer);
    }
    return v;
}

void put(QByteArray& out, const void* p, size_t n) {
    out.append(static_cast<const char*>(p), qsizetype(n));
}
template <typename T> void put(QByteArray& out, T v) {
    put(out, &v, sizeof(T));
}
void putString(QByteArray& out, const QByteArray& s) {
    put(out, uint64_t(s.size()));
    out.append(s);
}

void putScalar(QByteArray& out, GgufValue::Type t, int64_t integer, double real,
               const QByteArray& text) {
    using T = GgufValue::Type;
    switch (t) {
    case T::U8:
        put(out, uint8_t(integer));
        break;
    case T::I8:
        put(out, int8_t(integer));
        break;
    case T::Bool:
        put(out, uint8_t(integer != 0));
        break;
    case T::U16:
        put(out, uint16_t(integer));
        break;
    case T::I16:
        put(out, int16_t(integer));
        break;
    case T::U32:
        put(out, uint32_t(integer));
        break;
    case T::I32:
        put(out, int32_t(integer));
        break;
    case T::U64:
        put(out, uint64_t(integer));
        break;
    case T::I64:
        put(out, int64_t(integer));
        break;
    case T::F32:
        put(out, float(real));
        break;
    case T::F64:
        put(out, real);
        break;
    case T::String:
        putString(out, text);
        break;
    case T::Array:
        break;
    }
}

void putValue(QByteArray& out, const GgufValue& v) {
    put(out, uint32_t(v.type));
    if (v.type != GgufValue::Type::Array) {
        putScalar(out, v.type, v.integer, v.real, v.text);
        return;
    }
    put(out, uint32_t(v.element));
    put(out, uint64_t(v.arraySize()));
    for (const QByteArray& s : v.strings)
        putString(out, s);
    for (int64_t i : v.integers)
        putScalar(out, v.element, i, 0, {});
    for (double r : v.reals)
        putScalar(out, v.element, 0, r, {});
}

int64_t padTo(int64_t n, int64_t alignment) {
    return (n + alignment - 1) / alignment * alignment;
}

} // namespace

namespace {

GgufValue scalarValue(GgufValue::Type type, int64_t integer, double real = 0) {
    GgufValue g;
    g.type = type;
    g.integer = integer;
    g.real = real;
    return g;
}

GgufValue arrayValue(GgufValue::Type element) {
    GgufValue g;
    g.type = GgufValue::Type::Array;
    g.element = element;
    return g;
}

} // namespace

GgufValue GgufValue::u32(uint32_t v) {
    return scalarValue(Type::U32, v);
}
GgufValue GgufValue::f32(float v) {
    return scalarValue(Type::F32, 0, v);
}
GgufValue GgufValue::boolean(bool v) {
    return scalarValue(Type::Bool, v);
}
GgufValue GgufValue::string(const QString& v) {
    GgufValue g = scalarValue(Type::String, 0);
    g.text = v.toUtf8();
    return g;
}
GgufValue GgufValue::stringArray(std::vector<QByteArray> v) {
    GgufValue g = arrayValue(Type::String);
    g.strings = std::move(v);
    return g;
}
GgufValue GgufValue::i32Array(std::vector<int64_t> v) {
    GgufValue g = arrayValue(Type::I32);
    g.integers = std::move(v);
    return g;
}

GgufValue GgufValue::f32Array(std::vector<double> v) {
    GgufValue g = arrayValue(Type::F32);
    g.reals = std::move(v);
    return g;
}

int64_t GgufValue::arraySize() const {
    return int64_t(strings.size() + integers.size() + reals.size());
}

int64_t GgufTensor::elements() const {
    int64_t n = 1;
    for (int64_t d : ne)
        n *= d;
    return n;
}

int64_t GgufTensor::bytes() const {
    const int64_t block = ggmlBlockElements(type);
    if (block == 0 || ne.empty() || ne[0] % block != 0)
        return -1;
    return elements() / block * ggmlBlockBytes(type);
}

const GgufValue* GgufFile::find(const char* key) const {
    for (const auto& [k, v] : metadata)
        if (k == key)
            return &v;
    return nullptr;
}

const GgufTensor* GgufFile::tensor(const QByteArray& name) const {
    for (const GgufTensor& t : tensors)
        if (t.name == name)
            return &t;
    return nullptr;
}

// ---- reading -----------------------------------------------------------------------------------

namespace {

// The metadata's `count` keys, each once, and the alignment they set.
void readMetadata(Cursor& c, uint64_t count, GgufFile* g) {
    QSet<QByteArray> keys; // duplicates are refused, in time linear in their number
    for (uint64_t i = 0; i < count && !c.failed(); ++i) {
        QByteArray key = c.string("a metadata key");
        GgufValue v = readValue(c, key);
        if (c.failed())
            break;
        if (keys.contains(key))
            c.fail(QStringLiteral("the key %1 appears twice").arg(QString::fromUtf8(key)));
        keys.insert(key);
        g->metadata.emplace_back(std::move(key), std::move(v));
    }
    if (const GgufValue* a = g->find("general.alignment"); a && !c.failed()) {
        if (a->type != GgufValue::Type::U32 || a->integer <= 0 || a->integer > (1 << 20) ||
            (a->integer & (a->integer - 1)) != 0)
            c.fail(QStringLiteral("general.alignment must be a power of two"));
        else
            g->alignment = a->integer;
    }
}

// The tensors lie one after another, each at the next aligned offset, as llama.cpp requires:
// none overlaps another or runs past the end of the file's `size` bytes.
Status checkLayout(const GgufFile& g, qsizetype size, const QString& name) {
    uint64_t expected = 0;
    for (const GgufTensor& t : g.tensors) {
        if (t.offset != expected)
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1: tensor %2 starts at offset %3 of the data; the "
                                            "one before it ends at %4")
                                 .arg(name, QString::fromUtf8(t.name), QString::number(t.offset),
                                      QString::number(expected)));
        expected = uint64_t(padTo(int64_t(t.offset) + t.bytes(), g.alignment));
    }
    if (!g.tensors.empty()) {
        const GgufTensor& last = g.tensors.back();
        if (g.dataOffset + int64_t(last.offset) + last.bytes() > size)
            return makeError(ErrorCode::Corrupt,
                             QStringLiteral("%1 is cut short: its tensors need %2 bytes, the file "
                                            "has %3")
                                 .arg(name)
                                 .arg(g.dataOffset + int64_t(last.offset) + last.bytes())
                                 .arg(size));
    }
    return success();
}

} // namespace

Expected<GgufFile> parseGguf(QByteArrayView file, const QString& name) {
    Cursor c(file, name);
    GgufFile g;
    if (c.read<uint32_t>("the magic") != kGgufMagic || c.failed()) {
        return makeError(
            ErrorCode::Corrupt,
            QStringLiteral("%1 is not a GGUF file (it does not start with \"GGUF\")").arg(name));
    }
    g.version = c.read<uint32_t>("the version");
    if (!c.failed() && (g.version < 2 || g.version > 3))
        return makeError(ErrorCode::Unsupported,
                         QStringLiteral("%1 is GGUF version %2; Tandem reads versions 2 and 3")
                             .arg(name)
                             .arg(g.version));
    const uint64_t tensorCount = c.read<uint64_t>("the tensor count");
    const uint64_t metaCount = c.read<uint64_t>("the metadata count");
    // A key takes at least 12 bytes, a tensor's entry at least 32.
    if (!c.failed() &&
        (metaCount > uint64_t(c.left() / 12) || tensorCount > uint64_t(c.left() / 32)))
        c.fail(QStringLiteral("it says it holds %1 metadata keys and %2 tensors, more than the "
                              "file has room for")
                   .arg(metaCount)
                   .arg(tensorCount));
    readMetadata(c, metaCount, &g);
    QSet<QByteArray> names; // duplicates are refused, in time linear in their number
    for (uint64_t i = 0; i < tensorCount && !c.failed(); ++i) {
        GgufTensor t;
        t.name = c.string("a tensor's name");
        const uint32_t dims = c.read<uint32_t>("a tensor's dimension count");
        if (!c.failed() && (dims < 1 || dims > kMaxDims)) {
            c.fail(QStringLiteral("tensor %1 has %2 dimensions; ggml allows 1 to 4")
                       .arg(QString::fromUtf8(t.name), QString::number(dims)));
            break;
        }
        int64_t elements = 1;
        for (uint32_t d = 0; d < dims && !c.failed(); ++d) {
            const int64_t n = c.read<int64_t>("a tensor's dimension");
            if (n < 1 || n > kMaxElements || elements > kMaxElements / n) {
                c.fail(QStringLiteral("tensor %1 has a dimension of %2")
                           .arg(QString::fromUtf8(t.name), QString::number(n)));
                break;
            }
            elements *= n;
            t.ne.push_back(n);
        }
        const uint32_t type = c.read<uint32_t>("a tensor's type");
        t.offset = c.read<uint64_t>("a tensor's offset");
        if (c.failed())
            break;
        if (!ggmlTypeKnown(type)) {
            return makeError(
                ErrorCode::Unsupported,
                QStringLiteral("%1: tensor %2 is of ggml type %3, which Tandem does "
                               "not read (F32, F16, BF16, Q8_0, Q5_0, Q5_1, Q4_K, Q5_K "
                               "and Q6_K it does)")
                    .arg(name, QString::fromUtf8(t.name), QString::number(type)));
        }
        t.type = GgmlType(type);
        if (t.bytes() < 0)
            c.fail(QStringLiteral("tensor %1's rows of %2 are not whole %3 blocks")
                       .arg(QString::fromUtf8(t.name), QString::number(t.ne[0]),
                            ggmlTypeName(t.type)));
        if (names.contains(t.name))
            c.fail(QStringLiteral("the tensor %1 appears twice").arg(QString::fromUtf8(t.name)));
        names.insert(t.name);
        g.tensors.push_back(std::move(t));
    }
    if (c.failed())
        return c.error();
    g.dataOffset = padTo(c.pos(), g.alignment);
    if (auto st = checkLayout(g, file.size(), name); !st)
        return st.error();
    return g;
}

// ---- writing -----------------------------------------------------------------------------------

namespace {

constexpr int64_t kAlign = 32;

// The header of a file holding `tensors` (their offsets worked out here), padded to the data;
// `dataBytes` receives the data section's size. Empty when a tensor has no whole blocks.
QByteArray headerOf(const GgufMetadata& metadata, std::vector<GgufTensor>& tensors,
                    int64_t* dataBytes, QString* error) {
    QByteArray header;
    put(header, kGgufMagic);
    put(header, uint32_t(3));
    put(header, uint64_t(tensors.size()));
    put(header, uint64_t(metadata.size()));
    for (const auto& [key, value] : metadata) {
        putString(header, key);
        putValue(header, value);
    }
    int64_t offset = 0;
    for (GgufTensor& t : tensors) {
        if (t.bytes() < 0) {
            *error = QStringLiteral("tensor %1's rows of %2 are not whole %3 blocks")
                         .arg(QString::fromUtf8(t.name),
                              QString::number(t.ne.empty() ? 0 : t.ne[0]), ggmlTypeName(t.type));
            return {};
        }
        t.offset = uint64_t(offset);
        offset = padTo(offset + t.bytes(), kAlign);
        putString(header, t.name);
        put(header, uint32_t(t.ne.size()));
        for (int64_t d : t.ne)
            put(header, uint64_t(d));
        put(header, uint32_t(t.type));
        put(header, t.offset);
    }
    header.append(QByteArray(padTo(header.size(), kAlign) - header.size(), '\0'));
    *dataBytes = offset;
    return header;
}

} // namespace

int64_t ggufFileBytes(const GgufMetadata& metadata, std::vector<GgufTensor> tensors) {
    int64_t data = 0;
    QString error;
    const QByteArray header = headerOf(metadata, tensors, &data, &error);
    return header.isEmpty() ? -1 : header.size() + data;
}

Status writeGguf(const QString& path, const GgufMetadata& metadata, std::vector<GgufTensor> tensors,
                 const std::function<Expected<QByteArray>(size_t)>& bytesOf,
                 const std::function<void(int64_t, int64_t)>& progress) {
    int64_t data = 0;
    QString error;
    const QByteArray header = headerOf(metadata, tensors, &data, &error);
    if (header.isEmpty())
        return makeError(ErrorCode::InvalidArgument, error);
    const int64_t total = header.size() + data;

    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return writeError(path, total, f.errorString());
    if (f.write(header) != header.size())
        return writeError(path, total, f.errorString());
    int64_t written = header.size();
    for (size_t i = 0; i < tensors.size(); ++i) {
        const GgufTensor& t = tensors[i];
        auto bytes = bytesOf(i);
        if (!bytes) {
            f.cancelWriting();
            return bytes.error();
        }
        if (bytes->size() != t.bytes()) {
            f.cancelWriting();
            return makeError(ErrorCode::Runtime,
                             QStringLiteral("tensor %1 came to %2 bytes, not %3")
                                 .arg(QString::fromUtf8(t.name), QString::number(bytes->size()),
                                      QString::number(t.bytes())));
        }
        const QByteArray pad(padTo(bytes->size(), kAlign) - bytes->size(), '\0');
        if (f.write(*bytes) != bytes->size() ||
            (i + 1 < tensors.size() && f.write(pad) != pad.size()))
            return writeError(path, total, f.errorString());
        written += bytes->size() + (i + 1 < tensors.size() ? pad.size() : 0);
        if (progress)
            progress(written, total);
    }
    if (TANDEM_FAILPOINT("gguf.write"))
        return writeError(path, total, QStringLiteral("failpoint gguf.write"));
    if (!f.commit())
        return writeError(path, total, f.errorString());
    return success();
}

} // namespace tandem
