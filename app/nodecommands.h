#pragma once

#include <QStringList>

// tandem serve and tandem pair: a node that announces itself and accepts pairing requests,
// and the command that pairs with one.
namespace tandem::cli {

int cmdServe(const QStringList& args);
int cmdPair(const QStringList& args);
// peercommands.cpp
int cmdIdentity(const QStringList& args);
int cmdTrust(const QStringList& args);
int cmdPeers(const QStringList& args);
// sweepcommand.cpp
int cmdSweep(const QStringList& args);
// generatecommand.cpp
int cmdGenerate(const QStringList& args);
// hubcommand.cpp
int cmdHub(const QStringList& args);

} // namespace tandem::cli
