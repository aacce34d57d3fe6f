// The CPU's tensor memory cache: freed blocks of 1 MiB to 4 GiB come back for tensors of their
// size, a much larger block is not spent on a small tensor (above 32 MiB one serves a tensor of
// half its size), a share of the batch that changes each step still reuses the last steps'
// blocks, blocks no step took are freed after two steps, what is kept stops at its limit (at 0,
// the cache hands each block out as LibTorch's allocator would), many threads may allocate and free
// at once, and what is kept never lifts the peak.

#include "model/tensormemory.h"
#include "model/torchcompat.h"

#include <QTest>

#include <ATen/ATen.h>

#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

using namespace tandem;

namespace {

at::Tensor bytes(int64_t n) {
    return at::empty({n}, at::kByte);
}

constexpr int64_t MiB = int64_t(1) << 20;

} // namespace

class TestTensorMemory : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void freedBlocksComeBackBySize();
    void smallAndLargeBlocksAreNotKept();
    void aMuchLargerBlockIsNotSpentOnASmallTensor();
    void aLargeBlockServesATensorOfHalfItsSize();
    void keptMemoryStopsAtItsLimit();
    void aCacheThatKeepsNothingHandsOutExactBlocks();
    void aShareThatChangesEachStepReusesItsBlocks();
    void blocksNoStepTookAreFreedAfterTwoSteps();
    void reusedMemoryHoldsWhatIsWritten();
    void threadsAllocateAndFreeAtOnce();
    void keptBlocksNeverLiftThePeak();
};

void TestTensorMemory::init() {
    const char* off = std::getenv("TANDEM_TENSOR_CACHE");
    if (off && std::strcmp(off, "0") == 0)
        QSKIP("TANDEM_TENSOR_CACHE=0 leaves LibTorch's own allocator");
    initTorchRuntime();
    releaseCachedTensorMemory();
    QCOMPARE(tensorMemoryCounts().cachedBytes, int64_t(0));
}

void TestTensorMemory::freedBlocksComeBackBySize() {
    const TensorMemoryCounts before = tensorMemoryCounts();
    at::Tensor t = bytes(3 * MiB + 5);
    const void* where = t.data_ptr();
    t.reset();
    // Rounded up to an eighth of its octave (2 to 4 MiB): 256 KiB.
    QCOMPARE(tensorMemoryCounts().cachedBytes, 3 * MiB + 256 * 1024);
    at::Tensor again = bytes(3 * MiB + 200 * 1024); // the same rounded size
    QCOMPARE(again.data_ptr(), where);
    const TensorMemoryCounts after = tensorMemoryCounts();
    QCOMPARE(after.cachedBytes, int64_t(0));
    QCOMPARE(after.reused, before.reused + 1);
    QCOMPARE(after.fresh, before.fresh + 1);
}

void TestTensorMemory::smallAndLargeBlocksAreNotKept() {
    limitCachedTensorMemory(8192 * MiB);
    bytes(MiB - 1).reset();
    bytes(4096 * MiB + 1).reset(); // never touched: no page of it is ever faulted in
    QCOMPARE(tensorMemoryCounts().cachedBytes, int64_t(0));
    bytes(64 * MiB).reset();
    QCOMPARE(tensorMemoryCounts().cachedBytes, 64 * MiB);
    limitCachedTensorMemory(1024 * MiB);
}

void TestTensorMemory::aMuchLargerBlockIsNotSpentOnASmallTensor() {
    at::Tensor big = bytes(16 * MiB);
    const void* bigAt = big.data_ptr();
    big.reset();
    at::Tensor small = bytes(2 * MiB);
    QVERIFY(small.data_ptr() != bigAt);
    QCOMPARE(tensorMemoryCounts().cachedBytes, 16 * MiB);
    at::Tensor smaller = bytes(11 * MiB); // the block is within half as large again: served
    QCOMPARE(smaller.data_ptr(), bigAt);
}

// A large vocabulary's step: its logits, then their gradient, an embedding's gradient and the
// optimizer's temporaries, each freed before the next. One kept block serves them all, where on
// sizes alone each would keep its own beside the others.
void TestTensorMemory::aLargeBlockServesATensorOfHalfItsSize() {
    // The step held 128 MiB at its most: room for a kept block beside a fresh one.
    bytes(128 * MiB).reset();
    releaseCachedTensorMemory();
    at::Tensor logits = bytes(96 * MiB);
    const void* at = logits.data_ptr();
    logits.reset();
    at::Tensor embeddingGrad = bytes(50 * MiB); // 52 MiB as a size class: within twice
    QCOMPARE(embeddingGrad.data_ptr(), at);
    embeddingGrad.reset();
    at::Tensor small = bytes(24 * MiB); // at most 32 MiB: half as large again, as before
    QVERIFY(small.data_ptr() != at);
    QCOMPARE(tensorMemoryCounts().cachedBytes, 96 * MiB);
}

void TestTensorMemory::keptMemoryStopsAtItsLimit() {
    limitCachedTensorMemory(10 * MiB);
    bytes(8 * MiB).reset();
    QCOMPARE(tensorMemoryCounts().cachedBytes, 8 * MiB);
    bytes(4 * MiB).reset(); // 12 MiB would pass the limit: freed at once
    QCOMPARE(tensorMemoryCounts().cachedBytes, 8 * MiB);
    at::Tensor again = bytes(8 * MiB); // what was kept still serves
    QCOMPARE(tensorMemoryCounts().cachedBytes, int64_t(0));
    limitCachedTensorMemory(1024 * MiB);
}

// A machine that only holds a range of a sharded run keeps nothing: it makes its state once, and
// a kept block up to half as large again as a state tensor it served would hold memory no plan
// counts. Blocks it kept go, and each new one is neither rounded, counted nor kept.
void TestTensorMemory::aCacheThatKeepsNothingHandsOutExactBlocks() {
    bytes(8 * MiB).reset();
    QCOMPARE(tensorMemoryCounts().cachedBytes, 8 * MiB);
    limitCachedTensorMemory(0);
    QCOMPARE(tensorMemoryCounts().cachedBytes, int64_t(0));
    const TensorMemoryCounts before = tensorMemoryCounts();
    at::Tensor state = bytes(6 * MiB + 5);
    QCOMPARE(tensorMemoryCounts().liveBytes, before.liveBytes); // not one of the cache's
    QCOMPARE(tensorMemoryCounts().fresh, before.fresh);
    state.reset();
    QCOMPARE(tensorMemoryCounts().cachedBytes, int64_t(0));
    limitCachedTensorMemory(1024 * MiB);
    bytes(6 * MiB).reset(); // kept again once a limit says so
    QCOMPARE(tensorMemoryCounts().cachedBytes, 6 * MiB);
}

// A worker's share of the batch changes each step (the balancer's), and its activations with
// it, by up to a sixth here. On exact sizes, with blocks at most a quarter larger than asked,
// 52 of these 160 tensors found no kept block and were made afresh, faulted in page by page;
// by size class, and taking blocks up to half as large again, none are after the first steps.
void TestTensorMemory::aShareThatChangesEachStepReusesItsBlocks() {
    const int shares[] = {64, 58, 71, 60, 66, 57, 70, 63, 59, 68, 61, 72, 56, 65, 69, 62};
    int64_t freshAfterWarmUp = 0, taken = 0;
    for (int step = 0; step < 48; ++step) {
        const int share = shares[step % 16];
        const TensorMemoryCounts before = tensorMemoryCounts();
        std::vector<at::Tensor> activations;
        // mnist-cnn's largest per sample: its first convolution's output and its gradient, the
        // pooled output, the flattened features.
        for (int64_t perSample : {86528, 86528, 21632, 36864, 36864})
            activations.push_back(bytes(share * perSample));
        activations.clear();
        tensorMemoryStepDone();
        const TensorMemoryCounts after = tensorMemoryCounts();
        if (step >= 16) {
            freshAfterWarmUp += after.fresh - before.fresh;
            taken += (after.fresh - before.fresh) + (after.reused - before.reused);
        }
    }
    qInfo("after the first 16 steps, %lld of %lld tensors were made afresh",
          qlonglong(freshAfterWarmUp), qlonglong(taken));
    QCOMPARE(taken, int64_t(32 * 5));
    QCOMPARE(freshAfterWarmUp, int64_t(0));
}

void TestTensorMemory::blocksNoStepTookAreFreedAfterTwoSteps() {
    bytes(4 * MiB).reset();
    tensorMemoryStepDone(); // kept during this step: stays for the next
    QCOMPARE(tensorMemoryCounts().cachedBytes, 4 * MiB);
    at::Tensor taken = bytes(4 * MiB);
    taken.reset(); // taken and given back: kept afresh
    tensorMemoryStepDone();
    QCOMPARE(tensorMemoryCounts().cachedBytes, 4 * MiB);
    tensorMemoryStepDone(); // no step took it since
    QCOMPARE(tensorMemoryCounts().cachedBytes, int64_t(0));
    bytes(2 * MiB).reset();
    releaseCachedTensorMemory();
    QCOMPARE(tensorMemoryCounts().cachedBytes, int64_t(0));
}

void TestTensorMemory::reusedMemoryHoldsWhatIsWritten() {
    at::Tensor a = at::full({MiB}, 7.0f);
    a.reset();
    at::Tensor z = at::zeros({MiB}, at::kFloat); // the same block, zeroed
    QCOMPARE(z.sum().item<float>(), 0.0f);
    at::Tensor x = at::arange(MiB, at::kFloat);
    QCOMPARE(x.index({MiB - 1}).item<float>(), float(MiB - 1));
    QCOMPARE((x + 1).sum().item<double>(), double(MiB) * double(MiB + 1) / 2.0);
}

void TestTensorMemory::threadsAllocateAndFreeAtOnce() {
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; ++k)
        threads.emplace_back([k] {
            for (int i = 0; i < 300; ++i) {
                at::Tensor t = bytes((1 + (i + k) % 5) * MiB);
                t.fill_(uint8_t(k));
                if (t.index({t.numel() - 1}).item<uint8_t>() != uint8_t(k))
                    std::abort();
                if (i % 50 == 0)
                    tensorMemoryStepDone();
            }
        });
    for (auto& t : threads)
        t.join();
    QVERIFY(tensorMemoryCounts().cachedBytes >= 0);
    releaseCachedTensorMemory();
    QCOMPARE(tensorMemoryCounts().cachedBytes, int64_t(0));
}

// A sharded worker's step: the backward pass frees blocks of its shapes, then the owner's update
// asks for others. Kept beside them, the backward pass's blocks would lift the process past the
// most its tensors ever held. Sizes past every earlier test's, so that this one sets the peak;
// no page of them is touched.
void TestTensorMemory::keptBlocksNeverLiftThePeak() {
    limitCachedTensorMemory(8192 * MiB);
    bytes(2000 * MiB).reset(); // a 2 GiB block, kept; the peak is 2 GiB
    QCOMPARE(tensorMemoryCounts().cachedBytes, 2048 * MiB);
    at::Tensor other = bytes(600 * MiB); // 640 MiB: the kept block is too large to serve it
    QCOMPARE(tensorMemoryCounts().cachedBytes, int64_t(0));
    QCOMPARE(tensorMemoryCounts().liveBytes, 640 * MiB);
    other.reset();
    releaseCachedTensorMemory();

    {
        at::Tensor a = bytes(2048 * MiB), b = bytes(2048 * MiB); // the peak is 4 GiB
    }
    QCOMPARE(tensorMemoryCounts().cachedBytes, 4096 * MiB);
    other = bytes(600 * MiB); // room for 640 MiB beside one of the kept blocks, not both
    QCOMPARE(tensorMemoryCounts().cachedBytes, 2048 * MiB);
    at::Tensor again = bytes(2048 * MiB); // the one left still serves its size
    QCOMPARE(tensorMemoryCounts().cachedBytes, int64_t(0));
    again.reset();
    other.reset();
    releaseCachedTensorMemory();
    limitCachedTensorMemory(1024 * MiB);
}

QTEST_GUILESS_MAIN(TestTensorMemory)
#include "test_tensormemory.moc"
