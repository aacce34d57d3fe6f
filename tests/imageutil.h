#pragma once

// Writing image folders for the images: data tests (needs Qt's GUI library for QImage).

#include <QDir>
#include <QImage>
#include <QString>

namespace testutil {

// A folder of images for images: data, one subfolder per class ("red", "green", "blue"), each
// image mostly its class's colour with noise, alternately PNG and JPEG, of varied sizes.
inline bool writeImageFolder(const QString& dir, int perClass, unsigned seed = 1) {
    const char* names[] = {"red", "green", "blue"};
    unsigned state = seed;
    auto next = [&] {
        state = state * 1103515245u + 12345u;
        return (state >> 16) & 0x7fff;
    };
    for (int c = 0; c < 3; ++c) {
        const QString sub = QDir(dir).filePath(QLatin1String(names[c]));
        QDir().mkpath(sub);
        for (int i = 0; i < perClass; ++i) {
            QImage img(24 + int(next() % 20), 24 + int(next() % 20), QImage::Format_RGB888);
            for (int y = 0; y < img.height(); ++y)
                for (int x = 0; x < img.width(); ++x) {
                    int rgb[3] = {int(next() % 90), int(next() % 90), int(next() % 90)};
                    rgb[c] += 150;
                    img.setPixel(x, y, qRgb(rgb[0], rgb[1], rgb[2]));
                }
            const bool png = i % 2 == 0;
            const QString file = QDir(sub).filePath(QStringLiteral("%1.%2").arg(i).arg(
                png ? QStringLiteral("png") : QStringLiteral("jpg")));
            if (!img.save(file, png ? "PNG" : "JPEG"))
                return false;
        }
    }
    return true;
}

} // namespace testutil
