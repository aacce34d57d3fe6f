#pragma once

namespace tandem {

// Training moves the same large buffers every step: tensors packed for the wire, the TLS
// layer's records, the socket's queues. By default the C library hands every allocation above
// 128 KiB straight back to the system when it is freed, so each step faults the same memory in
// again, page by page; in a virtual machine that cost more than encrypting and copying the
// bytes together. This keeps freed memory for reuse: blocks below 32 MiB come from the heap,
// and up to 256 MiB of free heap is kept rather than returned. Call once, at the start of
// main(), before any thread starts. Nothing changes where the C library is not glibc.
void keepFreedMemoryForReuse();

} // namespace tandem
