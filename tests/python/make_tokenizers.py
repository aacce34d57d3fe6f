#!/usr/bin/env python3
"""Trains small BPE tokenizers on a multilingual corpus and writes them as Hugging Face
tokenizer.json files (with a tokenizer_config.json), one folder per kind the supported model
families ship:

  gpt2     byte-level BPE, GPT-2's pre-tokenizing expression, <|endoftext|>
  llama3   Split with Llama 3's expression, then ByteLevel; ignore_merges; BOS template
  qwen2    NFC, Split with Qwen2's expression, ByteLevel; ChatML tokens; an lstrip/rstrip token
  llama2   Prepend and Replace normalizers, BPE over "▁" with byte fallback, <s> template
  mistral  Metaspace (prepend_scheme first, no split) with byte fallback and fuse_unk
  nfkc     NFKC and Lowercase before byte-level BPE, with a Digits pre-tokenizer

Usage: make_tokenizers.py OUTDIR [MERGES]"""

import collections
import json
import os
import sys

import regex

from tokref import bytes_to_unicode

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+"""
          r"""[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
QWEN2 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+"""
         r"""[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")

CORPUS = """The quick brown fox jumps over the lazy dog. It's what we'll do, and they've said
so: the dog doesn't mind. Training a model on text means reading the text, again and again.
Les élèves étudient à l'école; où est la bibliothèque? Ça va très bien, merci.
Der Bär läuft über die Straße. Grüße aus München!
机器学习是人工智能的一个分支。我们在家里训练模型。
मशीन लर्निंग कृत्रिम बुद्धिमत्ता का हिस्सा है। हम घर पर मॉडल बनाते हैं।
التعلم الآلي فرع من الذكاء الاصطناعي. نحن ندرب النماذج في المنزل.
Numbers: 1234567, 3.14159, 2026-11-25. Emoji: 🙂🚀 and more text, text, text.
def train(model, data):
    for step in range(1000):
        loss = model(data)
"""


def learn(words, alphabet, merges_wanted):
    """Plain BPE training: the most frequent adjacent pair, merged everywhere, again."""
    vocab = list(alphabet)
    known = set(vocab)
    seqs = {w: list(w) for w in words}
    merges = []
    for _ in range(merges_wanted):
        pairs = collections.Counter()
        for w, n in words.items():
            s = seqs[w]
            for a, b in zip(s, s[1:]):
                if a in known and b in known:
                    pairs[(a, b)] += n
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append((a, b))
        if a + b not in known:
            vocab.append(a + b)
            known.add(a + b)
        for w in seqs:
            s, out, i = seqs[w], [], 0
            while i < len(s):
                if i + 1 < len(s) and s[i] == a and s[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            seqs[w] = out
    return vocab, merges


def byte_level(pattern, merges, text=CORPUS):
    m = bytes_to_unicode()
    words = collections.Counter(
        "".join(m[b] for b in w.encode()) for w in regex.findall(pattern, text))
    return learn(words, [m[b] for b in range(256)], merges)


def added(tokens, start, special=True, **flags):
    out = []
    for i, t in enumerate(tokens):
        d = {"id": start + i, "content": t, "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False, "special": special}
        d.update(flags)
        out.append(d)
    return out


def template(token, token_id):
    return {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": token, "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {token: {"id": token, "ids": [token_id], "tokens": [token]}}}


def bpe(vocab, merges, as_pairs=False, **flags):
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
             "ignore_merges": False, "vocab": {t: i for i, t in enumerate(vocab)},
             "merges": [[a, b] for a, b in merges] if as_pairs else [a + " " + b for a, b in merges]}
    model.update(flags)
    return model


def split(pattern):
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}


def byte_level_step(use_regex):
    return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
            "use_regex": use_regex}


def metaspace_vocab(merges):
    text = CORPUS.replace(" ", "▁")
    words = collections.Counter(regex.findall(r"▁?[^▁]+|▁+", "▁" + text))
    chars = collections.Counter(c for c in text)
    # rare characters are left to byte fallback
    alphabet = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + sorted(
        c for c, n in chars.items() if n >= 3)
    return learn(words, alphabet, merges)


def write(out, name, tokenizer, config):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    tokenizer = dict({"version": "1.0", "truncation": None, "padding": None}, **tokenizer)
    with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False, indent=1)
    with open(os.path.join(d, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False, indent=1)


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    bl = byte_level_step(True)

    v, m = byte_level(GPT2, n)
    write(out, "gpt2", {"added_tokens": added(["<|endoftext|>"], len(v)), "normalizer": None,
                        "pre_tokenizer": bl, "post_processor": bl, "decoder": bl,
                        "model": bpe(v, m)},
          {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>"})

    v, m = byte_level(LLAMA3, n)
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                "<|end_header_id|>", "<|eot_id|>"]
    write(out, "llama3", {
        "added_tokens": added(specials, len(v)), "normalizer": None,
        "pre_tokenizer": {"type": "Sequence",
                          "pretokenizers": [split(LLAMA3), byte_level_step(False)]},
        "post_processor": {"type": "Sequence",
                           "processors": [bl, template("<|begin_of_text|>", len(v))]},
        "decoder": bl, "model": bpe(v, m, as_pairs=True, ignore_merges=True)},
        {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"})

    v, m = byte_level(QWEN2, n)
    write(out, "qwen2", {
        "added_tokens": added(["<|endoftext|>", "<|im_start|>", "<|im_end|>"], len(v))
        + added(["<tool>"], len(v) + 3, special=False, lstrip=True, rstrip=True),
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [split(QWEN2), byte_level_step(False)]},
        "post_processor": bl, "decoder": bl, "model": bpe(v, m)},
        {"bos_token": None, "eos_token": "<|im_end|>"})

    v, m = metaspace_vocab(n)
    sp_decoder = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    special3 = added(["<unk>", "<s>", "</s>"], 0)
    write(out, "llama2", {
        "added_tokens": special3,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        "pre_tokenizer": None, "post_processor": template("<s>", 1), "decoder": sp_decoder,
        "model": bpe(v, m, unk_token="<unk>", fuse_unk=True, byte_fallback=True)},
        {"bos_token": "<s>", "eos_token": "</s>"})

    write(out, "mistral", {
        "added_tokens": special3, "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first",
                          "split": False},
        "post_processor": template("<s>", 1),
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}]},
        "model": bpe(v, m, unk_token="<unk>", fuse_unk=True, byte_fallback=True)},
        {"bos_token": "<s>", "eos_token": "</s>"})

    v, m = byte_level(GPT2, n, text=CORPUS.lower())
    write(out, "nfkc", {
        "added_tokens": added(["</s>"], len(v)),
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": True}, bl]},
        "post_processor": None, "decoder": bl, "model": bpe(v, m)},
        {"eos_token": "</s>"})


if __name__ == "__main__":
    main()
