#!/usr/bin/env python3
"""A plain reference for the tokenizer.json pipeline, written from Hugging Face's published
description of each component (normalizers, pre-tokenizers, BPE, post-processors, decoders)
and the original GPT-2/SentencePiece BPE algorithm, not from Tandem's code: BPE here merges the
lowest-ranked pair, leftmost first, one at a time over a list, with no heap and no cache.

Usage: tokref.py TOKENIZER_DIR < strings.json > result.json
Reads a JSON list of strings; writes [{"ids": [...], "plain": [...], "text": "..."}]: the ids
with the post-processor's tokens, without them, and the decoding of the latter."""

import json
import os
import sys
import unicodedata

import regex


def bytes_to_unicode():
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
          + list(range(ord("®"), ord("ÿ") + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


B2U = bytes_to_unicode()
U2B = {c: b for b, c in B2U.items()}
GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def pattern(p):
    return regex.escape(p["String"]) if "String" in p else p["Regex"]


def normalize(n, s):
    if n is None:
        return s
    t = n["type"]
    if t == "Sequence":
        for m in n["normalizers"]:
            s = normalize(m, s)
        return s
    if t in ("NFC", "NFD", "NFKC", "NFKD"):
        return unicodedata.normalize(t, s)
    if t == "Lowercase":
        return s.lower()
    if t == "Prepend":
        return n["prepend"] + s if s else s
    if t == "Replace":
        p = n["pattern"]
        return s.replace(p["String"], n["content"]) if "String" in p else regex.sub(
            p["Regex"], n["content"], s)
    raise ValueError("normalizer " + t)


def split(pieces, expr, behavior, invert=False):
    out = []
    for text, first in pieces:
        parts, at = [], 0
        for m in regex.finditer(expr, text):
            if m.end() == m.start():
                continue
            if m.start() > at:
                parts.append((text[at:m.start()], invert))
            parts.append((m.group(0), not invert))
            at = m.end()
        if at < len(text):
            parts.append((text[at:], invert))
        words = []
        if behavior == "Isolated":
            words = [p for p, _ in parts]
        elif behavior == "Removed":
            words = [p for p, is_match in parts if not is_match]
        elif behavior == "MergedWithPrevious":
            prev = False
            for p, is_match in parts:
                if is_match and not prev and words:
                    words[-1] += p
                else:
                    words.append(p)
                prev = is_match
        elif behavior == "MergedWithNext":
            nxt = False
            for p, is_match in reversed(parts):
                if is_match and not nxt and words:
                    words[-1] = p + words[-1]
                else:
                    words.append(p)
                nxt = is_match
            words.reverse()
        else:
            raise ValueError("behavior " + behavior)
        for i, w in enumerate(words):
            out.append((w, first and i == 0 and text.startswith(w)))
    return out


def pre_tokenize(p, pieces):
    if p is None:
        return pieces
    t = p["type"]
    if t == "Sequence":
        for q in p["pretokenizers"]:
            pieces = pre_tokenize(q, pieces)
        return pieces
    if t == "Split":
        return split(pieces, pattern(p["pattern"]), p["behavior"], p.get("invert", False))
    if t == "ByteLevel":
        if p.get("add_prefix_space"):
            pieces = [(w if w.startswith(" ") else " " + w, f) for w, f in pieces]
        if p.get("use_regex", True):
            pieces = split(pieces, GPT2, "Isolated")
        return [("".join(B2U[b] for b in w.encode("utf-8")), f) for w, f in pieces]
    if t == "Metaspace":
        rep = p["replacement"]
        scheme = p.get("prepend_scheme", "always")
        out = []
        for w, f in pieces:
            w = w.replace(" ", rep)
            if not w.startswith(rep) and (scheme == "always" or (scheme == "first" and f)):
                w = rep + w
            out.append((w, f))
        return split(out, regex.escape(rep), "MergedWithNext") if p.get("split", True) else out
    if t == "Digits":
        return split(pieces, r"\p{N}" if p["individual_digits"] else r"\p{N}+", "Isolated")
    raise ValueError("pre-tokenizer " + t)


class Bpe:
    def __init__(self, m):
        self.vocab = m["vocab"]
        self.ranks = {}
        for i, mg in enumerate(m["merges"]):
            a, b = mg if isinstance(mg, list) else mg.split(" ")
            self.ranks.setdefault((a, b), i)
        self.unk = m.get("unk_token")
        self.fuse = m.get("fuse_unk", False)
        self.fallback = m.get("byte_fallback", False)
        self.ignore = m.get("ignore_merges", False)

    def word(self, w):
        if self.ignore and w in self.vocab:
            return [self.vocab[w]]
        syms = []
        last_unk = False
        for c in w:
            if c in self.vocab:
                syms.append(c)
                last_unk = False
                continue
            hexes = ["<0x%02X>" % b for b in c.encode("utf-8")]
            if self.fallback and all(h in self.vocab for h in hexes):
                syms.extend(hexes)
                last_unk = False
            elif self.unk is not None:
                if not (self.fuse and last_unk):
                    syms.append(self.unk)
                last_unk = True
        while True:
            best = None
            for i in range(len(syms) - 1):
                r = self.ranks.get((syms[i], syms[i + 1]))
                if r is not None and (best is None or r < best[0]):
                    best = (r, i)
            if best is None:
                break
            i = best[1]
            syms[i:i + 2] = [syms[i] + syms[i + 1]]
        return [self.vocab[s] for s in syms]


def decode_chain(d, tokens):
    t = d["type"]
    if t == "Sequence":
        for e in d["decoders"]:
            tokens = decode_chain(e, tokens)
        return tokens
    if t == "ByteLevel":
        return [bytes(U2B[c] if c in U2B else 0 for c in tok.decode("utf-8")) for tok in tokens]
    if t == "Replace":
        a, b = d["pattern"]["String"].encode(), d["content"].encode()
        return [tok.replace(a, b) for tok in tokens]
    if t == "ByteFallback":
        out = []
        for tok in tokens:
            if len(tok) == 6 and tok.startswith(b"<0x") and tok.endswith(b">"):
                out.append(bytes([int(tok[3:5], 16)]))
            else:
                out.append(tok)
        return out
    if t == "Fuse":
        return [b"".join(tokens)]
    if t == "Strip":
        c = d["content"].encode()
        out = []
        for tok in tokens:
            for _ in range(d["start"]):
                if tok.startswith(c):
                    tok = tok[len(c):]
            for _ in range(d["stop"]):
                if tok.endswith(c):
                    tok = tok[:-len(c)]
            out.append(tok)
        return out
    if t == "Metaspace":
        rep = d["replacement"].encode()
        out = []
        for i, tok in enumerate(tokens):
            tok = tok.replace(rep, b" ")
            if i == 0 and d.get("prepend_scheme", "always") != "never" and tok.startswith(b" "):
                tok = tok[1:]
            out.append(tok)
        return out
    raise ValueError("decoder " + t)


class Tokenizer:
    def __init__(self, folder):
        with open(os.path.join(folder, "tokenizer.json"), encoding="utf-8") as f:
            self.t = json.load(f)
        self.bpe = Bpe(self.t["model"])
        self.added = sorted(self.t["added_tokens"], key=lambda a: -len(a["content"]))
        self.id_to_token = {i: s for s, i in self.t["model"]["vocab"].items()}
        for a in self.added:
            self.id_to_token[a["id"]] = a["content"]

    def find_added(self, text, start):
        """The leftmost added token at or after start, the longest there: (begin, end, id)."""
        for i in range(start, len(text)):
            for a in self.added:
                c = a["content"]
                if not text.startswith(c, i):
                    continue
                b, e = i, i + len(c)
                if a.get("single_word") and ((b > 0 and regex.match(r"\w", text[b - 1]))
                                             or (e < len(text) and regex.match(r"\w", text[e]))):
                    continue
                if a.get("lstrip"):
                    while b > start and text[b - 1].isspace():
                        b -= 1
                if a.get("rstrip"):
                    while e < len(text) and text[e].isspace():
                        e += 1
                return b, e, a["id"]
        return None

    def stretch(self, s, first):
        s = normalize(self.t.get("normalizer"), s)
        ids = []
        for w, _ in pre_tokenize(self.t.get("pre_tokenizer"), [(s, first)]):
            if w:
                ids.extend(self.bpe.word(w))
        return ids

    def encode(self, text):
        ids, at = [], 0
        while True:
            found = self.find_added(text, at)
            if found is None:
                break
            b, e, i = found
            if b > at:
                ids.extend(self.stretch(text[at:b], at == 0))
            ids.append(i)
            at = e
        if at < len(text):
            ids.extend(self.stretch(text[at:], at == 0))
        return ids

    def with_template(self, ids):
        p = self.t.get("post_processor")
        procs = [] if p is None else p["processors"] if p["type"] == "Sequence" else [p]
        for q in procs:
            if q["type"] == "TemplateProcessing":
                pre, post, after = [], [], False
                for item in q["single"]:
                    if "Sequence" in item:
                        after = True
                        continue
                    name = item["SpecialToken"]["id"]
                    (post if after else pre).extend(q["special_tokens"][name]["ids"])
                ids = pre + ids + post
        return ids

    def decode(self, ids):
        tokens = [self.id_to_token[i].encode("utf-8") for i in ids]
        d = self.t.get("decoder")
        if d is None:
            return b" ".join(tokens)
        return b"".join(decode_chain(d, tokens))


def main():
    tok = Tokenizer(sys.argv[1])
    out = []
    for s in json.load(sys.stdin):
        plain = tok.encode(s)
        out.append({"ids": tok.with_template(plain), "plain": plain,
                    "text": tok.decode(plain).decode("utf-8", "replace")})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
