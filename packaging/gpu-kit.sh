#!/usr/bin/env bash
# Makes the GPU kit: one folder that holds everything Tandem needs to build and run on a Linux
# machine that has a compiler, CMake, ninja and LibTorch (for instance pip's torch, which ships
# LibTorch's headers, libraries and CMake files) but no Qt and no protobuf.
#
#   packaging/gpu-kit.sh [OUT]     (default: build/gpu-kit)
#
# The kit is Debian 12's Qt 6 (the modules Tandem uses, their plugins, moc/rcc/uic and
# lrelease), protobuf and protoc, OpenSSL, zlib, libzip and pkg-config, with their headers,
# CMake and pkg-config files, and every shared library they load that is not part of the C
# and C++ runtimes (glibc, libstdc++, libgcc_s), which the target machine's compiler brings.
# It is packed as kit.tar.xz beside env.sh and unpack.sh, so the folder stays small enough to
# carry (checked against TANDEM_KIT_LIMIT_MB, 60 by default).
#
# On the target machine:
#   sh OUT/unpack.sh DIR      unpacks the kit into DIR, and lends (DIR/lent) the libraries
#                             this machine lacks or has only in an older version
#   . DIR/env.sh              sets CMAKE_PREFIX_PATH, PKG_CONFIG_*, PATH, LD_LIBRARY_PATH and
#                             QT_PLUGIN_PATH for a build and its tests
#
# Needs Debian 12 (bookworm): the packages below are installed with apt-get when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/gpu-kit}
limit_mb=${TANDEM_KIT_LIMIT_MB:-60}
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)

# What a build needs (headers, CMake and pkg-config files, tools) and what Tandem loads at run
# time (the libraries, Qt's platform, TLS and image plugins). Vulkan's headers are optional for
# Qt Gui and left out; so are lupdate and lconvert, which pull in LLVM (see below).
dev_packages="qt6-base-dev qt6-base-dev-tools qmake6 qt6-charts-dev qt6-tools-dev qt6-l10n-tools
  libqt6opengl6-dev libgl-dev libglx-dev libopengl-dev libegl-dev libxkbcommon-dev
  libprotobuf-dev protobuf-compiler libssl-dev zlib1g-dev libzip-dev pkgconf pkgconf-bin pkg-config"
run_packages="libqt6core6 libqt6gui6 libqt6network6 libqt6widgets6 libqt6charts6 libqt6xml6
  libqt6test6 libqt6dbus6 libqt6opengl6 libqt6openglwidgets6 libprotobuf32 libprotoc32
  libssl3 zlib1g libzip4 libpkgconf3"

missing=""
for p in $dev_packages $run_packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "gpu-kit: installing:$missing"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -q
    # shellcheck disable=SC2086 # a list of package names
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/kit

# Copies one path of this machine into the kit under the same path, /lib/... as /usr/lib/...
# (Debian 12 has merged /usr, so both name the same file).
put() {
    local src=$1 rel=${1#/}
    rel=${rel#usr/}
    mkdir -p "$root/usr/$(dirname "$rel")"
    cp -a "$src" "$root/usr/$rel"
}

# The packages' files, without documentation, static libraries and what Tandem never uses.
# shellcheck disable=SC2086
dpkg -L $dev_packages $run_packages | sort -u | while read -r f; do
    [ -d "$f" ] && continue
    [ -f "$f" ] || [ -L "$f" ] || continue
    case "$f" in
    /usr/share/doc/* | /usr/share/man/* | /usr/share/lintian/* | /usr/share/bug/* | *.a) continue ;;
    /usr/lib/qt6/bin/lupdate | /usr/lib/qt6/bin/lconvert | /usr/lib/qt6/libexec/lprodump) continue ;;
    */qt6/plugins/designer/*) continue ;;
    /usr/bin/lupdate* | /usr/bin/lconvert*) continue ;;
    esac
    put "$f"
done

# lupdate, lconvert and lprodump only update the .ts sources (never part of a build), but Qt's
# CMake files check that they exist: stand-ins that say what they are.
for tool in bin/lupdate bin/lconvert libexec/lprodump; do
    mkdir -p "$root/usr/lib/qt6/$(dirname "$tool")"
    printf '#!/bin/sh\necho "%s is not in the Tandem GPU kit: update translations where Qt tools are" >&2\nexit 1\n' \
        "$(basename "$tool")" >"$root/usr/lib/qt6/$tool"
    chmod +x "$root/usr/lib/qt6/$tool"
done

# Headers that Debian keeps under the multiarch folder (OpenSSL's configuration.h, ...) are
# found there only by a compiler whose include path names /usr/include/$arch; in the kit they
# also go beside the others. Qt's own are found through its CMake files and stay where they are.
for f in "$root/usr/include/$arch"/*; do
    [ "$(basename "$f")" = qt6 ] && continue
    cp -a "$f" "$root/usr/include/"
done

# Every library the kit's programs, libraries and plugins load, followed to the end, less the
# C and C++ runtimes the target machine has with its compiler.
runtime='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s|libgomp)\.'
find "$root/usr" -type f \( -name '*.so*' -o -perm -u+x \) -print0 |
    xargs -0 file -L | grep -E 'ELF .*(executable|shared object)' | cut -d: -f1 |
    xargs -r ldd 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
    while read -r name path; do
        echo "$name" | grep -Eq "$runtime" && continue
        rel=${path#/}
        rel=${rel#usr/}
        [ -e "$root/usr/$rel" ] && continue
        put "$path"
        echo "$path" >>"$stage/added"
        # the library's own name may be a link to a versioned file
        real=$(readlink -f "$path")
        [ "$real" = "$path" ] || put "$real"
    done

# Paths inside the kit are relative to it; pkg-config's files say /usr, so the kit's pkg-config
# reads only its own files and puts the kit in front of their paths. At run time the kit lends
# only the libraries the machine lacks, or has in a version too old (unpack.sh decides, with
# ldd, on the machine itself): a newer copy of the same library stays the machine's own, so
# nothing else that runs in the same environment (Python, CMake) loads an older library.
cat >"$root/env.sh" <<'EOS'
# Sourced by sh or bash: makes the kit's Qt, protobuf, OpenSSL, zlib and libzip the ones a
# build finds and a run loads.
TANDEM_KIT=${TANDEM_KIT:-$(cd "$(dirname "${BASH_SOURCE:-$0}")" 2>/dev/null && pwd)}
[ -f "$TANDEM_KIT/env.sh" ] || { echo "env.sh: set TANDEM_KIT to the unpacked kit" >&2; return 1; }
export TANDEM_KIT
export CMAKE_PREFIX_PATH="$TANDEM_KIT/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export PATH="$TANDEM_KIT/usr/bin:$TANDEM_KIT/usr/lib/qt6/bin:$PATH"
export LD_LIBRARY_PATH="$TANDEM_KIT/lent${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export QT_PLUGIN_PATH="$TANDEM_KIT/usr/lib/@ARCH@/qt6/plugins"
export PKG_CONFIG_LIBDIR="$TANDEM_KIT/usr/lib/@ARCH@/pkgconfig:$TANDEM_KIT/usr/share/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$TANDEM_KIT"
export PKG_CONFIG="$TANDEM_KIT/usr/bin/pkg-config"
EOS
sed -i "s/@ARCH@/$arch/g" "$root/env.sh"

# lend.sh, run by unpack.sh on the target: links into lent/ each kit library whose name the
# machine's loader does not know, then, as long as ldd finds a symbol version missing from the
# machine's copy of a library (older than Debian 12's), lends that library too.
cat >"$root/lend.sh" <<'EOS'
#!/bin/sh
set -eu
kit=$(cd "$(dirname "$0")" && pwd)
lib=$kit/usr/lib/@ARCH@
rm -rf "$kit/lent"
mkdir -p "$kit/lent"
known=$(/sbin/ldconfig -p 2>/dev/null | awk '{print $1}' | sort -u)
for f in "$lib"/*.so.*; do
    name=$(basename "$f")
    case "$name" in *.so.*.*) continue ;; esac # the soname's link is what the loader asks for
    echo "$known" | grep -qxF "$name" || ln -s "$f" "$kit/lent/$name"
done
elves=$(find "$kit/usr" -type f -name '*.so*' | sort)
for round in 1 2 3 4 5 6 7 8; do
    short=$(echo "$elves" | LD_LIBRARY_PATH="$kit/lent" xargs ldd 2>&1 |
        sed -n "s/^[^:]*: \([^:]*\): version \`.*' not found.*/\1/p" | sort -u)
    [ -n "$short" ] || break
    for path in $short; do
        name=$(basename "$path")
        [ -e "$lib/$name" ] && [ ! -e "$kit/lent/$name" ] && ln -s "$lib/$name" "$kit/lent/$name"
    done
done
echo "the kit lends $(ls "$kit/lent" | wc -l) libraries this machine lacks (see $kit/lent)"
EOS
sed -i "s/@ARCH@/$arch/g" "$root/lend.sh"
chmod +x "$root/lend.sh"

rm -rf "$out"
mkdir -p "$out"
tar -C "$root" -cf - . | xz -T0 -6 >"$out/kit.tar.xz"
cp "$root/env.sh" "$out/env.sh"
cat >"$out/unpack.sh" <<'EOF'
#!/bin/sh
# unpack.sh DIR: unpacks Tandem's GPU kit into DIR; then `. DIR/env.sh`.
set -eu
[ $# -eq 1 ] || { echo "usage: unpack.sh DIR" >&2; exit 2; }
mkdir -p "$1"
xz -dc "$(dirname "$0")/kit.tar.xz" | tar -C "$1" -xf -
"$1/lend.sh"
echo "kit unpacked in $1: . $1/env.sh"
EOF
chmod +x "$out/unpack.sh"
{
    echo "Tandem GPU kit, made $(date -u +%Y-%m-%dT%H:%MZ) on $(. /etc/os-release && echo "$PRETTY_NAME")"
    # shellcheck disable=SC2086
    dpkg-query -W -f='${Package} ${Version}\n' $dev_packages $run_packages
    echo "libraries brought along for them:"
    sort -u "$stage/added" 2>/dev/null || true
} >"$out/MANIFEST"

unpacked=$(du -sm "$root" | cut -f1)
packed=$(du -sm "$out" | cut -f1)
echo "gpu-kit: $out holds $packed MiB ($unpacked MiB unpacked)"
if [ "$packed" -gt "$limit_mb" ]; then
    echo "gpu-kit: the kit is over $limit_mb MiB" >&2
    exit 1
fi
