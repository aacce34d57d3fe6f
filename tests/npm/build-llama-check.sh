#!/usr/bin/env bash
# Builds tests/npm/llama-check.cpp into NPMDIR/llama-check: llama.cpp itself, the prebuilt CPU
# libraries of npm's node-llama-cpp, driven through the headers of the llama.cpp release they
# were built from (the package's gitRelease.bundle holds that release's source). Does nothing
# when NPMDIR/llama-check is newer than the source and the package.
#   bash tests/npm/build-llama-check.sh NPMDIR
set -euo pipefail
npm=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")" && pwd)/llama-check.cpp
bundle=$npm/node_modules/node-llama-cpp/llama/gitRelease.bundle
libs=$npm/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
if [ ! -f "$bundle" ] || [ ! -d "$libs" ]; then
    echo "build-llama-check: node-llama-cpp is not installed in $npm" >&2
    exit 1
fi
out=$npm/llama-check
if [ -x "$out" ] && [ "$out" -nt "$src" ] && [ "$out" -nt "$bundle" ]; then
    exit 0
fi
headers=$npm/llama.cpp-headers
rm -rf "$headers" "$out"
git init -q "$headers"
git -C "$headers" fetch -q "$bundle"
git -C "$headers" checkout -q FETCH_HEAD -- common include ggml/include vendor/nlohmann
# The libraries under the names the package gives them (libllama.v0.4.0.so, …).
lib() {
    local found=("$libs"/lib"$1"*.so)
    basename "${found[0]}"
}
# Compiled through ccache where there is one (a clean clone's build then takes a second, not
# half a minute), then linked.
launcher=()
command -v ccache >/dev/null && launcher=(ccache)
"${launcher[@]}" ${CXX:-c++} -std=c++17 -O2 -I"$headers/common" -I"$headers/include" \
    -I"$headers/ggml/include" -I"$headers/vendor" -DLLAMA_CHECK_LIBS="\"$libs\"" \
    -c "$src" -o "$out.o"
${CXX:-c++} "$out.o" -o "$out.new" -L"$libs" \
    -l:"$(lib llama-common)" -l:"$(lib llama.)" -l:"$(lib ggml.)" -l:"$(lib ggml-base)" \
    -ldl -Wl,-rpath,"$libs"
rm -f "$out.o"
mv "$out.new" "$out"
