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
# carry (checked against TANDEM_KIT_LIMIT_MB, 60 by default); tokenizers.tar.xz beside them holds
# the published tokenizer files of build/npm/tokenizers (TANDEM_KIT_TOKENIZERS) for bench/gpu.sh.
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

# Which Debian source each of the kit's libraries was built from, a line "SOURCE SONAME" each.
# Libraries of one source are made for each other (libssl and libcrypto, Qt's modules): on the
# target they are loaded from one place, all the kit's or all the machine's (lend.sh).
sonames() { # the names the loader asks for: libfoo.so.6, not the file libfoo.so.6.4.2 behind it
    for f in "$1"/*.so.*; do
        n=$(basename "$f")
        case "$n" in *.so.*.*) continue ;; esac
        echo "$n"
    done
}
sonames "$root/usr/lib/$arch" >"$stage/sonames"
# (dpkg -S fails when one pattern matches nothing; the others still print)
{ sed 's|^|*/|' "$stage/sonames" | xargs -d '\n' dpkg -S 2>/dev/null || true; } |
    awk -F': ' -v a="$arch" '{
        n = split($2, parts, "/"); name = parts[n]; dir = substr($2, 1, length($2) - length(name) - 1)
        if (dir != "/usr/lib/" a && dir != "/lib/" a) next
        split($1, pkg, /[:,]/); print pkg[1], name }' | sort -u >"$stage/owners"
dpkg-query -W -f='${Package} ${source:Package}\n' $(cut -d' ' -f1 "$stage/owners" | sort -u) |
    sort -u >"$stage/sources"
while read -r name; do
    pkg=$(awk -v n="$name" '$2 == n && !seen++ {print $1}' "$stage/owners")
    src=$(awk -v p="$pkg" '$1 == p && !seen++ {print $2}' "$stage/sources")
    echo "${src:-$name} $name"
done <"$stage/sonames" | sort >"$root/groups"

# The loader's cache tags each entry with its ABI ("libc6,x86-64"); lend.sh reads only this
# machine's kind of entry from the target's cache.
ldtag=$(/sbin/ldconfig -p | awk -v a="/$arch/libc.so.6" 'index($NF, a) && !seen++' |
    sed -n 's/.*(\([^,)]*,[^,)]*\)[,)].*/\1/p')
[ -n "$ldtag" ] || { echo "gpu-kit: no entry for $arch's libc in the loader's cache" >&2; exit 1; }

# Paths inside the kit are relative to it; pkg-config's files say /usr, so the kit's pkg-config
# reads only its own files and puts the kit in front of their paths. At run time each library
# the kit holds is loaded from one file: the kit's own where the machine lacks it or has it too
# old (it is then lent to everything under env.sh), the machine's where that serves (and then
# for the build too); unpack.sh decides, with ldd, on the machine itself. A newer copy of a
# library stays the machine's, so nothing else that runs in the same environment (Python,
# CMake) loads an older one.
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

# lend.sh, run by unpack.sh on the target (again whenever the machine's libraries change).
cat >"$root/lend.sh" <<'EOS'
#!/bin/sh
# Decides where each of the kit's libraries is loaded from on this machine, so that a process
# never holds two releases of one library, nor of two libraries built from one source.
#  - Lent (linked into lent/, which env.sh puts on LD_LIBRARY_PATH ahead of the machine's): a
#    library this machine's loader does not know, one whose machine copy lacks a symbol version
#    the kit needs (older than Debian 12's), and every other library of the same Debian source
#    as a lent one.
#  - The machine's: every other. The kit's copy is put aside in own/ and its name links to the
#    machine's file, so that a build linked against the kit, whose RUNPATH names the kit's
#    folder, loads the same file as a plugin or Python does. (Without this, Tandem loaded the
#    kit's libcrypto 3.0.19 through its RUNPATH, Qt's TLS plugin dlopened the machine's OpenSSL
#    beside it, and with two sets of OpenSSL's indices every certificate check in a handshake
#    between unpaired nodes failed.)
set -eu
kit=$(cd "$(dirname "$0")" && pwd)
lib=$kit/usr/lib/@ARCH@
if [ -d "$kit/own" ]; then # run before: start again from the kit's own files
    for f in "$kit/own"/*; do
        [ -e "$f" ] || [ -L "$f" ] || continue # a soname's relative link dangles in own/
        rm -f "$lib/$(basename "$f")"
        mv "$f" "$lib/"
    done
fi
rm -rf "$kit/lent" "$kit/own"
mkdir -p "$kit/lent" "$kit/own"
cache=$(/sbin/ldconfig -p 2>/dev/null | awk 'index($0, "(@LDTAG@)") || index($0, "(@LDTAG@,")' || true)
machine_copy() { echo "$cache" | awk -v n="$1" '$1 == n {print $NF; exit}'; }
# Lends a library under its soname and, where the kit has it, its unversioned name too: Qt's
# TLS plugin dlopens "libcrypto.so" and "libssl.so", which would otherwise find the machine's.
lend() {
    [ -e "$kit/lent/$1" ] || ln -s "$lib/$1" "$kit/lent/$1"
    plain=${1%%.so.*}.so
    [ ! -e "$lib/$plain" ] || [ -e "$kit/lent/$plain" ] || ln -s "$lib/$plain" "$kit/lent/$plain"
}
names=$(awk '{print $2}' "$kit/groups")

for name in $names; do
    [ -n "$(machine_copy "$name")" ] || lend "$name"
done
elves=$(find "$kit/usr" -type f -name '*.so*' | sort)
for round in 1 2 3 4 5 6 7 8; do
    before=$(ls "$kit/lent" | wc -l)
    short=$(echo "$elves" | LD_LIBRARY_PATH="$kit/lent" xargs ldd 2>&1 |
        sed -n "s/^[^:]*: \([^:]*\): version \`.*' not found.*/\1/p" | sort -u)
    for path in $short; do
        name=$(basename "$path")
        [ -e "$lib/$name" ] && lend "$name"
    done
    for src in $(for n in $(ls "$kit/lent"); do awk -v n="$n" '$2 == n {print $1}' "$kit/groups"; done | sort -u); do
        for name in $(awk -v s="$src" '$1 == s {print $2}' "$kit/groups"); do
            lend "$name"
        done
    done
    [ "$(ls "$kit/lent" | wc -l)" -ne "$before" ] || break
done

for name in $names; do
    [ -e "$kit/lent/$name" ] && continue
    copy=$(machine_copy "$name")
    [ -n "$copy" ] || continue
    mv "$lib/$name" "$kit/own/$name"
    ln -s "$copy" "$lib/$name"
done
echo "the kit lends $(ls "$kit/lent" | grep -c '\.so\.') libraries this machine lacks or has too old (see $kit/lent);" \
    "$(ls "$kit/own" | wc -l) are this machine's own (see $kit/own)"
EOS
sed -i -e "s/@ARCH@/$arch/g" -e "s/@LDTAG@/$ldtag/g" "$root/lend.sh"
chmod +x "$root/lend.sh"

# one-copy.sh BUILD: run under env.sh, checks that no process of the build would hold two
# releases of one library (two files behind one soname). Two ways in: ldd over the build's
# programs and tests and the kit's plugins (a RUNPATH against the loader's cache), and what
# `tandem identity` really loads (it creates a certificate, so Qt's TLS plugin dlopens OpenSSL
# by names of its own choosing). It names each library found twice and fails.
cat >"$root/one-copy.sh" <<'EOS'
#!/bin/sh
set -eu
[ $# -eq 1 ] || { echo "usage: one-copy.sh BUILD_DIR" >&2; exit 2; }
kit=$(cd "$(dirname "$0")" && pwd)
build=$1
# Reads "path" lines, prints "soname-ish-name realpath" once per real file: the name is the
# real file's own up to its major version (libz.so.1.2.13 -> libz.so.1), so two releases of a
# library meet under one name whatever link led to each.
by_name() {
    while read -r path; do
        real=$(readlink -f "$path")
        echo "$(basename "$real" | sed 's/\(\.so\.[0-9]*\).*/\1/') $real"
    done | sort -u
}
twice() { awk '{n[$1]++; f[$1] = f[$1] " " $2} END {for (k in n) if (n[k] > 1) print "  " k ":" f[k]}'; }
static=$(find "$build/bin" "$build/tests" "$kit/usr/lib/@ARCH@/qt6/plugins" -type f \
    \( -perm -u+x -o -name '*.so*' \) | xargs ldd 2>/dev/null |
    awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u | by_name | twice)
home=$(mktemp -d)
loaded=$(LD_DEBUG=libs "$build/bin/tandem" identity --home "$home" 2>&1 >/dev/null |
    sed -n 's/.*calling init: \(.*\)$/\1/p' | by_name | twice || true)
rm -rf "$home"
status=0
if [ -n "$static" ]; then
    echo "one-copy: programs of $build and the kit's plugins would load these from more than one file:" >&2
    echo "$static" >&2
    status=1
fi
if [ -n "$loaded" ]; then
    echo "one-copy: 'tandem identity' loaded these from more than one file:" >&2
    echo "$loaded" >&2
    status=1
fi
[ $status -ne 0 ] || echo "one-copy: every library is loaded from one file"
exit $status
EOS
sed -i "s/@ARCH@/$arch/g" "$root/one-copy.sh"
chmod +x "$root/one-copy.sh"

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

# The published tokenizer files bench/gpu.sh's parity phase uses, from where the README's test
# command writes them (tests/npm), packed beside the kit.
tokenizers=${TANDEM_KIT_TOKENIZERS:-build/npm/tokenizers}
if [ -d "$tokenizers" ]; then
    tar -C "$tokenizers" -cf - . | xz -T0 -9 >"$out/tokenizers.tar.xz"
else
    echo "gpu-kit: no tokenizer files in $tokenizers (run the README's test command first);" \
        "bench/gpu.sh's parity phase will skip the tokenizer checks" >&2
fi

unpacked=$(du -sm "$root" | cut -f1)
packed=$(du -sm "$out" | cut -f1)
echo "gpu-kit: $out holds $packed MiB ($unpacked MiB unpacked)"
if [ "$packed" -gt "$limit_mb" ]; then
    echo "gpu-kit: the kit is over $limit_mb MiB" >&2
    exit 1
fi
