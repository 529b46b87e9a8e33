#!/usr/bin/env python3
"""What the heads of a model trained on English do, measured with the program's own commands
(docs/lm.md, "The austen model"): the first sentence of Pride and Prejudice, copying names the
model never saw, lm heads on a repeated sentence, and attention from pronouns to the person meant.
Usage: scripts/austen-study.py [--lab build/bin/attention-lab] [--model austen]"""
import argparse
import array
import ast
import os
import subprocess
import sys
import tempfile


def run(lab, *args):
    out = subprocess.run([lab, *args], check=True, capture_output=True, text=True)
    return out.stdout


def next_tokens(lab, model, text, top=5):
    rows = []
    for line in run(lab, "lm", "next", "--model", model, "--text", text, "--top", str(top)).splitlines():
        _, token, p = line.split("\t")
        rows.append((token, float(p)))
    return rows


def tokens(lab, model, text):
    return [line.split("\t", 1)[1] for line in run(lab, "lm", "tokens", "--model", model, "--text", text).splitlines()]


def attention(lab, model, text):
    """(n_layer, n_head, n, n) float32 weights, read from the .npy the program writes."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "att.npy")
        run(lab, "lm", "attention", "--model", model, "--text", text, "--out", path)
        with open(path, "rb") as f:
            data = f.read()
    assert data[:6] == b"\x93NUMPY"
    header_len = int.from_bytes(data[8:10], "little")
    header = ast.literal_eval(data[10:10 + header_len].decode("latin1"))
    assert header["descr"] == "<f4" and not header["fortran_order"]
    values = array.array("f")
    values.frombytes(data[10 + header_len:])
    L, H, n, _ = header["shape"]
    return L, H, n, lambda l, h, i, j: values[((l * H + h) * n + i) * n + j]


# Names no novel of Austen's holds, in sentences of her kind: the second mention is cut after its
# first token(s), and the model should finish it from the first.
NAMES = ["Thornbury", "Fennimore", "Hazelwick", "Brandleigh", "Cresswold", "Ashcombe",
         "Pellingham", "Wrexford", "Dunsmore", "Marlowby"]
TEMPLATE = ("Mr. {name} had called at the house that morning, and Mrs. Bennet was delighted with "
            "him. After dinner the talk turned again to Mr. {cut}")


def copy_names(lab, model):
    copied = 0
    rows = []
    for name in NAMES:
        whole = tokens(lab, model, " " + name)
        if len(whole) < 2:
            rows.append((name, "one token", "-", False))
            continue
        # The tokens come in GPT-2's byte-level display form: "Ġ" is the space before the name.
        cut = whole[0].replace("\u0120", "")
        rest = whole[1]
        best, p = next_tokens(lab, model, TEMPLATE.format(name=name, cut=cut), top=1)[0]
        ok = best == rest
        copied += ok
        rows.append((name, cut + "|" + "".join(whole[1:]), f"{best!r} {p:.0%}", ok))
    return copied, rows


# The person comes mid-sentence (a name at the start would be the first-token sink).
PRONOUNS = [
    ("After breakfast Elizabeth walked to the window and looked out, for she", " Elizabeth"),
    ("At the ball Mr. Darcy took up a book, but he", " Darcy"),
    ("That evening Jane smiled at her sister, and then she", " Jane"),
    ("In the morning Mr. Collins bowed to the company, and he", " Collins"),
    ("By then Emma was sure of it, and she", " Emma"),
    ("At the door Captain Wentworth stood still; he", " Wentworth"),
]


def pronoun_heads(lab, model):
    """Each head's mean weight from the pronoun (the last token) to the first token of the name."""
    sums = None
    for text, name in PRONOUNS:
        toks = tokens(lab, model, text)
        name_tokens = tokens(lab, model, name)
        start = next(k for k in range(len(toks)) if toks[k:k + len(name_tokens)] == name_tokens)
        L, H, n, w = attention(lab, model, text)
        if sums is None:
            sums = [[0.0] * H for _ in range(L)]
        for l in range(L):
            for h in range(H):
                sums[l][h] += sum(w(l, h, n - 1, start + k) for k in range(len(name_tokens)))
    count = len(PRONOUNS)
    means = [(sums[l][h] / count, l, h) for l in range(len(sums)) for h in range(len(sums[0]))]
    return max(means), sum(m for m, _, _ in means) / len(means)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lab", default="build/bin/attention-lab")
    ap.add_argument("--model", default="austen")
    a = ap.parse_args()
    first = ("It is a truth universally acknowledged, that a single man in possession of a good "
             "fortune, must be in want of a")
    print("## The first sentence of Pride and Prejudice\n")
    for token, p in next_tokens(a.lab, a.model, first):
        print(f"- {token!r}: {p:.1%}")
    copied, rows = copy_names(a.lab, a.model)
    print(f"\n## Names it never saw: {copied} of {len(NAMES)} finished from the first mention\n")
    for name, split, got, ok in rows:
        print(f"- {name} ({split}): {got} {'copied' if ok else ''}")
    repeated = ("When the ladies returned to the drawing-room, Miss Bingley was at the piano, and "
                "Elizabeth sat down by the fire with her work. ")
    print("\n## lm heads on a repeated sentence\n")
    out = run(a.lab, "lm", "heads", "--model", a.model, "--text", repeated * 2)
    for line in out.splitlines():
        if line.startswith("best") or line.startswith("copies"):
            print("- " + line)
    (weight, l, h), mean = pronoun_heads(a.lab, a.model)
    print("\n## Pronouns: the head that looks from he/she to the person\n")
    print(f"- layer {l} head {h}: {weight:.1%} of the pronoun's weight on the name, "
          f"mean of {len(PRONOUNS)} sentences (every head: {mean:.1%})")


if __name__ == "__main__":
    sys.exit(main())
