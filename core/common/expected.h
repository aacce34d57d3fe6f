#pragma once

#include <QString>

#include <optional>
#include <utility>
#include <variant>

namespace tandem {

// Foreseeable failures travel as values. The code lets callers (and tests) branch on the kind
// of failure; the message is what a person reads, so it names the file, field or peer involved
// and, where there is one, what to do about it.
enum class ErrorCode {
    InvalidArgument, // a user-supplied option or value is wrong
    NotFound,        // a file, folder or name does not exist
    Io,              // reading or writing failed
    Corrupt,         // a file or message is malformed, truncated or fails its checksum
    Unsupported,     // a valid input that this build cannot handle
    Incompatible,    // versions, schemas or shapes that do not fit together
    Runtime,         // the training backend reported an error
    Cancelled,       // the user or the peer stopped the operation
    OutOfMemory,     // a device ran out of memory, even after retrying in smaller parts
};

// What a failure is about, where the code alone does not say: a corrupt dataset and a
// corrupt model need different advice.
enum class ErrorSubject { None, Dataset, Model, Peer };

struct Error {
    ErrorCode code = ErrorCode::Runtime;
    QString message;
    ErrorSubject subject = ErrorSubject::None;
};

// The codes and subjects by name, for machine-readable output ("out-of-memory", "dataset").
inline QString errorCodeName(ErrorCode c) {
    switch (c) {
    case ErrorCode::InvalidArgument:
        return QStringLiteral("invalid-argument");
    case ErrorCode::NotFound:
        return QStringLiteral("not-found");
    case ErrorCode::Io:
        return QStringLiteral("io");
    case ErrorCode::Corrupt:
        return QStringLiteral("corrupt");
    case ErrorCode::Unsupported:
        return QStringLiteral("unsupported");
    case ErrorCode::Incompatible:
        return QStringLiteral("incompatible");
    case ErrorCode::Runtime:
        return QStringLiteral("runtime");
    case ErrorCode::Cancelled:
        return QStringLiteral("cancelled");
    case ErrorCode::OutOfMemory:
        return QStringLiteral("out-of-memory");
    }
    return {};
}

inline QString errorSubjectName(ErrorSubject s) {
    switch (s) {
    case ErrorSubject::None:
        return QString();
    case ErrorSubject::Dataset:
        return QStringLiteral("dataset");
    case ErrorSubject::Model:
        return QStringLiteral("model");
    case ErrorSubject::Peer:
        return QStringLiteral("peer");
    }
    return {};
}

// `e`, marked as being about `subject` unless it already says what it is about.
inline Error about(Error e, ErrorSubject subject) {
    if (e.subject == ErrorSubject::None)
        e.subject = subject;
    return e;
}

inline Error makeError(ErrorCode code, QString message) {
    return Error{code, std::move(message)};
}

template <typename T> class [[nodiscard]] Expected {
public:
    Expected(T value)
        : m_v(std::move(value)) {}
    Expected(Error error)
        : m_v(std::move(error)) {}

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<0>(m_v); }
    const T& value() const& { return std::get<0>(m_v); }
    T&& value() && { return std::get<0>(std::move(m_v)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { return std::get<1>(m_v); }

private:
    std::variant<T, Error> m_v;
};

// Expected<void>: success carries nothing.
struct Ok {};
using Status = Expected<Ok>;
inline Status success() {
    return Ok{};
}

} // namespace tandem
