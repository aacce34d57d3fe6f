#!/bin/sh
# Starts the app under Xvfb, pairs it with a second node on loopback through the setup
# wizard, trains the demo for two short epochs on both, exports the model, runs a small sweep
# on both, fine-tunes a tiny Llama on chat data on both and tries it, and saves what the screen
# showed at each point as docs/screenshots/LANG-NN-name.png.
#   docs/screenshots/make.sh [BUILD_DIR]    (English and Arabic)
set -eu
cd "$(dirname "$0")/../.."
build="${1:-build}"
cmake --build "$build" --target tandem_screenshots
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
for lang in en ar; do
    xvfb-run -a -s "-screen 0 1600x1000x24" \
        "$build/tests/gui/tandem_screenshots" --lang "$lang" --out docs/screenshots
done
