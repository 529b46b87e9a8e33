#!/usr/bin/env python3
"""Writes a random, unmasked long scenario for the long-sequence measurements in the README
(`gui --scenario long4.json --frame-stats --edit-stats 6`, …): N tokens t0 … t(N-1), H heads,
d_k = d_v = 16, values drawn from a normal distribution (seeded, three decimals).

    python3 scripts/make-long-scenario.py --tokens 4096 --heads 4 --out long4.json
"""
import argparse
import json
import random
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=4096)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--dim", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.tokens < 1 or a.heads < 1 or a.dim < 1:
        sys.exit("error: --tokens, --heads and --dim must be at least 1")
    rng = random.Random(a.seed)

    def matrix():
        return [[round(rng.gauss(0, 1), 3) for _ in range(a.dim)] for _ in range(a.tokens)]

    scenario = {
        "format": "attention-lab-scenario",
        "version": 1,
        "name": "long%d" % a.heads,
        "query_tokens": ["t%d" % i for i in range(a.tokens)],
        "q": [matrix() for _ in range(a.heads)],
        "k": [matrix() for _ in range(a.heads)],
        "v": [matrix() for _ in range(a.heads)],
    }
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(scenario, f)


if __name__ == "__main__":
    main()
