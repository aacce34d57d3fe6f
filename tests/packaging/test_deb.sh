#!/bin/sh
# Builds the .deb with CPack, unpacks it, and runs the packaged binary; validates the
# desktop entry and the AppStream metadata where the validators are installed.
#   test_deb.sh BUILD_DIR VERSION
set -eu
build="$1"
version="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cd "$build"
if ! cpack -G DEB -B "$work/pkg" >"$work/cpack.log" 2>&1; then
    cat "$work/cpack.log"
    exit 1
fi
deb="$work/pkg/tandem_${version}_$(dpkg --print-architecture).deb"
[ -f "$deb" ] || { echo "no $deb"; ls "$work/pkg"; exit 1; }
echo "built $(basename "$deb"): $(stat -c %s "$deb") bytes"

# Dependencies: computed from the binary's libraries, plus the fonts for the languages.
depends="$(dpkg-deb -f "$deb" Depends)"
echo "Depends: $depends"
for want in libqt6widgets6 libqt6charts6 libtorch libprotobuf libssl3 fonts-noto-core fonts-noto-cjk; do
    echo "$depends" | grep -q "$want" || { echo "Depends lacks $want"; exit 1; }
done

dpkg-deb -x "$deb" "$work/root"
root="$work/root"
for f in usr/bin/tandem \
         usr/share/applications/org.tandem.Tandem.desktop \
         usr/share/metainfo/org.tandem.Tandem.metainfo.xml \
         usr/share/icons/hicolor/48x48/apps/tandem.png \
         usr/share/icons/hicolor/256x256/apps/tandem.png \
         usr/share/icons/hicolor/scalable/apps/tandem.svg \
         usr/lib/systemd/user/tandem.service \
         usr/share/doc/tandem/user-guide.md; do
    [ -e "$root/$f" ] || { echo "package lacks /$f"; exit 1; }
done

out="$("$root/usr/bin/tandem" --version)"
[ "$out" = "tandem $version" ] || { echo "--version printed: $out"; exit 1; }
"$root/usr/bin/tandem" devices --json >"$work/devices.json"
grep -q '"kind": *"cpu"' "$work/devices.json" || { cat "$work/devices.json"; exit 1; }

if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate "$root/usr/share/applications/org.tandem.Tandem.desktop"
    echo "desktop-file-validate: ok"
else
    echo "desktop-file-validate: not installed, skipped"
fi
if command -v appstreamcli >/dev/null; then
    appstreamcli validate --no-net --explain "$root/usr/share/metainfo/org.tandem.Tandem.metainfo.xml"
else
    echo "appstreamcli: not installed, skipped"
fi
grep -q '^ExecStart=/usr/bin/tandem serve --headless' "$root/usr/lib/systemd/user/tandem.service"
echo "package ok"
