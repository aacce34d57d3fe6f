#pragma once

namespace tandem {

// Training moves the same large buffers every step: tensors packed for the wire, the TLS
// layer's records, the socket's queues. By default the C library hands every allocation above
// 128 KiB straight back to the system when it is freed, so each step faults the same memory in
// again, page by page; in a virtual machine that cost more than encrypting and copying the
// bytes together. This keeps freed memory for reuse: blocks below 4 MiB come from the heap,
// and up to 256 MiB of free heap is kept rather than returned. Larger blocks are mapped and
// unmapped whole: kept on the heap, a training step's activations left holes between the
// long-lived tensors made beside them that the heap never returned (a 33.6 M-weight model's
// run held 440 MiB more than it used, past its memory plan). Tensors of 1 to 32 MiB are kept
// for reuse by the tensor memory cache instead (model/tensormemory.h), which cannot fragment.
// Call once, at the start of main(), before any thread starts. Nothing changes where the C
// library is not glibc.
void keepFreedMemoryForReuse();

} // namespace tandem
