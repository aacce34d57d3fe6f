#pragma once

#include "engine/internal.h"

// Engine-internal: streaming local-SGD's fragments. The parameters are cut into F runs of
// consecutive tensors of about equal size. Round r synchronises fragment r mod F only, so each
// parameter is synchronised once every F rounds (H inner steps), offset from the next fragment
// by one round (H/F steps), and each exchange moves 1/F of the model.
//
// A worker never waits for a fragment in flight: it is given the next round before the current
// one ends, sends fragment k's delta at the end of round r and goes on training; the outer
// update of k reaches it with round r + 2, and the inner steps it took meanwhile are rebased
// onto the new global values rather than thrown away (FragmentTracker::merge).

#include "engine/wire/wiretensors.h"

#include <ATen/ATen.h>

#include <vector>

namespace tandem {

struct Fragment {
    size_t firstParam = 0, endParam = 0; // parameter tensors [first, end), schema order
    int64_t offset = 0, count = 0;       // their values' place in the flat parameter vector
};

// Cuts tensors of these sizes (schema order) into min(f, tensors) fragments of consecutive
// tensors, each as close to an equal share of the values as whole tensors allow. Every tensor
// is in exactly one fragment, and no fragment is empty.
std::vector<Fragment> cutFragments(const std::vector<int64_t>& numels, int f);
std::vector<int64_t> paramNumels(const ModelLayout& layout);
std::vector<int64_t> paramNumels(const std::vector<at::Tensor>& params);

// The fragment's values as one flat float32 CPU vector.
at::Tensor gatherFragment(const std::vector<at::Tensor>& params, const Fragment& f);
// The fragment's tensors of `grads` (schema order; a round's delta) in the wire dtype `wire`,
// as a sharded streaming round sends them (shardstep.h's fragmentWindows()): the last tensor
// first, each tensor's values in their own order, which is the fragment's run of a gradient
// bundle.
QByteArray packFragment(const std::vector<at::Tensor>& grads, const Fragment& f, DType wire);
// Writes tensors that landed for the fragment (each of its tensors, flat order aside) into
// `params`, on their device and in their dtype.
void copyFragment(std::vector<at::Tensor>& params, const Fragment& f,
                  const std::vector<at::Tensor>& values);
// Adds a flat vector to the fragment's tensors, on their device.
void addToFragment(std::vector<at::Tensor>& params, const Fragment& f, const at::Tensor& flat);
// A gradient list with the flat vector in the fragment's tensors and nothing elsewhere: the
// outer optimizer then leaves every other parameter, and its momentum, as it is.
std::vector<at::Tensor> fragmentGrads(const at::Tensor& flat, const Fragment& f,
                                      const std::vector<std::vector<int64_t>>& shapes);
std::vector<at::Tensor> fragmentGrads(const at::Tensor& flat, const Fragment& f,
                                      const std::vector<at::Tensor>& like);

// A worker's side of the fragments: for each, the global values it last merged until it sends
// the fragment's delta, and from then until the fragment's update comes, where its own copy
// stood when it sent it. With two fragments or more that is one copy of the model in all: a
// fragment's update reaches the worker before the fragment is sent again. With one fragment,
// sent every round, both are kept.
class FragmentTracker {
public:
    // The weights were taken whole: every fragment starts from them.
    void restart(const std::vector<at::Tensor>& params, int fragments);
    bool started() const { return !m_frags.empty(); }
    int fragments() const { return m_requested; }
    int count() const { return int(m_frags.size()); }
    const Fragment& at(int k) const { return m_frags[size_t(k)]; }

    // Fragment k's new global values arrived. The steps taken since its delta was sent stay:
    // the parameters become global + (now - as sent).
    void merge(int k, const at::Tensor& global, std::vector<at::Tensor>& params);
    // Fragment k's outer delta (the global values last merged minus where the parameters are
    // now, DiLoCo's outer gradient); remembers the parameters as sent.
    // Refuses a second send of fragment k before its update (with two fragments or more).
    at::Tensor delta(int k, const std::vector<at::Tensor>& params);
    // The values this tracker keeps, over every fragment.
    int64_t heldValues() const;

private:
    int m_requested = 0;
    std::vector<Fragment> m_frags;
    std::vector<at::Tensor> m_global; // undefined from a send until the update (2+ fragments)
    std::vector<at::Tensor> m_sent;   // undefined outside that time
};

} // namespace tandem
