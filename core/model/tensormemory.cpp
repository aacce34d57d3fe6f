#include "model/tensormemory.h"

#include "model/torchversion.h"

#include <c10/core/CPUAllocator.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tandem {

namespace {

// Smaller blocks stay with the C library's heap. Larger ones are kept too, up to 4 GiB: the C
// library maps and unmaps every block of more than 32 MiB whole, so each step faulted a large
// vocabulary's logits, its embedding's gradient and the optimizer's temporaries in again, page by
// page. On a Qwen3-vocabulary model of 41 M weights, a step spent more time there than in its
// arithmetic (2.7 samples/s, and 7.9 with them kept).
constexpr size_t kSmallest = size_t(1) << 20;
constexpr size_t kLargest = size_t(4) << 30;
// Above this size a kept block serves a tensor up to half its size: a step's large tensors
// come in a few sizes (logits, their gradient, an embedding's gradient, optimizer
// temporaries) that live at different times, and one block then serves several of them
// rather than each size keeping its own beside the others.
constexpr size_t kLarge = size_t(32) << 20;

// The size a block for n bytes is made at: n rounded up to an eighth of its power of two (at
// least 128 KiB, as n is at least kSmallest), so that blocks come in eight sizes an octave,
// none more than an eighth larger than asked. A worker's share of the batch changes from step
// to step and its activations' sizes with it; on exact sizes, a few of them missed the blocks
// the last step kept every step.
size_t sizeClass(size_t n) {
    size_t octave = kSmallest;
    while (octave * 2 <= n)
        octave *= 2;
    const size_t unit = octave / 8;
    return (n + unit - 1) / unit * unit;
}

// A kept block of the inner allocator's memory.
struct Kept {
    void* memory = nullptr;
    uint64_t keptAt = 0; // the step count when it was handed back
};

// What the cache keeps at most until a run says what its device holds (an eighth of that).
constexpr int64_t kDefaultKeptLimit = int64_t(1) << 30;

class TensorMemoryCache;
// Made once and never destroyed: tensors freed while the process exits still come back to it.
std::atomic<TensorMemoryCache*> g_cache{nullptr};

// LibTorch's allocator interface became non-const in 2.3, when it also gained copy_data. No
// member says `override`, so that copy_data compiles against either. Every block it hands out
// is its own context, freed by the one raw deleter, as LibTorch's raw_allocate and
// raw_deallocate require of a CPU allocator.
class TensorMemoryCache final : public at::Allocator {
public:
    explicit TensorMemoryCache(at::Allocator* inner)
        : m_inner(inner)
        , m_innerFree(inner->raw_deleter()) {}

#if TANDEM_TORCH_AT_LEAST(2, 3)
    at::DataPtr allocate(size_t n) {
        return take(n);
    }
#else
    at::DataPtr allocate(size_t n) const {
        return const_cast<TensorMemoryCache*>(this)->take(n);
    }
#endif
    at::DeleterFnPtr raw_deleter() const {
        return &TensorMemoryCache::giveBack;
    }
    void copy_data(void* dest, const void* src, std::size_t count) const {
        std::memcpy(dest, src, count);
    }

    void stepDone() {
        std::vector<void*> expired;
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            ++m_steps;
            for (auto it = m_kept.begin(); it != m_kept.end();) {
                if (it->second.keptAt + 2 <= m_steps) {
                    m_counts.cachedBytes -= int64_t(it->first);
                    expired.push_back(it->second.memory);
                    it = m_kept.erase(it);
                } else {
                    ++it;
                }
            }
        }
        for (void* p : expired)
            m_innerFree(p);
    }

    void setKeptLimit(int64_t bytes) {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_keptLimit = bytes;
        }
        m_keepsNothing.store(bytes == 0);
        if (bytes == 0)
            releaseAll();
    }

    void releaseAll() {
        std::multimap<size_t, Kept> kept;
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            kept.swap(m_kept);
            m_counts.cachedBytes = 0;
        }
        for (auto& [size, k] : kept)
            m_innerFree(k.memory);
    }

    TensorMemoryCounts counts() {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_counts;
    }

private:
    static void giveBack(void* memory) {
        g_cache.load()->keep(memory);
    }

    at::DataPtr take(size_t n) {
        // A cache that may keep nothing (limitCachedTensorMemory(0)) rounds no size and hands
        // out no kept block: each comes straight from the inner allocator.
        if (n < kSmallest || n > kLargest || m_keepsNothing.load(std::memory_order_relaxed))
            return m_inner->allocate(n); // its own raw deleter: giveBack passes it on
        const size_t size = sizeClass(n);
        void* memory = nullptr;
        std::vector<void*> evicted;
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            // The smallest kept block that holds it, if it is at most half as large again:
            // memory already resident serves it rather than a fresh block beside it (a share
            // that shrinks by a third still reuses its blocks), and a large block is not spent
            // on a small tensor while its own size comes again.
            auto it = m_kept.lower_bound(size);
            const size_t fits = size > kLarge ? size * 2 : size + size / 2;
            if (it != m_kept.end() && it->first <= fits) {
                memory = it->second.memory;
                m_live.emplace(memory, it->first);
                m_counts.liveBytes += int64_t(it->first);
                m_peakLive = std::max(m_peakLive, m_counts.liveBytes);
                m_counts.cachedBytes -= int64_t(it->first);
                m_kept.erase(it);
                ++m_counts.reused;
            } else {
                ++m_counts.fresh;
                spareRoomFor(int64_t(size), evicted);
            }
        }
        for (void* p : evicted)
            m_innerFree(p);
        if (!memory) {
            try {
                memory = m_inner->raw_allocate(size);
            } catch (const std::exception&) {
                releaseAll(); // what is kept must never be what makes the run fail
                memory = m_inner->raw_allocate(size);
            }
            std::lock_guard<std::mutex> lock(m_mutex);
            m_live.emplace(memory, size);
            m_counts.liveBytes += int64_t(size);
            m_peakLive = std::max(m_peakLive, m_counts.liveBytes);
        }
        return at::DataPtr(memory, memory, &TensorMemoryCache::giveBack, at::Device(at::kCPU));
    }

    // A block made afresh never lifts live and kept memory together past the most the live
    // tensors alone have held: kept blocks are given back first, the longest kept (the least
    // likely to be asked for again) first. The cache then fills only the room the step's own
    // peak has made, and a step whose tensors change shape (an owner's update after the
    // backward pass) does not hold the last shape's blocks beside the new ones. m_mutex held.
    void spareRoomFor(int64_t size, std::vector<void*>& evicted) {
        const int64_t live = m_counts.liveBytes + size;
        int64_t over = live + m_counts.cachedBytes - std::max(m_peakLive, live);
        while (over > 0 && !m_kept.empty()) {
            auto oldest = m_kept.begin();
            for (auto it = m_kept.begin(); it != m_kept.end(); ++it)
                if (it->second.keptAt < oldest->second.keptAt ||
                    (it->second.keptAt == oldest->second.keptAt && it->first > oldest->first))
                    oldest = it;
            over -= int64_t(oldest->first);
            m_counts.cachedBytes -= int64_t(oldest->first);
            evicted.push_back(oldest->second.memory);
            m_kept.erase(oldest);
        }
    }

    void keep(void* memory) {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            auto it = m_live.find(memory);
            if (it != m_live.end()) {
                const size_t size = it->second;
                m_live.erase(it);
                m_counts.liveBytes -= int64_t(size);
                // Past the limit it goes back at once: what is kept stays a small part of the
                // memory the run was sized to.
                if (m_counts.cachedBytes + int64_t(size) <= m_keptLimit) {
                    m_kept.emplace(size, Kept{memory, m_steps});
                    m_counts.cachedBytes += int64_t(size);
                    return;
                }
            }
        }
        m_innerFree(memory); // not one of the cache's blocks, or past the limit
    }

    at::Allocator* m_inner;
    at::DeleterFnPtr m_innerFree;
    std::mutex m_mutex;
    std::unordered_map<void*, size_t> m_live; // handed out, by address: their rounded sizes
    std::multimap<size_t, Kept> m_kept;       // freed and kept, by size
    uint64_t m_steps = 0;
    int64_t m_keptLimit = kDefaultKeptLimit;
    std::atomic<bool> m_keepsNothing{false}; // m_keptLimit is 0: read without the lock
    int64_t m_peakLive = 0;                  // the most the blocks handed out have held at once
    TensorMemoryCounts m_counts;
};

} // namespace

void installTensorMemoryCache() {
    static std::once_flag once;
    std::call_once(once, [] {
        const char* off = std::getenv("TANDEM_TENSOR_CACHE");
        if (off && std::strcmp(off, "0") == 0)
            return;
        at::Allocator* inner = c10::GetCPUAllocator();
        if (!inner->raw_deleter())
            return; // an allocator whose blocks need their context: left as it is
        auto* cache = new TensorMemoryCache(inner);
        g_cache.store(cache);
        c10::SetCPUAllocator(cache);
    });
}

void tensorMemoryStepDone() {
    if (TensorMemoryCache* c = g_cache.load())
        c->stepDone();
}

void limitCachedTensorMemory(int64_t bytes) {
    if (TensorMemoryCache* c = g_cache.load())
        c->setKeptLimit(std::max<int64_t>(bytes, 0));
}

void releaseCachedTensorMemory() {
    if (TensorMemoryCache* c = g_cache.load())
        c->releaseAll();
}

TensorMemoryCounts tensorMemoryCounts() {
    TensorMemoryCache* c = g_cache.load();
    return c ? c->counts() : TensorMemoryCounts{};
}

} // namespace tandem
