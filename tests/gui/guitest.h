#pragma once

// What the GUI tests share: a window context whose node stays on loopback, and a free UDP
// port so parallel tests' announcements do not meet.

#include "engine/devices.h"
#include "testpaths.h"
#include "ui/mainwindow.h"

#include <QHostAddress>
#include <QUdpSocket>

inline quint16 freeUdpPort() {
    QUdpSocket probe;
    probe.bind(QHostAddress::LocalHost, 0);
    return probe.localPort();
}

inline tandem::ui::WindowContext loopbackContext(const QString& home, quint16 discoveryPort,
                                                 const QString& name = QStringLiteral("macbook")) {
    tandem::ui::WindowContext c;
    c.home = home;
    c.settings.nodeName = name;
    c.settings.wizardDone = true;
    c.node.home = home;
    c.node.name = name;
    c.node.devices = tandem::detectDevices();
    c.node.listenAddress = QHostAddress(QHostAddress::LocalHost);
    c.node.listenPort = 0;
    c.node.discoveryPort = discoveryPort;
    c.node.announceTo = QList<QHostAddress>{QHostAddress(QStringLiteral("127.255.255.255"))};
    c.node.workerProgram = testpaths::binary();
    return c;
}

// `tandem serve` on loopback only.
inline QStringList serveArgs(const QString& home, quint16 discoveryPort, const QString& name) {
    return {QStringLiteral("serve"),
            QStringLiteral("--home"),
            home,
            QStringLiteral("--name"),
            name,
            QStringLiteral("--listen=127.0.0.1:0"),
            QStringLiteral("--announce-to=127.255.255.255"),
            QStringLiteral("--discovery-port=%1").arg(discoveryPort)};
}
