#pragma once

// Where the build keeps what the tests run and read: the tandem binary, the Python references,
// the npm packages. The paths are known when the build is configured and live in one generated
// source file (tests/CMakeLists.txt), so that no test's own compiled code holds a path of this
// checkout and a fresh clone reuses the compile cache.

#include <QString>

namespace testpaths {

QString binary();    // the tandem executable
QString python();    // a Python 3 interpreter, or empty where the build found none
QString pythonDir(); // tests/python
QString dataDir();   // tests/data
QString npmDir();    // the build's npm packages (tests/npm)
QString sourceDir(); // the project's root
QString relay();     // bench/linkrelay.py
QString tsDir();     // translations

} // namespace testpaths
