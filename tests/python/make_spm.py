#!/usr/bin/env python3
"""Trains a small SentencePiece BPE model with byte fallback, as Llama 2's and Mistral's
tokenizer.model (identity normalization, the dummy prefix, spaces kept), on the corpus of
make_tokenizers.py, and encodes strings with SentencePiece itself: the reference for a
tokenizer.model read by Tandem.

Usage: make_spm.py OUTDIR < strings.json > ids.json
  OUTDIR/bpe/tokenizer.model; stdout: [{"ids": [...], "text": decode(ids)}, ...], one per
  string. Also two models Tandem refuses: OUTDIR/unigram (a unigram model) and OUTDIR/nfkc (BPE
  with SentencePiece's default nmt_nfkc normalization)."""

import io
import json
import os
import sys

import sentencepiece as spm

from make_tokenizers import CORPUS


def train(out, name, **options):
    lines = [line for line in CORPUS.split("\n") if line.strip()] * 4
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model,
                                   vocab_size=700, hard_vocab_limit=False, minloglevel=2,
                                   **options)
    os.makedirs(os.path.join(out, name), exist_ok=True)
    with open(os.path.join(out, name, "tokenizer.model"), "wb") as f:
        f.write(model.getvalue())
    return model.getvalue()


def main():
    out = sys.argv[1]
    model = train(out, "bpe", model_type="bpe", byte_fallback=True, character_coverage=0.995,
                  normalization_rule_name="identity", remove_extra_whitespaces=False,
                  user_defined_symbols=["<tool>"])
    train(out, "unigram", model_type="unigram", normalization_rule_name="identity",
          remove_extra_whitespaces=False)
    train(out, "nfkc", model_type="bpe")
    sp = spm.SentencePieceProcessor(model_proto=model)
    result = []
    for s in json.load(sys.stdin):
        ids = sp.encode(s)
        result.append({"ids": ids, "text": sp.decode(ids)})
    json.dump(result, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
