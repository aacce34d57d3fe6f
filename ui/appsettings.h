#pragma once

#include "common/ports.h"

#include <QString>

namespace tandem::ui {

// What the Settings dialog edits, kept as an INI file in the node's home folder so that two
// nodes on one machine (two homes) keep separate settings.
struct AppSettings {
    QString language; // "de", "ar", ...; empty: the system's language
    QString nodeName; // empty: the host name
    quint16 discoveryPort = kDiscoveryPort;
    quint16 listenPort = kServePort; // pairing requests and invitations
    quint16 runPort = 0; // where a run this machine coordinates listens; 0: any free port
    QString runsFolder;  // empty: <home>/runs
    QString cacheFolder; // datasets received from coordinators; empty: <home>/cache
    // Hugging Face folders (or a folder of them) a run this machine lends to takes its base
    // model from instead of receiving it; empty: none.
    QString modelsFolder;
    bool acceptWork = true; // join runs of paired machines while this one is idle
    bool wizardDone = false;

    static AppSettings load(const QString& home);
    void save(const QString& home) const;
    QString effectiveRunsFolder(const QString& home) const;
    QString effectiveCacheFolder(const QString& home) const;
};

} // namespace tandem::ui
