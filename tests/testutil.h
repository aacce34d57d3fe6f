#pragma once

// Helpers shared by the tests: writing small dataset files in the formats Tandem reads.

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QString>
#include <QtEndian>

#include <zlib.h>

#include <vector>

namespace testutil {

inline QByteArray idxBytes(const std::vector<quint32>& dims, const QByteArray& payload) {
    QByteArray b;
    b.append('\0').append('\0').append('\x08').append(char(dims.size()));
    for (quint32 d : dims) {
        char be[4];
        qToBigEndian<quint32>(d, be);
        b.append(be, 4);
    }
    return b + payload;
}

inline QByteArray gzipBytes(const QByteArray& raw) {
    z_stream zs{};
    deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    QByteArray out(int(deflateBound(&zs, uLong(raw.size()))) + 32, Qt::Uninitialized);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.constData()));
    zs.avail_in = uInt(raw.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = uInt(out.size());
    deflate(&zs, Z_FINISH);
    out.resize(qsizetype(zs.total_out));
    deflateEnd(&zs);
    return out;
}

inline bool writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

// A small IDX dataset: n images of rows x cols whose pixel values encode their label, so a
// model can learn it; `gz` gzips the files as the real distribution does.
inline void writeIdxDataset(const QString& dir, int nTrain, int nTest, bool gz, int rows = 28,
                            int cols = 28) {
    QDir().mkpath(dir);
    auto write = [&](const QString& prefix, int n) {
        QByteArray img, lbl;
        for (int i = 0; i < n; ++i) {
            const int label = i % 10;
            lbl.append(char(label));
            for (int p = 0; p < rows * cols; ++p)
                img.append(char((p % 10 == label) ? 200 + (i % 50) : (p * 7 + i) % 40));
        }
        const QString ext = gz ? QStringLiteral(".gz") : QString();
        QByteArray ib = idxBytes({quint32(n), quint32(rows), quint32(cols)}, img);
        QByteArray lb = idxBytes({quint32(n)}, lbl);
        writeFile(QDir(dir).filePath(prefix + QStringLiteral("-images-idx3-ubyte") + ext),
                  gz ? gzipBytes(ib) : ib);
        writeFile(QDir(dir).filePath(prefix + QStringLiteral("-labels-idx1-ubyte") + ext),
                  gz ? gzipBytes(lb) : lb);
    };
    write(QStringLiteral("train"), nTrain);
    write(QStringLiteral("t10k"), nTest);
}

} // namespace testutil
