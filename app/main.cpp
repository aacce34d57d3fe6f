#include "app/commands.h"
#include "ui/gui.h"

#include "common/failpoint.h"
#include "common/memory.h"
#include "common/version.h"

#include <QApplication>
#include <QCoreApplication>
#include <QLoggingCategory>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace {

// `tandem`, `tandem gui` and `tandem --lang CODE` (with --home) open the app; anything else is
// a command-line subcommand.
bool wantsGui(int argc, char** argv, tandem::ui::GuiOptions* o) {
    int i = 1;
    if (i < argc && std::strcmp(argv[i], "gui") == 0)
        ++i;
    for (; i < argc; ++i) {
        const bool lang = std::strcmp(argv[i], "--lang") == 0;
        const bool home = std::strcmp(argv[i], "--home") == 0;
        if ((lang || home) && i + 1 < argc) {
            (lang ? o->language : o->home) = QString::fromLocal8Bit(argv[++i]);
            continue;
        }
        if (std::strncmp(argv[i], "--lang=", 7) == 0) {
            o->language = QString::fromLocal8Bit(argv[i] + 7);
            continue;
        }
        if (std::strncmp(argv[i], "--home=", 7) == 0) {
            o->home = QString::fromLocal8Bit(argv[i] + 7);
            continue;
        }
        return false;
    }
    return true;
}

// `tandem gui` with anything wantsGui does not take: its help for --help, otherwise what was
// not understood. Returns the exit code.
int guiCommandLine(int argc, char** argv) {
    for (int i = 2; i < argc; ++i)
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            std::fputs("Usage: tandem [gui] [--lang CODE] [--home DIR]\n"
                       "\n"
                       "Opens the Tandem app: pair your machines, start and watch runs, export\n"
                       "models. Without a display, see 'tandem serve --help' and\n"
                       "'tandem train --help'.\n"
                       "\n"
                       "Options:\n"
                       "  --lang CODE\n"
                       "      The app's language: en, de, fr, zh_CN, hi or ar [the system's].\n"
                       "  --home DIR\n"
                       "      This node's home folder (identity, trust store, caches).\n"
                       "  -h, --help\n"
                       "      Show this help.\n",
                       stdout);
            return 0;
        }
    int bad = 2;
    while (bad < argc &&
           (std::strncmp(argv[bad], "--lang", 6) == 0 || std::strncmp(argv[bad], "--home", 6) == 0))
        bad += std::strchr(argv[bad], '=') ? 1 : 2;
    std::fprintf(stderr, "tandem: gui: %s \"%s\" (see 'tandem gui --help')\n",
                 bad < argc ? "unexpected argument" : "a value is missing after",
                 argv[std::min(bad, argc - 1)]);
    return 2;
}

// Qt reads arguments as UTF-8 text and turns bytes that are not UTF-8 into U+FFFD, so a
// folder named in another encoding would silently become a different folder: output would
// land elsewhere, or a node's home would be made anew. Such an argument is refused instead.
// Returns the 1-based index of the first one, or 0.
int firstArgumentNotText(int argc, char** argv) {
#if defined(Q_OS_UNIX)
    for (int i = 1; i < argc; ++i) {
        const QByteArray raw(argv[i]);
        if (QString::fromLocal8Bit(raw).toLocal8Bit() != raw)
            return i;
    }
#else
    Q_UNUSED(argc);
    Q_UNUSED(argv);
#endif
    return 0;
}

bool haveDisplay() {
#if defined(Q_OS_LINUX) || defined(Q_OS_FREEBSD)
    return qEnvironmentVariableIsSet("DISPLAY") || qEnvironmentVariableIsSet("WAYLAND_DISPLAY") ||
           qEnvironmentVariableIsSet("QT_QPA_PLATFORM");
#else
    return true;
#endif
}

// TANDEM_FAILPOINTS in a build without failpoints would test nothing, and a misspelt one
// would arm nothing: both are refused before anything runs.
const char* failpointProblem() {
#if TANDEM_FAILPOINTS_BUILD
    return tandem::failpoint::configError();
#else
    return qEnvironmentVariableIsSet("TANDEM_FAILPOINTS")
               ? "TANDEM_FAILPOINTS is set, but this build has no failpoints (configure with "
                 "-DTANDEM_FAILPOINTS=ON)"
               : nullptr;
#endif
}

} // namespace

int main(int argc, char** argv) {
    tandem::keepFreedMemoryForReuse();
    // Diagnostics stay quiet unless asked for (QT_LOGGING_RULES="tandem.*.debug=true").
    QLoggingCategory::setFilterRules(QStringLiteral("tandem.*.debug=false"));
    if (const int bad = firstArgumentNotText(argc, argv)) {
        std::fprintf(stderr,
                     "tandem: argument %d (\"%s\") is not valid text in this system's encoding "
                     "(UTF-8); Tandem cannot use file or folder names like it without changing "
                     "them. Rename the file or folder, or choose another one.\n",
                     bad, QString::fromLocal8Bit(argv[bad]).toLocal8Bit().constData());
        return 2;
    }
    if (const char* why = failpointProblem()) {
        std::fprintf(stderr, "tandem: %s\n", why);
        return 2;
    }
    tandem::ui::GuiOptions gui;
    if (wantsGui(argc, argv, &gui)) {
        if (!haveDisplay()) {
            std::fprintf(stderr,
                         "tandem: there is no display to open the app on.\n"
                         "On a machine without a screen, run 'tandem serve --headless' to accept "
                         "work,\nor 'tandem train ...' to train; 'tandem --help' lists the "
                         "commands.\n");
            return 2;
        }
        QApplication app(argc, argv);
        QApplication::setApplicationName(QStringLiteral("Tandem"));
        QApplication::setOrganizationName(QStringLiteral("Tandem"));
        QApplication::setApplicationVersion(tandem::appVersion());
        QApplication::setDesktopFileName(QStringLiteral("org.tandem.Tandem"));
        return tandem::ui::runGui(app, gui);
    }
    if (argc > 1 && std::strcmp(argv[1], "gui") == 0)
        return guiCommandLine(argc, argv);
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("Tandem"));
    QCoreApplication::setOrganizationName(QStringLiteral("Tandem"));
    QCoreApplication::setApplicationVersion(tandem::appVersion());
    return tandem::cli::run(QCoreApplication::arguments());
}
