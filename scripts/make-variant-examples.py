#!/usr/bin/env python3
"""Writes the built-in examples for issue 16's variants: assets/examples/linformer.json,
assets/examples/multi-token.json and assets/examples/head-mixing.json. Plain Python, no dependencies; rerun after changing the numbers.
It checks (in double precision, from cli.md's formulas) that the multi-token example shows what it
claims: one query-key pair at a time spreads the weight over every "Alice" and "rabbit", while the
key convolution puts most of it on the one sentence holding both."""
import json
import math
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "assets" / "examples"


def write(name, scenario):
    text = json.dumps(scenario, indent=2, ensure_ascii=False)
    (OUT / (name + ".json")).write_text(text + "\n", encoding="utf-8")


def softmax(row):
    m = max(row)
    e = [math.exp(x - m) for x in row]
    s = sum(e)
    return [x / s for x in e]


# ---- Multi-Token Attention: find the sentence where two words occur together ---------------
text = ("Alice saw a cat . The old rabbit ran far away . Then Alice met the rabbit . "
        "Much later that day Bob fed his rabbit .").split()
words = ["Alice", "rabbit", "cat", "Bob"]
dims = words + ["other"]


def key_of(tok):
    v = [0.0] * len(dims)
    v[dims.index(tok) if tok in words else len(words)] = 1.0
    return v


queries = [("Alice+rabbit?", ["Alice", "rabbit"]), ("Alice+cat?", ["Alice", "cat"]),
           ("Bob+rabbit?", ["Bob", "rabbit"])]
STRENGTH = 6.0  # q·k for a matching word; the scale 1/√5 is applied on top
q = [[STRENGTH if d in pair else 0.0 for d in dims] for _, pair in queries]
k = [key_of(t) for t in text]
# Values: which sentence a token belongs to (one-hot over the four sentences), so the output
# reads as "how much of each sentence the query gathered".
sentence, v = 0, []
for t in text:
    v.append([1.0 if s == sentence else 0.0 for s in range(4)])
    if t == ".":
        sentence += 1
C_K = 5
theta = [[1.0] * C_K]  # sum the scores of the key and its two neighbours on each side
scale = 1 / math.sqrt(len(dims))


def check():
    n = len(text)
    for qi, (name, pair) in enumerate(queries):
        s = [scale * sum(a * b for a, b in zip(q[qi], k[j])) for j in range(n)]
        c = [sum(theta[0][b] * s[j - b + C_K // 2] for b in range(C_K)
                 if 0 <= j - b + C_K // 2 < n) for j in range(n)]
        plain, conv = softmax(s), softmax(c)
        out_plain = [sum(plain[j] * v[j][x] for j in range(n)) for x in range(4)]
        out_conv = [sum(conv[j] * v[j][x] for j in range(n)) for x in range(4)]
        best = max(range(4), key=lambda x: out_conv[x])
        print(f"{name:14} plain sentence mix {[round(x, 2) for x in out_plain]}"
              f"  convolved {[round(x, 2) for x in out_conv]}  -> sentence {best}")
        if out_conv[best] < 0.6 or max(out_plain) > 0.55:
            sys.exit(f"{name}: the example does not show the point")


check()
write("multi-token", {
    "format": "attention-lab-scenario", "version": 1, "name": "multi-token",
    "description": "Multi-Token Attention: which sentence has both words? One query–key pair "
                   "cannot tell; a 1 × 5 key convolution of the scores can",
    "query_tokens": [name for name, _ in queries], "key_tokens": text,
    "q": q, "k": k, "v": v,
    "multi_token": {"kq_conv": theta},
})

# ---- Head mixing: two heads, one clue each; their blend finds the sentence with both ---------
# Two query heads share one key/value head: head 0 asks for the first word, head 1 for the
# second. Every word occurs in at least two sentences, so neither head alone can name the
# sentence; with head mixing (groups of 2, M = [[1/2, 1/2], [1/2, 1/2]]) each head's weights
# become the average of both, and the one sentence holding both words gets the most.
mix_text = ("Alice saw a cat . The old rabbit ran far away . Then Alice met the rabbit . "
            "Much later Bob fed his rabbit . Bob saw the cat .").split()
mix_queries = [("Alice+rabbit?", ["Alice", "rabbit"]), ("Alice+cat?", ["Alice", "cat"]),
               ("Bob+rabbit?", ["Bob", "rabbit"]), ("Bob+cat?", ["Bob", "cat"])]
mix_sentences = " ".join(mix_text).split(" . ")
MIX_STRENGTH = 10.0  # strong enough that each head puts ~all its weight on its word
mix_q = [[[MIX_STRENGTH if d == pair[h] else 0.0 for d in dims] for _, pair in mix_queries]
         for h in range(2)]
mix_k = [key_of(t) for t in mix_text]
sentence, mix_v = 0, []
for t in mix_text:
    mix_v.append([1.0 if s == sentence else 0.0 for s in range(len(mix_sentences))])
    if t == ".":
        sentence += 1
MIX = [[[0.5, 0.5], [0.5, 0.5]]]


def check_mix():
    n, ns = len(mix_text), len(mix_sentences)
    for qi, (name, pair) in enumerate(mix_queries):
        for word in pair:
            if sum(word in sent.split() for sent in mix_sentences) < 2:
                sys.exit(f"{word} occurs in one sentence only: one head alone would find it")
        per_head = [softmax([scale * sum(a * b for a, b in zip(mix_q[h][qi], mix_k[j]))
                             for j in range(n)]) for h in range(2)]
        outs = [[sum(w[j] * mix_v[j][x] for j in range(n)) for x in range(ns)] for w in per_head]
        mixed = [sum(MIX[0][0][b] * per_head[b][j] for b in range(2)) for j in range(n)]
        out_mix = [sum(mixed[j] * mix_v[j][x] for j in range(n)) for x in range(ns)]
        best = max(range(ns), key=lambda x: out_mix[x])
        truth = [i for i, sent in enumerate(mix_sentences) if all(w in sent.split() for w in pair)]
        print(f"{name:14} head 0 {[round(x, 2) for x in outs[0]]}  head 1 "
              f"{[round(x, 2) for x in outs[1]]}  mixed {[round(x, 2) for x in out_mix]}"
              f"  -> sentence {best}")
        top = sorted(out_mix)
        if truth != [best] or top[-1] - top[-2] < 0.15:
            sys.exit(f"{name}: the head-mixing example does not show the point")


check_mix()
write("head-mixing", {
    "format": "attention-lab-scenario", "version": 1, "name": "head-mixing",
    "description": "Multi-Token Attention's head mixing: head 0 looks for one word, head 1 for "
                   "the other; averaging their weights finds the sentence holding both",
    "query_tokens": [name for name, _ in mix_queries], "key_tokens": mix_text,
    "q": mix_q, "k": [mix_k], "v": [mix_v],
    "multi_token": {"head_mix": MIX},
})

# ---- Linformer: 24 tokens attend to k = 6 projected keys ---------------------------------------
rng = random.Random(16)
tokens = ("the model reads every word of a long sentence but a Linformer keeps only six "
          "mixtures of its keys and values for each query").split()
assert len(tokens) == 24, len(tokens)
n, d, kk = len(tokens), 4, 6


def one_decimal():
    return round(rng.uniform(-0.9, 0.9), 1)


Q = [[one_decimal() for _ in range(d)] for _ in range(n)]
K = [[one_decimal() for _ in range(d)] for _ in range(n)]
V = [[one_decimal() for _ in range(d)] for _ in range(n)]
E = [[round(rng.gauss(0, 1 / math.sqrt(kk)), 2) for _ in range(n)] for _ in range(kk)]
F = [[round(rng.gauss(0, 1 / math.sqrt(kk)), 2) for _ in range(n)] for _ in range(kk)]
write("linformer", {
    "format": "attention-lab-scenario", "version": 1, "name": "linformer",
    "description": "Linformer: the keys and values of 24 tokens projected to k = 6 virtual keys "
                   "(E, F ~ N(0, 1/k)); 24 × 6 weights instead of 24 × 24",
    "query_tokens": tokens, "q": Q, "k": K, "v": V,
    "linformer": {"e": E, "f": F},
})
