#!/usr/bin/env bash
# Proves the GPU kit complete: run inside a brand-new minimal Debian 12 root, it installs only a
# compiler, CMake, ninja and Debian's LibTorch (with what the tests read: Python's torch and
# numpy, Fashion-MNIST), removes the protobuf packages that Debian's LibTorch drags in (the
# machine the kit is for has none), unpacks the kit, builds Tandem against it and runs the suite.
#
#   packaging/gpu-kit.sh /dev/shm/gpu-kit
#   fresh-debian . 'bash packaging/gpu-kit-check.sh /dev/shm/gpu-kit'
#
# (/dev/shm is shared with such a root; fresh-debian makes one from a clean clone.) Exits
# non-zero if a Qt or protobuf package is installed when the build starts, or if the build's
# programs and the kit's plugins would load one library from two files (the kit's one-copy.sh).
# It then removes the root's OpenSSL and checks the TLS tests again with the kit's lent.
# CCACHE_DIR=/dev/shm/... in the command keeps the compiler's cache from one check to the next.
set -euo pipefail
cd "$(dirname "$0")/.."
kit=${1:?usage: gpu-kit-check.sh KIT_FOLDER}
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends g++ cmake ninja-build libtorch-dev python3-torch \
    libopenblas0-openmp python3-numpy python3-regex python3-jinja2 python3-sentencepiece \
    dataset-fashion-mnist fonts-noto-core fonts-noto-cjk xz-utils file ccache
# Debian's libtorch-dev depends on protobuf's headers; LibTorch itself does not need them to be
# built against. Its libraries need libprotobuf at run time, which the kit lends.
dpkg --remove --force-depends libprotobuf-dev libprotobuf32 libprotobuf-lite32 >/dev/null
if dpkg-query -W -f='${Package} ${Status}\n' 2>/dev/null | grep 'install ok installed' |
    grep -E '^(lib)?(qt6|libqt6|qt6-|protobuf|libprotobuf|libprotoc)' ; then
    echo "gpu-kit-check: Qt 6 or protobuf packages are installed; the check needs a root without them" >&2
    exit 1
fi
sh "$kit/unpack.sh" /opt/tandem-kit
# shellcheck disable=SC1091
. /opt/tandem-kit/env.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_FAILPOINTS=ON
cmake --build build
/opt/tandem-kit/one-copy.sh build
cd build
# The packaging test builds a .deb, whose dependencies dpkg-shlibdeps reads from the installed
# packages: that is for a Debian desktop, not for the kit's machine. TESTS=REGEX runs only those.
export QT_QPA_PLATFORM=offscreen
ctest --output-on-failure --parallel 2 -E '^test_deb$' ${TESTS:+-R "$TESTS"}
# The root's own OpenSSL served the run above (the kit's copies pointed at it). Now a machine
# without OpenSSL: the kit lends its own pair, with the unversioned names Qt's TLS plugin
# dlopens, and the same build must still load one copy of each and pass its TLS tests.
dpkg --remove --force-depends libssl3 >/dev/null 2>&1
/opt/tandem-kit/lend.sh
ls /opt/tandem-kit/lent | grep -qx libssl.so ||
    { echo "gpu-kit-check: the kit did not lend OpenSSL to a machine without it" >&2; exit 1; }
/opt/tandem-kit/one-copy.sh .
ctest --output-on-failure --parallel 2 -R '^(test_net|test_pairing|test_gui_wizard)$'
