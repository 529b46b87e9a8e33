#!/usr/bin/python3
"""A PyTorch reference for Llama / Mistral / Qwen2 model folders (Hugging Face layout).

Reads config.json and the weights (model.safetensors, or the shards listed by
model.safetensors.index.json; F32, F16 or BF16, parsed here by hand) and runs the forward pass of
docs/cli.md ("Today's model folders") in torch float32, written from the formulas, without the
transformers or safetensors packages. Dev-time only (Debian's python3-torch and python3-numpy);
neither the build nor CI runs it. Debian's interpreter, /usr/bin/python3, is the one with torch.

  llama-torch-reference.py MODEL --ids 1,2,3 --logits out.npy [--attention att.npy]
                                 [--compare cli-logits.npy]
      writes the last position's logits, float32, shape (vocab_size,), and optionally every
      layer's attention weights (n_layer, num_attention_heads, n, n); --compare prints the largest
      difference from a logits file `attention-lab lm next --logits` wrote.
  llama-torch-reference.py MODEL --bench [--tokens 128] [--runs 5]
      times the forward pass on random ids with torch.set_num_threads(2); prints the median ms.
"""
import argparse
import json
import math
import os
import statistics
import struct
import sys
import time

import numpy as np
import torch

ARCHITECTURES = {"LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral",
                 "Qwen2ForCausalLM": "qwen2"}


def fail(msg):
    sys.stderr.write("error: " + msg + "\n")
    sys.exit(2)


def read_safetensors(path):
    """name -> float32 torch tensor, for every tensor of one safetensors file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    if len(data) < 8:
        fail(f"{path}: shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        fail(f"{path}: header length {n} is past the end of the file")
    header = json.loads(data[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        begin, end = e["data_offsets"]
        raw = data[base + begin:base + end]
        dtype, shape = e["dtype"], e["shape"]
        if dtype == "F32":
            a = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        elif dtype == "F16":
            a = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif dtype == "BF16":
            # bfloat16 is the top half of a float32.
            a = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            fail(f"{path}: {name}: dtype {dtype} is not F32, F16 or BF16")
        count = int(np.prod(shape)) if shape else 1
        if a.size != count:
            fail(f"{path}: {name}: {a.size} values for shape {shape}")
        out[name] = torch.from_numpy(a.reshape(shape).copy())
    return out


def load_weights(folder):
    index = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            weight_map = json.load(f)["weight_map"]
        tensors = {}
        for shard in sorted(set(weight_map.values())):
            tensors.update(read_safetensors(os.path.join(folder, shard)))
        for name, shard in weight_map.items():
            if name not in tensors:
                fail(f"{shard}: {name}: missing")
        return tensors
    return read_safetensors(os.path.join(folder, "model.safetensors"))


class Config:
    def __init__(self, folder):
        with open(os.path.join(folder, "config.json")) as f:
            c = json.load(f)
        arch = (c.get("architectures") or [None])[0]
        self.kind = ARCHITECTURES.get(arch) or c.get("model_type")
        if self.kind not in ("llama", "mistral", "qwen2"):
            fail(f"config.json: architectures: {arch!r} is not Llama, Mistral or Qwen2")
        if c.get("hidden_act", "silu") != "silu":
            fail(f"config.json: hidden_act: {c['hidden_act']!r} is not silu")
        self.hidden = c["hidden_size"]
        self.n_layer = c["num_hidden_layers"]
        self.n_head = c["num_attention_heads"]
        self.n_kv = c.get("num_key_value_heads") or self.n_head
        if self.n_head % self.n_kv:
            fail("config.json: num_key_value_heads does not divide num_attention_heads")
        self.head_dim = c.get("head_dim") or self.hidden // self.n_head
        self.eps = c.get("rms_norm_eps", 1e-6)
        self.theta = c.get("rope_theta", 10000.0)
        self.rope_scaling = c.get("rope_scaling")
        self.tie = c.get("tie_word_embeddings", False)
        self.window = 0
        if self.kind == "mistral" and c.get("sliding_window"):
            self.window = c["sliding_window"]
        if self.kind == "qwen2" and c.get("use_sliding_window") and c.get("sliding_window"):
            self.window = c["sliding_window"]
        self.vocab_size = c.get("vocab_size")

    def inv_freq(self):
        hd = self.head_dim
        inv = 1.0 / (self.theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
        s = self.rope_scaling
        if s:
            kind = s.get("rope_type", s.get("type"))
            if kind == "linear":
                inv = inv / s["factor"]
            elif kind == "llama3":
                factor, low, high = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
                orig = s["original_max_position_embeddings"]
                low_wavelen, high_wavelen = orig / low, orig / high
                out = []
                for f in inv.tolist():
                    wavelen = 2 * math.pi / f
                    if wavelen < high_wavelen:
                        out.append(f)
                    elif wavelen > low_wavelen:
                        out.append(f / factor)
                    else:
                        smooth = (orig / wavelen - low) / (high - low)
                        out.append((1 - smooth) * f / factor + smooth * f)
                inv = torch.tensor(out, dtype=torch.float64)
            elif kind != "default":
                fail(f"config.json: rope_scaling.rope_type: {kind!r} is not llama3 or linear")
        return inv.to(torch.float32)


def rms(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def linear(x, W, name):
    y = x @ W[name + ".weight"].T
    if name + ".bias" in W:
        y = y + W[name + ".bias"]
    return y


def forward(cfg, W, ids):
    """The logits of every position (T, V) and the attention weights (L, NH, T, T)."""
    T, NH, NKV, hd = len(ids), cfg.n_head, cfg.n_kv, cfg.head_dim
    x = W["model.embed_tokens.weight"][torch.tensor(ids, dtype=torch.long)]
    ang = torch.arange(T, dtype=torch.float32)[:, None] * cfg.inv_freq()[None, :]
    cos = torch.cat([ang.cos(), ang.cos()], -1)
    sin = torch.cat([ang.sin(), ang.sin()], -1)
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    allowed = j <= i
    if cfg.window:
        allowed = allowed & (j > i - cfg.window)
    atts = []
    for layer in range(cfg.n_layer):
        p = f"model.layers.{layer}."
        h = rms(x, W[p + "input_layernorm.weight"], cfg.eps)
        q = linear(h, W, p + "self_attn.q_proj").view(T, NH, hd).transpose(0, 1)
        k = linear(h, W, p + "self_attn.k_proj").view(T, NKV, hd).transpose(0, 1)
        v = linear(h, W, p + "self_attn.v_proj").view(T, NKV, hd).transpose(0, 1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # Query head h reads K/V head h // (NH / NKV).
        k = k.repeat_interleave(NH // NKV, dim=0)
        v = v.repeat_interleave(NH // NKV, dim=0)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        scores = scores.masked_fill(~allowed, float("-inf"))
        a = torch.softmax(scores, dim=-1)
        atts.append(a)
        y = (a @ v).transpose(0, 1).reshape(T, NH * hd)
        x = x + linear(y, W, p + "self_attn.o_proj")
        h = rms(x, W[p + "post_attention_layernorm.weight"], cfg.eps)
        g = linear(h, W, p + "mlp.gate_proj")
        u = linear(h, W, p + "mlp.up_proj")
        x = x + linear(torch.nn.functional.silu(g) * u, W, p + "mlp.down_proj")
    x = rms(x, W["model.norm.weight"], cfg.eps)
    head = W["model.embed_tokens.weight"] if cfg.tie or "lm_head.weight" not in W \
        else W["lm_head.weight"]
    return x @ head.T, torch.stack(atts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", help="a Llama, Mistral or Qwen2 folder")
    ap.add_argument("--ids", help="comma-separated token ids")
    ap.add_argument("--logits", help="write the last position's logits (.npy, float32)")
    ap.add_argument("--attention", help="write the attention weights (.npy, float32)")
    ap.add_argument("--compare", help="a logits .npy to compare with")
    ap.add_argument("--bench", action="store_true", help="time the forward pass")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()

    cfg = Config(args.model)
    W = load_weights(args.model)
    V = W["model.embed_tokens.weight"].shape[0]
    torch.set_grad_enabled(False)

    if args.bench:
        torch.set_num_threads(2)
        g = torch.Generator().manual_seed(0)
        ids = torch.randint(0, V, (args.tokens,), generator=g).tolist()
        forward(cfg, W, ids)  # warm-up
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            forward(cfg, W, ids)
            times.append((time.perf_counter() - t0) * 1000)
        print(f"forward of {args.tokens} tokens, {args.runs} runs, 2 threads: "
              f"median {statistics.median(times):.2f} ms")
        return

    if not args.ids:
        fail("--ids: expected comma-separated token ids (or --bench)")
    ids = [int(s) for s in args.ids.split(",") if s.strip()]
    if not ids or min(ids) < 0 or max(ids) >= V:
        fail(f"--ids: ids must be in [0, {V})")
    logits, att = forward(cfg, W, ids)
    last = logits[-1].numpy().astype(np.float32)
    if args.logits:
        np.save(args.logits, last)
    if args.attention:
        np.save(args.attention, att.numpy().astype(np.float32))
    if args.compare:
        other = np.load(args.compare).astype(np.float64)
        if other.shape != last.shape:
            fail(f"--compare: shape {other.shape}, expected {last.shape}")
        diff = np.abs(other - last) / np.maximum(1.0, np.abs(last))
        print(f"largest difference (relative to max(1,|x|)): {diff.max():.3g} "
              f"at id {int(diff.argmax())}")
    if not (args.logits or args.attention or args.compare):
        top = np.argsort(-last)[:10]
        for t in top:
            print(f"{int(t)}\t{last[t]:.6f}")


if __name__ == "__main__":
    main()
