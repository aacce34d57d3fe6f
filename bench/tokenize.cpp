// Tokenisation throughput: a text file through a tokenizer.json, as `--data text:FILE` with a
// Hugging Face model reads it, the first time (tokenised, then cached) and the second (read from
// the cache). TANDEM_TOKEN_CACHE should name an empty folder. Prints one JSON line.
//
//   bench_tokenize TOKENIZER_DIR FILE
#include "formats/dataset.h"
#include "formats/tokenstream.h"

#include <QElapsedTimer>
#include <QFileInfo>

#include <cstdio>

using namespace tandem;

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fputs("usage: bench_tokenize TOKENIZER_DIR FILE\n", stderr);
        return 2;
    }
    const QString dir = QString::fromLocal8Bit(argv[1]);
    const QString file = QString::fromLocal8Bit(argv[2]);
    const double mb = double(QFileInfo(file).size()) / 1e6;
    double seconds[2] = {0, 0};
    int64_t tokens = 0;
    for (int pass = 0; pass < 2; ++pass) {
        QElapsedTimer clock;
        clock.start();
        auto data = loadDataset(QStringLiteral("text:%1,context=512").arg(file), dir);
        if (!data) {
            std::fprintf(stderr, "%s\n", qPrintable(data.error().message));
            return 1;
        }
        seconds[pass] = double(clock.nsecsElapsed()) / 1e9;
        tokens = data->train.stream->size() + data->test.stream->size();
    }
    std::printf("{\"tokenizer\": \"%s\", \"mb\": %.1f, \"tokens\": %lld, \"first_s\": %.2f, "
                "\"mb_per_s\": %.2f, \"cached_s\": %.2f}\n",
                qPrintable(QFileInfo(dir).fileName()), mb, (long long)tokens, seconds[0],
                mb / seconds[0], seconds[1]);
    return 0;
}
