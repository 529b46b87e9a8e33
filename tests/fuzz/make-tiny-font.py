#!/usr/bin/env python3
"""Writes a tiny TrueType font (a box for every printable ASCII character, one composite glyph)
to stdout: the fuzz target `font`'s seed (tests/fuzz/corpus/font/tiny.ttf), a few KB where a real
font is hundreds. Usage: tests/fuzz/make-tiny-font.py > tests/fuzz/corpus/font/tiny.ttf"""
import struct
import sys

UPM, ASCENT, DESCENT = 1000, 800, -200
chars = list(range(0x20, 0x7F))
# Glyph 0 .notdef (a box), 1 space (empty), 2.. one per printable character, then a composite
# (two boxes) mapped to U+00B7.
def box(x0, y0, x1, y1):
    # One contour of four on-curve points, coordinates as 16-bit deltas.
    pts = [(x0, y0), (x0, y1), (x1, y1), (x1, y0)]
    data = struct.pack(">hhhhh", 1, x0, y0, x1, y1) + struct.pack(">H", 3) + struct.pack(">H", 0)
    data += bytes([0x01] * 4)  # on curve, 16-bit x and y
    px = py = 0
    xs = ys = b""
    for x, y in pts:
        xs += struct.pack(">h", x - px)
        ys += struct.pack(">h", y - py)
        px, py = x, y
    return data + xs + ys

glyphs = [box(50, 0, 450, 700), b""]
for c in chars[1:]:
    w = 100 + (c % 7) * 40
    glyphs.append(box(50, 0, 50 + w, 300 + (c % 11) * 40))
comp = struct.pack(">hhhhh", -1, 50, 0, 550, 700)
comp += struct.pack(">HHhh", 0x0002 | 0x0001 | 0x0020, 2, 0, 0)  # ARGS_ARE_XY, words, MORE
comp += struct.pack(">HHhh", 0x0002 | 0x0001, 3, 200, 0)
glyphs.append(comp)
glyf = b""
loca = []
for g in glyphs:
    loca.append(len(glyf))
    glyf += g + (b"\0" if len(g) % 2 else b"")
loca.append(len(glyf))
n = len(glyphs)
loca_t = b"".join(struct.pack(">I", o) for o in loca)
head = struct.pack(">IIIIHHqqhhhhHHhhh", 0x00010000, 0x00010000, 0, 0x5F0F3CF5, 0, UPM, 0, 0,
                   0, DESCENT, 600, ASCENT, 0, 8, 2, 1, 0)
hhea = struct.pack(">IhhhHhhhhhhhhhhhH", 0x00010000, ASCENT, DESCENT, 0, 700, 0, 0, 600, 1, 0, 0,
                   0, 0, 0, 0, 0, n)
maxp = struct.pack(">IHHHHHHHHHHHHHH", 0x00010000, n, 8, 1, 8, 2, 2, 0, 0, 0, 0, 0, 0, 2, 1)
hmtx = b"".join(struct.pack(">Hh", 600, 50) for _ in range(n))
# cmap format 4: one segment per character (simple and valid), then 0xFFFF.
mapping = {c: (i + 1) for i, c in enumerate(chars)}
mapping[0xB7] = n - 1
codes = sorted(mapping)
segs = [(c, c, (mapping[c] - c) & 0xFFFF) for c in codes] + [(0xFFFF, 0xFFFF, 1)]
sc = len(segs)
rng = 1
sel = 0
while rng * 2 <= sc:
    rng *= 2
    sel += 1
sub = struct.pack(">HHHHHHH", 4, 0, 0, sc * 2, rng * 2, sel, sc * 2 - rng * 2)
sub += b"".join(struct.pack(">H", e) for _, e, _ in segs) + b"\0\0"
sub += b"".join(struct.pack(">H", s) for s, _, _ in segs)
sub += b"".join(struct.pack(">H", d) for _, _, d in segs)
sub += b"".join(struct.pack(">H", 0) for _ in segs)
sub = sub[:2] + struct.pack(">H", len(sub)) + sub[4:]
cmap = struct.pack(">HHHHI", 0, 1, 3, 1, 12) + sub
name = struct.pack(">HHH", 0, 0, 6)
post = struct.pack(">IIhhIIIII", 0x00030000, 0, -100, 50, 0, 0, 0, 0, 0)
tables = {b"cmap": cmap, b"glyf": glyf, b"head": head, b"hhea": hhea, b"hmtx": hmtx,
          b"loca": loca_t, b"maxp": maxp, b"name": name, b"post": post}
tags = sorted(tables)
out = struct.pack(">IHHHH", 0x00010000, len(tags), 128, 3, len(tags) * 16 - 128)
offset = 12 + 16 * len(tags)
body = b""
for t in tags:
    data = tables[t]
    out += t + struct.pack(">III", 0, offset + len(body), len(data))
    body += data + b"\0" * (-len(data) % 4)
sys.stdout.buffer.write(out + body)
