// Byte-pair encoding of one word, as Hugging Face's BPE model does it: the word's characters
// (or, for one the vocabulary lacks, its UTF-8 bytes as "<0xNN>" tokens, or the unknown token)
// are merged pair by pair, always the pair of the lowest rank, the leftmost among equals. A
// heap keeps that O(n log n), for SentencePiece-style files whose words are whole paragraphs.

#include "formats/tokenizerparts.h"

#include <queue>

namespace tandem {

const std::vector<char32_t>& byteToChar() {
    static const std::vector<char32_t> map = [] {
        std::vector<char32_t> m(256, 0);
        std::vector<bool> printable(256, false);
        for (int b = '!'; b <= '~'; ++b)
            printable[b] = true;
        for (int b = 0xA1; b <= 0xAC; ++b)
            printable[b] = true;
        for (int b = 0xAE; b <= 0xFF; ++b)
            printable[b] = true;
        char32_t next = 256;
        for (int b = 0; b < 256; ++b)
            m[b] = printable[b] ? char32_t(b) : next++;
        return m;
    }();
    return map;
}

int byteOfChar(char32_t c) {
    static const QHash<char32_t, int> back = [] {
        QHash<char32_t, int> h;
        const auto& m = byteToChar();
        for (int b = 0; b < 256; ++b)
            h.insert(m[b], b);
        return h;
    }();
    return back.value(c, -1);
}

namespace {

struct Symbol {
    int32_t id;
    int prev;
    int next;
    bool alive;
};

struct Candidate {
    int32_t rank;
    int pos;
    int32_t merged;
    bool operator>(const Candidate& o) const {
        return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
};

quint64 pairKey(int32_t a, int32_t b) {
    return (quint64(uint32_t(a)) << 32) | uint32_t(b);
}

} // namespace

void BpeModel::encodeWord(QStringView word, std::vector<int32_t>& out) const {
    if (ignoreMerges) {
        const auto whole = vocab.constFind(word.toString());
        if (whole != vocab.constEnd()) {
            out.push_back(*whole);
            return;
        }
    }
    std::vector<Symbol> s;
    s.reserve(size_t(word.size()));
    auto push = [&](int32_t id) { s.push_back({id, int(s.size()) - 1, int(s.size()) + 1, true}); };
    bool lastUnk = false;
    for (qsizetype i = 0; i < word.size();) {
        char32_t c = word[i].unicode();
        qsizetype len = 1;
        if (word[i].isHighSurrogate() && i + 1 < word.size() && word[i + 1].isLowSurrogate()) {
            c = QChar::surrogateToUcs4(word[i], word[i + 1]);
            len = 2;
        }
        const auto known = chars.constFind(c);
        if (known != chars.constEnd()) {
            push(*known);
            lastUnk = false;
        } else {
            bool fellBack = byteFallback;
            if (byteFallback) {
                const QByteArray utf8 = word.mid(i, len).toUtf8();
                for (char b : utf8)
                    fellBack = fellBack && byteIds[uchar(b)] >= 0;
                if (fellBack)
                    for (char b : utf8)
                        push(byteIds[uchar(b)]);
            }
            if (!fellBack && unk >= 0) {
                if (!(fuseUnk && lastUnk))
                    push(unk);
                lastUnk = true;
            } else {
                lastUnk = false;
            }
        }
        i += len;
    }
    if (s.empty())
        return;
    s.back().next = -1;

    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
    auto consider = [&](int left) {
        if (left < 0 || s[left].next < 0)
            return;
        const auto m = merges.constFind(pairKey(s[left].id, s[s[left].next].id));
        if (m != merges.constEnd())
            heap.push({m->first, left, m->second});
    };
    for (int i = 0; i + 1 < int(s.size()); ++i)
        consider(i);
    while (!heap.empty()) {
        const Candidate c = heap.top();
        heap.pop();
        Symbol& left = s[size_t(c.pos)];
        if (!left.alive || left.next < 0)
            continue;
        const auto m = merges.constFind(pairKey(left.id, s[size_t(left.next)].id));
        if (m == merges.constEnd() || m->first != c.rank || m->second != c.merged)
            continue; // stale: one side was merged since
        Symbol& right = s[size_t(left.next)];
        right.alive = false;
        left.id = c.merged;
        left.next = right.next;
        if (right.next >= 0)
            s[size_t(right.next)].prev = c.pos;
        consider(left.prev);
        consider(c.pos);
    }
    for (int i = 0; i >= 0; i = s[size_t(i)].next)
        out.push_back(s[size_t(i)].id);
}

} // namespace tandem
