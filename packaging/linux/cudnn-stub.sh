#!/bin/sh
# cudnn-stub.sh DIR — writes DIR/libcudnn.so.9: a stand-in for cuDNN 9 with its name, its
# symbol version and every function the installed LibTorch CUDA libraries import from it, each
# of which stops the process with a message if it is ever called. It lets a machine without
# cuDNN (Debian's nvidia-cudnn downloads it from NVIDIA at install time) link Tandem against
# the CUDA build of LibTorch and load it to run the CPU tests. Never install it on a machine
# with a GPU: install cuDNN there.
set -eu
out=$1
mkdir -p "$out"
syms=$(for lib in /usr/lib/*/libtorch_cuda.so /usr/lib/*/libtorch_python.so; do
    [ -e "$lib" ] && objdump -T "$lib" | awk '/\*UND\*/ && /\(libcudnn\.so\.9\)/ { print $NF }'
done | sort -u)
[ -n "$syms" ] || { echo "cudnn-stub: no LibTorch CUDA library imports cuDNN here" >&2; exit 1; }
{
    echo '#include <stdio.h>'
    echo '#include <stdlib.h>'
    echo 'static void missing(const char* f) {'
    echo '    fprintf(stderr, "%s: cuDNN is not installed (libcudnn.so.9 here is a stand-in)\n", f);'
    echo '    abort();'
    echo '}'
    for s in $syms; do echo "void $s(void) { missing(\"$s\"); }"; done
} >"$out/cudnn-stub.c"
echo 'libcudnn.so.9 { global: *; };' >"$out/cudnn-stub.map"
cc -shared -fPIC -O1 -o "$out/libcudnn.so.9" -Wl,-soname,libcudnn.so.9 \
    -Wl,--version-script,"$out/cudnn-stub.map" "$out/cudnn-stub.c"
echo "cudnn-stub: $out/libcudnn.so.9 stands in for $(echo "$syms" | wc -l) cuDNN functions"
