#pragma once

// Where a run's files go and what a resumed run keeps. The command line and the app both ask
// here, so a run started in one resumes in the other the same way.

#include "common/expected.h"
#include "engine/training.h"

#include <QDateTime>
#include <QString>

namespace tandem {

struct RunPlan {
    // A new run's folder: PARENT/yyyyMMdd-HHmmss-MODEL (MODEL: the zoo name or the file's base
    // name), with ~2, ~3, ... appended when that folder exists already.
    static QString newRunFolder(const QString& parent, const QString& model,
                                const QDateTime& when = QDateTime::currentDateTime());

    // The configuration that continues the run saved in `checkpoint`: as it was set up, with
    // its files going on in the checkpoint's folder and without the step limit, which belongs
    // to the run that set it.
    static Expected<RunConfig> resumeConfig(const QString& checkpoint);

    // Forgets where the run met its workers and which device it used. The command line does
    // this on resume: those are the new invocation's to say.
    static void forgetMachines(RunConfig& config);

    // The options a resumed run cannot change (by their command-line names).
    static QStringList fixedOnResume();
};

} // namespace tandem
