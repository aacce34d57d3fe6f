#pragma once

#include <QStringList>

// The command-line front end. Each returns the process exit code: 0 success, 1 the work
// failed (a bad file, a training error), 2 the command line itself was wrong.
namespace tandem::cli {

int run(const QStringList& args);

} // namespace tandem::cli
