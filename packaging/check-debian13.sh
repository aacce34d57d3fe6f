#!/usr/bin/env bash
# Builds Tandem in a Debian 13 (trixie) root, against the LibTorch 2.x and Qt 6.8 that Debian 13
# ships, as a new user there would.
#
#   packaging/check-debian13.sh        LibTorch 2.6 (CPU): builds with the README's command
#                                      (packaging/quickstart.sh test) and runs the tests of what
#                                      differs between versions (label versions) and the longest
#                                      checks (label extended); the README's command on Debian 12
#                                      runs the rest (docs/testing.md)
#   packaging/check-debian13.sh cuda   LibTorch 2.6 built for CUDA, with CUDA 12.4: the same
#                                      command with the CUDA packages and TANDEM_REQUIRE_CUDA,
#                                      so it builds the app with TANDEM_WITH_CUDA, and runs the
#                                      tests labelled cuda on the CPU (no GPU is needed, or used)
#
# The check runs on a clean clone of the checkout's HEAD: commit first. Needs root (asks sudo
# otherwise), debootstrap and Debian's package mirror. The root is kept between runs in
# $TANDEM_CHECK_ROOTS (default /var/cache/tandem-check), with its packages, and the compile cache
# the two roots share ($TANDEM_CHECK_ROOTS/ccache), so a second run builds in minutes; delete
# that folder to start over. The first CUDA run downloads about 2.6 GB.
set -euo pipefail
mode=${1:-cpu}
case "$mode" in
cpu | cuda) ;;
*)
    echo "usage: $0 [cpu|cuda]" >&2
    exit 2
    ;;
esac
checkout=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
    exec sudo TANDEM_CHECK_ROOTS="${TANDEM_CHECK_ROOTS:-}" "$0" "$@"
fi

cache=${TANDEM_CHECK_ROOTS:-/var/cache/tandem-check}
root=$cache/trixie-$mode
components=main
[ "$mode" = cuda ] && components=main,contrib,non-free
mkdir -p "$cache"
exec 9>"$cache/.lock-$mode"
flock -n 9 || {
    echo "check-debian13: another $mode check is running (lock $cache/.lock-$mode)" >&2
    exit 1
}

say() { printf '\n== %s\n' "$*"; }

if [ ! -f "$root/.tandem-root" ]; then
    command -v debootstrap >/dev/null || {
        say "installing debootstrap"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
    }
    # the Debian mirror this machine's apt already uses
    mirror=${TANDEM_DEBIAN_MIRROR:-$({
        grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
        grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}'
    } | grep -v security | grep '/debian/\?$' | head -n 1 || true)}
    mirror=${mirror:-http://deb.debian.org/debian}
    say "making a Debian 13 root in $root (from $mirror)"
    rm -rf "$root.new"
    debootstrap --variant=minbase --components="$components" trixie "$root.new" "$mirror" \
        >"$cache/debootstrap-$mode.log" 2>&1 || {
        echo "check-debian13: debootstrap failed; see $cache/debootstrap-$mode.log" >&2
        exit 1
    }
    rm -rf "$root"
    mv "$root.new" "$root"
    touch "$root/.tandem-root"
fi

mounted=()
cleanup() {
    local m
    for m in "${mounted[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT
for m in proc sys dev; do
    case $m in
    proc) mount -t proc proc "$root/proc" ;;
    *) mount --rbind "/$m" "$root/$m" && mount --make-rslave "$root/$m" ;;
    esac
    mounted=("$root/$m" "${mounted[@]}")
done
cp /etc/resolv.conf "$root/etc/resolv.conf"
# One compile cache for both roots: their compiler and Qt are the same packages, so whatever
# does not include LibTorch's CUDA flags (most of Tandem) compiles once for the two checks.
# A root from before keeps what its own cache held.
mkdir -p "$cache/ccache" "$root/root/.ccache"
if [ -d "$root/root/.ccache" ] && [ ! -f "$cache/ccache/.from-$mode" ]; then
    cp -a "$root/root/.ccache/." "$cache/ccache/" 2>/dev/null || true
    touch "$cache/ccache/.from-$mode"
fi
mount --bind "$cache/ccache" "$root/root/.ccache"
mounted=("$root/root/.ccache" "${mounted[@]}")
# The host's trusted certificates, for npm in the root (the test references): where the network
# inspects TLS, the host trusts that network's authority and a fresh root does not.
extra_ca=()
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    mkdir -p "$root/etc/tandem-check"
    cp /etc/ssl/certs/ca-certificates.crt "$root/etc/tandem-check/host-ca.crt"
    extra_ca=(NODE_EXTRA_CA_CERTS=/etc/tandem-check/host-ca.crt)
fi

rm -rf "$root/src"
git clone -q "$checkout" "$root/src"
say "checking $(git -C "$root/src" log -1 --format='%h %s') ($mode)"

inroot() {
    chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb CI=true "${extra_ca[@]}" \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        CCACHE_DIR=/root/.ccache /bin/bash -c "$1"
}

if [ "$mode" = cpu ]; then
    inroot 'cd /src && TANDEM_CTEST_ARGS="-L versions|extended" bash packaging/quickstart.sh test'
    exit
fi

# The CUDA build. LibTorch's CUDA package depends on nvidia-cudnn, an installer that fetches
# cuDNN from NVIDIA's servers while it is configured; without internet that fails and leaves
# LibTorch unconfigured. A placeholder package stands in for it, and a stand-in libcudnn.so.9
# (packaging/linux/cudnn-stub.sh: the library's name, symbol version and functions, each of
# which stops with a message if called) lets the linker and the loader resolve it. Tandem never calls cuDNN itself; a real GPU machine installs the real one.
inroot '
set -e
export DEBIAN_FRONTEND=noninteractive
if ! dpkg-query -W -f="\${Status}" nvidia-cudnn 2>/dev/null | grep -q "install ok installed"; then
    mkdir -p /tmp/cudnn-placeholder/DEBIAN
    printf "%s\n" "Package: nvidia-cudnn" "Version: 9.99~placeholder" "Architecture: all" \
        "Maintainer: Tandem <tandem@localhost>" \
        "Description: placeholder for the cuDNN downloader (no cuDNN inside)" \
        >/tmp/cudnn-placeholder/DEBIAN/control
    dpkg-deb -b /tmp/cudnn-placeholder /tmp/nvidia-cudnn-placeholder.deb >/dev/null
    dpkg -i /tmp/nvidia-cudnn-placeholder.deb
fi
# LibTorch for CUDA first: the stub is made from what it imports, before anything links.
missing=""
for p in libtorch-cuda-dev nvidia-cuda-toolkit python3-torch-cuda gcc binutils libegl1 libgl1; do
    dpkg-query -W -f="\${Status}" "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    apt-get update -q
    apt-get install -y -q --no-install-recommends $missing
fi
# The CUDA packages bring the NVIDIA GL switch (glx-diversions, nvidia-alternative): it moves
# libEGL.so.1 and libGL.so.1 aside and points them at the libraries of the NVIDIA driver, which
# this root does not have, so the Qt GUI library would not link. Point them at the Mesa ones,
# as on a machine without the NVIDIA GL driver.
if update-alternatives --query glx 2>/dev/null | grep -q "^Alternative: /usr/lib/mesa-diverted$"; then
    update-alternatives --set glx /usr/lib/mesa-diverted
    ldconfig
fi
test -e /usr/lib/x86_64-linux-gnu/libEGL.so.1 || {
    echo "check-debian13: libEGL.so.1 is missing from the root; Qt cannot link" >&2
    exit 1
}
bash /src/packaging/linux/cudnn-stub.sh /opt/cudnn-stub
'
# Then the README's command, with the CUDA packages in place of the CPU ones and CUDA required.
inroot '
set -e
cd /src
export LD_LIBRARY_PATH=/opt/cudnn-stub
export TANDEM_TORCH_PACKAGES="libtorch-cuda-dev nvidia-cuda-toolkit python3-torch-cuda"
# The CPU check runs the tests of LibTorch 2.6 against the same version; this check asks
# whether the CUDA build compiles, links and runs without a GPU, so it builds the app and the
# tests labelled cuda (devices, models, precision, memory, a whole run through the command
# line) and runs those.
export TANDEM_CTEST_ARGS="-L cuda" TANDEM_NPM=0
export TANDEM_BUILD_TARGETS="tandem test_devices test_zoo test_precision test_tensormemory test_optimizers test_cli"
export TANDEM_CMAKE_ARGS="-DTANDEM_REQUIRE_CUDA=ON -DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath-link,/opt/cudnn-stub -DCMAKE_SHARED_LINKER_FLAGS=-Wl,-rpath-link,/opt/cudnn-stub"
status=0
bash packaging/quickstart.sh test || status=$?
echo "== linked against:"
ldd build/bin/tandem | grep -E "torch_cuda|cudart|cudnn" || true
echo "== tandem devices --json (no GPU in this machine):"
build/bin/tandem devices --json
exit $status
'
