#pragma once

// Failpoints: named places in the code where a test makes Tandem crash, stall, freeze or fail
// its I/O, to show that nothing is lost when that happens there (bench/faults.py runs them by
// the hundred). They exist only in builds configured with -DTANDEM_FAILPOINTS=ON, which
// packaging/quickstart.sh uses for the test suite; elsewhere every TANDEM_FAILPOINT is the
// constant false and the code around it is compiled out.
//
// TANDEM_FAILPOINTS=NAME=ACTION[@N][;NAME=ACTION[@N]...] switches points on:
//   crash      the process kills itself with SIGKILL, as `kill -9` would
//   stall:MS   the calling thread sleeps MS milliseconds, then goes on
//   stop       the process stops itself with SIGSTOP (SIGCONT resumes it)
//   fail       the I/O at that point fails as a full disk or a dead peer would
//   @N         fires on the Nth time the point is reached only (counting from 1); without it,
//              every time
// Each firing is announced on stderr ("failpoint checkpoint.rename: crash") before it acts.
// Every point is listed in kFailpoints (failpoint.cpp); a name that is not is refused at start.

#include "common/failpointconfig.h"

namespace tandem::failpoint {

#if TANDEM_FAILPOINTS_BUILD
// Counts one pass through the point; true when it fires on this pass.
bool due(const char* name);
// Announces and carries out the point's action; true when the caller must fail its I/O.
bool act(const char* name);
// The TANDEM_FAILPOINTS problem, if any, as a sentence; null when the setting is good.
const char* configError();
#endif

} // namespace tandem::failpoint

#if TANDEM_FAILPOINTS_BUILD
// The point is reached: acts when it fires; true when the I/O here must fail.
#define TANDEM_FAILPOINT(name) (::tandem::failpoint::due(name) && ::tandem::failpoint::act(name))
// For points that must prepare their moment first (send half a frame, then crash): true when
// the point fires on this pass; the caller prepares, then calls TANDEM_FAILPOINT_ACT.
#define TANDEM_FAILPOINT_DUE(name) ::tandem::failpoint::due(name)
#define TANDEM_FAILPOINT_ACT(name) ::tandem::failpoint::act(name)
#else
#define TANDEM_FAILPOINT(name) false
#define TANDEM_FAILPOINT_DUE(name) false
#define TANDEM_FAILPOINT_ACT(name) false
#endif
