#!/usr/bin/env python3
"""Writes a random, unmasked long scenario for the long-sequence measurements in the README
(`gui --scenario long4.json --frame-stats --edit-stats 6`, …): N tokens t0 … t(N-1), H heads,
d_k = d_v = 16, values drawn from a normal distribution (seeded, three decimals). With
--kq-conv, --head-mix or --linformer K it turns on the variants the variant views window shows
(`gui --tab variant-views --frame-stats`, see docs/app.md); Linformer excludes the convolution.

    python3 scripts/make-long-scenario.py --tokens 4096 --heads 4 --out long4.json
    python3 scripts/make-long-scenario.py --tokens 2048 --heads 2 --kq-conv --head-mix --out conv.json
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
    ap.add_argument("--kq-conv", action="store_true", help="a 3 x 3 key-query convolution")
    ap.add_argument("--head-mix", action="store_true", help="mix heads in pairs (even --heads)")
    ap.add_argument("--linformer", type=int, default=0, metavar="K", help="project keys to K")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.tokens < 1 or a.heads < 1 or a.dim < 1:
        sys.exit("error: --tokens, --heads and --dim must be at least 1")
    if a.head_mix and a.heads % 2:
        sys.exit("error: --head-mix needs an even number of --heads")
    if a.linformer and (a.kq_conv or a.linformer > a.tokens):
        sys.exit("error: --linformer K needs K <= --tokens and no --kq-conv")
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
    multi_token = {}
    if a.kq_conv:
        multi_token["kq_conv"] = [[0.2, 0.6, 0.2], [0.1, 0.3, 0.1], [0.0, 0.1, 0.0]]
    if a.head_mix:
        multi_token["head_mix"] = [[[0.7, 0.3], [0.3, 0.7]]] * (a.heads // 2)
    if multi_token:
        scenario["multi_token"] = multi_token
    if a.linformer:
        sd = 1 / a.linformer ** 0.5

        def projection():
            return [[round(rng.gauss(0, sd), 3) for _ in range(a.tokens)] for _ in range(a.linformer)]

        scenario["linformer"] = {"e": projection(), "f": projection()}
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(scenario, f)


if __name__ == "__main__":
    main()
