// Runs a fuzz target over every file of its seed corpus, with the ordinary compiler, so the
// corpus is replayed on every test run even where libFuzzer is not available. A crash or an
// abort fails the test; the last line counts the files.

#include <QDirIterator>
#include <QFile>

#include <cstdio>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR...\n", argv[0]);
        return 2;
    }
    int files = 0;
    for (int i = 1; i < argc; ++i) {
        QDirIterator it(QString::fromLocal8Bit(argv[i]), QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            QFile f(it.next());
            if (!f.open(QIODevice::ReadOnly)) {
                fprintf(stderr, "cannot read %s\n", qPrintable(f.fileName()));
                return 1;
            }
            const QByteArray b = f.readAll();
            LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(b.constData()),
                                   size_t(b.size()));
            ++files;
        }
    }
    if (files == 0) {
        fprintf(stderr, "no corpus files found\n");
        return 1;
    }
    printf("replayed %d corpus file(s)\n", files);
    return 0;
}
