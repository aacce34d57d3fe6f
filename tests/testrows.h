#pragma once

// Which of a test's rows a run takes (docs/testing.md, "Where a test runs"). A few tests have
// base rows, which the README's test command runs, and long rows, which the Debian 13 stage runs
// through the test's `_long` entry in CTest (label extended):
//   TANDEM_TEST_ROWS unset   the base rows
//   TANDEM_TEST_ROWS=long    the long rows alone (Debian 13: the README's command took the others)
//   TANDEM_TEST_ROWS=all     both

#include <QByteArray>
#include <QtGlobal>

namespace testrows {

inline QByteArray mode() {
    return qgetenv("TANDEM_TEST_ROWS");
}
inline bool base() {
    return mode() != "long";
}
inline bool longOnes() {
    const QByteArray m = mode();
    return m == "long" || m == "all";
}

} // namespace testrows

// At the top of a long test function.
#define TANDEM_LONG_RUN()                                                                          \
    do {                                                                                           \
        if (!testrows::longOnes())                                                                 \
            QSKIP("a long run, taken where TANDEM_TEST_ROWS is long or all (the Debian 13 stage, " \
                  "packaging/check-debian13.sh)");                                                 \
    } while (false)
