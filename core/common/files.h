#pragma once

#include "common/expected.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

namespace tandem {

// Every file Tandem reads on a user's or a peer's say-so goes through here, so one rule holds
// for all of them: only regular files are read. A FIFO would block the reader forever, and a
// device such as /dev/zero reports a size of 0 while it yields bytes without end, so a cap
// checked against the reported size would never fire. The cap is therefore applied to the
// bytes actually read.

// Refuses anything that is not an existing regular file (after following links), naming it.
// Loaders that open files themselves (LibTorch's) call this first.
Status checkRegularFile(const QString& path);

// Reads a whole regular file of at most maxBytes.
Expected<QByteArray> readRegularFile(const QString& path, qint64 maxBytes);

// The error for a failed write of about `neededBytes` to `path`: when the volume is full it
// says so, with what was needed and what is free, instead of the platform's often empty text.
Error writeError(const QString& path, qint64 neededBytes, const QString& platformText);

// Bytes this process may still write on the volume that holds the existing folder `dir`; -1
// when that cannot be known. Asks the file system itself, so that it also answers in a chroot or
// container whose mount table does not list the volume.
qint64 freeBytesAt(const QString& dir);

// Reads a JSON object from a regular file of at most 1 MB. `what` names the file in errors
// ("run description …: no such file", "… is not a JSON object: …").
Expected<QJsonObject> readJsonObjectFile(const QString& path, const QString& what);

// Writes a whole file so that it is either the old one or the new one, never half of each
// (QSaveFile); a failure is worded by writeError. `failpoint` names the failpoint (failpoint.h)
// between writing and renaming.
Status writeFileAtomically(const QString& path, const QByteArray& bytes,
                           const char* failpoint = "file.write");

// Whole megabytes, rounded up, for messages ("needs about 5 MB").
qint64 megabytesCeil(qint64 bytes);

} // namespace tandem
