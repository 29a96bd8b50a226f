#!/usr/bin/env python3
"""Checks a screenshot: a PNG of the expected WIDTHxHEIGHT that is not blank (at least 8 distinct
colours, at least 0.5% of pixels not near-white). Standard library only (zlib + the PNG filters).
usage: png_check.py FILE.png WIDTHxHEIGHT"""
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG layout (depth {depth}, colour type {ctype}, interlace {interlace})")
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def main():
    path, size = sys.argv[1], sys.argv[2]
    want_w, want_h = (int(v) for v in size.split("x"))
    try:
        w, h, bpp, rows = decode(path)
    except (OSError, ValueError, zlib.error, TypeError, struct.error) as e:
        print(f"error: screenshot '{path}': {e}", file=sys.stderr)
        return 1
    colours, dark = set(), 0
    for row in rows[::2]:
        for x in range(0, w * bpp, bpp * 2):
            px = row[x:x + 3]
            colours.add(px)
            if min(px) < 235:
                dark += 1
    sampled = len(rows[::2]) * len(range(0, w * bpp, bpp * 2))
    share = dark / sampled
    ok = (w, h) == (want_w, want_h) and len(colours) >= 8 and share >= 0.005
    print(f"screenshot {path}: {w}x{h}, {len(colours)} colours, {share * 100:.1f}% non-white: {'OK' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
