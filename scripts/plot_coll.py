#!/usr/bin/env python3
"""Plot `gpupeer coll -o FILE` (or `--json`) results as one SVG, with the Python standard library alone.

The GPU machines have no matplotlib and cannot install it, so this writes the SVG by hand:
per input file (one collective, one mode) a row of two charts against message size, time
(log scale) and bus bandwidth, with gpupeer and every baseline in the file as its own line.

Usage: python3 scripts/plot_coll.py -o bench/coll.svg all_reduce.json all_gather.json
"""

import argparse
import json
import math
import sys
from xml.sax.saxutils import escape

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
CHART_W, CHART_H = 460, 300  # one chart, axes and labels included
PAD_L, PAD_R, PAD_T, PAD_B = 62, 22, 12, 44  # room for tick labels and axis titles
TITLE_H, LEGEND_H, GAP = 26, 22, 24


def number(value):
    """A finite float, or None for absent, null or non-numeric values."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def series_of(doc):
    """[(name, [(bytes, us, busbw)])]: gpupeer first, then baselines in order of appearance."""
    rows = doc.get("rows") or []
    names = []
    for row in rows:
        for name in row.get("baselines") or {}:
            if name not in names:
                names.append(name)
    result = [("gpupeer", [(number(r.get("bytes")), number(r.get("us")), number(r.get("busbw"))) for r in rows])]
    for name in names:
        points = []
        for r in rows:
            b = (r.get("baselines") or {}).get(name)
            if isinstance(b, dict):
                points.append((number(r.get("bytes")), number(b.get("us")), number(b.get("busbw"))))
        result.append((name, points))
    return result


def size_label(n):
    """8B, 512B, 1K, 64K, 1M, 1G: binary units, as nccl-tests sizes are powers of two."""
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale:
            v = n / scale
            return f"{v:g}{unit}" if v < 10 else f"{v:.0f}{unit}"
    return f"{n:.0f}B"


def linear_ticks(top):
    """0 and about five round steps up to at least `top`."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / 5
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    return [i * step for i in range(int(math.ceil(top / step - 1e-9)) + 1)]


def chart(x0, y0, lines, pick, log_y, y_title):
    """SVG elements of one chart at (x0, y0); `pick` chooses the y value of a point."""
    out = []
    plot_w, plot_h = CHART_W - PAD_L - PAD_R, CHART_H - PAD_T - PAD_B
    left, top = x0 + PAD_L, y0 + PAD_T
    # Points a log axis cannot show (zero, negative, missing) are left out, not clamped.
    valid = []
    for name, colour, points in lines:
        kept = []
        for p in points:
            b, v = p[0], pick(p)
            if b is not None and b > 0 and v is not None and (v > 0 or not log_y):
                kept.append((b, v))
        valid.append((name, colour, kept))
    xs = [b for _, _, pts in valid for b, _ in pts]
    ys = [v for _, _, pts in valid for _, v in pts]
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#888"/>')
    if not xs:
        out.append(f'<text x="{left + plot_w / 2}" y="{top + plot_h / 2}" text-anchor="middle">no data</text>')
        return out
    lx0, lx1 = math.log2(min(xs)), math.log2(max(xs))
    if lx1 - lx0 < 1:
        lx0, lx1 = lx0 - 0.5, lx1 + 0.5
    if log_y:
        ly0, ly1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
        if ly1 == ly0:
            ly1 += 1
        # Decades; 1-2-5 steps too when there are only one or two, so the axis is readable.
        steps = (1, 2, 5) if ly1 - ly0 <= 2 else (1,)
        y_ticks = [m * 10.0**e for e in range(ly0, ly1 + 1) for m in steps if m * 10.0**e <= 10.0**ly1]
        to_y = lambda v: top + plot_h * (1 - (math.log10(v) - ly0) / (ly1 - ly0))
    else:
        y_ticks = linear_ticks(max(ys))
        to_y = lambda v: top + plot_h * (1 - v / y_ticks[-1])
    to_x = lambda b: left + plot_w * (math.log2(b) - lx0) / (lx1 - lx0)
    # Size ticks on powers of two, thinned to about eight labels.
    exps = list(range(math.ceil(lx0), math.floor(lx1) + 1))
    stride = max(1, math.ceil(len(exps) / 8))
    for e in exps[::stride]:
        x = to_x(2.0**e)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" stroke="#eee"/>')
        out.append(f'<text x="{x:.1f}" y="{top + plot_h + 15}" text-anchor="middle">{size_label(2.0**e)}</text>')
    for v in y_ticks:
        y = to_y(v)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 5}" y="{y + 4:.1f}" text-anchor="end">{v:g}</text>')
    out.append(f'<text x="{left + plot_w / 2}" y="{top + plot_h + 34}" text-anchor="middle">size (bytes)</text>')
    mid_y = top + plot_h / 2
    out.append(f'<text x="{x0 + 14}" y="{mid_y}" text-anchor="middle" transform="rotate(-90 {x0 + 14} {mid_y})">'
               f"{escape(y_title)}</text>")
    for name, colour, pts in valid:
        coords = " ".join(f"{to_x(b):.1f},{to_y(v):.1f}" for b, v in sorted(pts))
        if len(pts) > 1:
            out.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        for b, v in pts:
            out.append(f'<circle cx="{to_x(b):.1f}" cy="{to_y(v):.1f}" r="2.5" fill="{colour}">'
                       f"<title>{escape(name)}: {size_label(b)} {v:g}</title></circle>")
    return out


def title_of(doc):
    what = " ".join(str(doc[k]) for k in ("op", "type", "redop") if doc.get(k))
    gpus = f"{doc.get('gpus', '?')}x {doc.get('gpu_name', 'GPU')}"
    return ", ".join(p for p in (what or "collective", gpus, str(doc.get("mode") or "")) if p)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", required=True, help="SVG file to write")
    parser.add_argument("inputs", nargs="+", help="JSON files from gpupeer coll -o FILE or --json")
    args = parser.parse_args()
    row_h = TITLE_H + LEGEND_H + CHART_H + GAP
    width = 2 * CHART_W
    body = []
    for i, path in enumerate(args.inputs):
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, json.JSONDecodeError) as err:
            sys.exit(f"plot_coll.py: {path}: {err}")
        y0 = i * row_h
        lines = [(name, COLOURS[k % len(COLOURS)], pts) for k, (name, pts) in enumerate(series_of(doc))]
        body.append(f'<text x="{width / 2}" y="{y0 + 18}" text-anchor="middle" font-size="15" '
                    f'font-weight="bold">{escape(title_of(doc))}</text>')
        x = PAD_L
        for name, colour, _ in lines:
            ly = y0 + TITLE_H + 12
            body.append(f'<line x1="{x}" y1="{ly}" x2="{x + 18}" y2="{ly}" stroke="{colour}" stroke-width="3"/>')
            body.append(f'<text x="{x + 23}" y="{ly + 4}">{escape(name)}</text>')
            x += 40 + 7 * len(name)
        cy = y0 + TITLE_H + LEGEND_H
        body += chart(0, cy, lines, lambda p: p[1], True, "time (µs)")
        body += chart(CHART_W, cy, lines, lambda p: p[2], False, "busbw (GB/s)")
    height = len(args.inputs) * row_h
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>', *body, "</svg>"]
    with open(args.output, "w", encoding="utf-8") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
