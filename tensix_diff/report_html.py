"""Self-contained HTML reports: inline CSS and inline PNG images (data: URIs), no external assets.

The Dest heatmap draws the 1024 x 16 Dest as four side-by-side panels of 256 rows; a cell is grey
where both sides agree (darker where the value is non-zero) and red where they differ, the deeper
the red the more of its 16 bits differ.
"""
from __future__ import annotations

import base64
import html
import struct
import zlib
from typing import Iterable, Sequence

import numpy as np

PANELS, CELL_W, CELL_H, GAP = 4, 5, 2, 4
SAME_ZERO, SAME_NONZERO = (238, 238, 238), (200, 200, 205)

CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:1320px;padding:0 1em;color:#222}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f7f7f7;padding:.5em}details{margin:1em 0}
.cards{display:flex;flex-wrap:wrap;gap:1em;margin:1em 0}.card{border:1px solid #ccc;border-radius:6px;padding:.5em 1em}
.card b{display:block;font-size:24px}.bad b{color:#b00}.ok b{color:#070}summary{cursor:pointer;font-weight:600}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}
th{background:#f3f3f3}.num{text-align:right}.device{background:#d9f2d9}.golden{background:#fff3c4}
.never{background:#f6d5d5}.known{color:#777}code,pre{font:12px ui-monospace,monospace}
figure{display:inline-block;margin:0 1em 1em 0;vertical-align:top}figcaption{font-size:12px;max-width:360px}"""


def png(rgb: np.ndarray) -> bytes:
    """Encode an (height, width, 3) uint8 array as a PNG file."""
    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].astype(np.uint8).tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def data_uri(png_bytes: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png_bytes).decode()


def dest_difference(expected: Sequence[Sequence[int]], actual: Sequence[Sequence[int]]) -> np.ndarray:
    """Per cell, how many of the 16 bits differ (0..16)."""
    x = np.asarray(expected, dtype=np.uint16) ^ np.asarray(actual, dtype=np.uint16)
    return np.unpackbits(x.view(np.uint8).reshape(*x.shape, 2), axis=-1).sum(axis=-1)


def dest_heatmap(expected: Sequence[Sequence[int]], actual: Sequence[Sequence[int]]) -> np.ndarray:
    """The heatmap picture (RGB array) of the Dest difference."""
    bits = dest_difference(expected, actual)
    nonzero = np.asarray(expected, dtype=np.uint16) != 0
    rows, cols = bits.shape
    per = -(-rows // PANELS)
    img = np.full((per * CELL_H, PANELS * (cols * CELL_W + GAP) - GAP, 3), 255, dtype=np.uint8)
    colour = np.empty((rows, cols, 3), dtype=np.uint8)
    colour[:] = SAME_ZERO
    colour[nonzero] = SAME_NONZERO
    depth = bits[bits > 0].astype(np.int32)
    colour[bits > 0] = np.stack([np.full_like(depth, 255), 180 - depth * 10, 180 - depth * 10], axis=-1)
    cells = np.repeat(np.repeat(colour, CELL_H, axis=0), CELL_W, axis=1)
    for p in range(PANELS):
        part = cells[p * per * CELL_H:(p + 1) * per * CELL_H]
        x0 = p * (cols * CELL_W + GAP)
        img[:part.shape[0], x0:x0 + cols * CELL_W] = part
    return img


AXIS_L, AXIS_T, AXIS_B = 34, 14, 14     # margins of the heatmap's axes (pixels)


def _axes_svg(uri: str, rows: int, cols: int) -> str:
    """The heatmap image inside an SVG with its axes: each panel titled with its Dest rows, row offsets
    within a panel on the left (every 64), columns 0 and 15 under each panel."""
    per = -(-rows // PANELS)
    w, h = PANELS * (cols * CELL_W + GAP) - GAP, per * CELL_H
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w + AXIS_L}" height="{h + AXIS_T + AXIS_B}" '
           f'font-size="9" font-family="monospace">',
           f'<image x="{AXIS_L}" y="{AXIS_T}" width="{w}" height="{h}" href="{uri}"/>']
    for p in range(PANELS):
        x0 = AXIS_L + p * (cols * CELL_W + GAP)
        out.append(f'<text x="{x0}" y="{AXIS_T - 3}">rows {p * per}-{min(rows, (p + 1) * per) - 1}</text>')
        out.append(f'<text x="{x0}" y="{AXIS_T + h + 10}">0</text>')
        out.append(f'<text x="{x0 + cols * CELL_W}" y="{AXIS_T + h + 10}" text-anchor="end">{cols - 1}</text>')
    for r in range(0, per + 1, 64):
        y = AXIS_T + min(r, per - 1) * CELL_H
        out.append(f'<text x="{AXIS_L - 3}" y="{y + 3}" text-anchor="end">+{min(r, per - 1)}</text>')
        out.append(f'<line x1="{AXIS_L - 2}" x2="{AXIS_L}" y1="{y}" y2="{y}" stroke="#444"/>')
    out.append(f'<text x="{AXIS_L + w // 2}" y="{AXIS_T + h + 10}" text-anchor="middle">column</text></svg>')
    return "".join(out)


def _swatch(rgb: tuple[int, int, int], label: str) -> str:
    return (f'<span style="display:inline-block;width:10px;height:10px;margin:0 3px 0 8px;'
            f'background:rgb{tuple(rgb)};border:1px solid #999"></span>{esc(label)}')


def heatmap_legend() -> str:
    """What the heatmap's colours mean."""
    parts = [_swatch(SAME_ZERO, "same, zero"), _swatch(SAME_NONZERO, "same, non-zero")]
    parts += [_swatch((255, 180 - n * 10, 180 - n * 10), f"{n} bit{'s' if n > 1 else ''} differ") for n in (1, 4, 8, 16)]
    return f'<div style="font-size:12px">{"".join(parts)}</div>'


def heatmap_figure(title: str, expected: Sequence[Sequence[int]], actual: Sequence[Sequence[int]]) -> str:
    bits = dest_difference(expected, actual)
    diff_rows = np.flatnonzero(bits.any(axis=1))
    where = f"rows {diff_rows[0]}..{diff_rows[-1]}" if len(diff_rows) else "no cell differs"
    caption = f"{esc(title)}: {int((bits > 0).sum())} Dest cells differ ({where}); panels of 256 rows"
    uri = data_uri(png(dest_heatmap(expected, actual)))
    return (f'<figure role="img" aria-label="Dest difference heatmap">{_axes_svg(uri, *bits.shape)}'
            f"{heatmap_legend()}<figcaption>{caption}</figcaption></figure>")


def esc(x: object) -> str:
    return html.escape(str(x))


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], classes: Iterable[str] | None = None) -> str:
    """A table; numbers right-aligned; ``classes`` gives one CSS class per row."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for row, cls in zip(rows, classes or _forever("")):
        cells = "".join(f'<td class="num">{v}</td>' if isinstance(v, (int, float)) else f"<td>{esc(v)}</td>"
                        for v in row)
        body.append(f'<tr class="{esc(cls)}">{cells}</tr>' if cls else f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _forever(x: str) -> Iterable[str]:
    while True:
        yield x


def page(title: str, sections: Iterable[tuple[str, str]], lead: str = "") -> str:
    """A whole document: ``lead`` (HTML, e.g. summary cards) under the title, then ``sections``, (heading, HTML
    body) pairs."""
    body = "".join(f"<h2>{esc(h)}</h2>{b}" for h, b in sections)
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f'<meta name="viewport" content="width=device-width"><style>{CSS}</style></head><body>'
            f"<h1>{esc(title)}</h1>{lead}{body}</body></html>\n")


def cards(items: Iterable[tuple[str, object, str]]) -> str:
    """Summary figures as cards: (label, value, css class: "", "ok" or "bad")."""
    return '<div class="cards">' + "".join(f'<div class="card {esc(c)}"><b>{esc(v)}</b>{esc(label)}</div>'
                                           for label, v, c in items) + "</div>"


def folded(summary: str, body: str, open_: bool = False) -> str:
    """``body`` folded away under a one-line ``summary`` (a <details> element)."""
    return f"<details{' open' if open_ else ''}><summary>{esc(summary)}</summary>{body}</details>"


def pre(lines: Iterable[str]) -> str:
    return "<pre>" + esc("\n".join(lines)) + "</pre>"


def dest_from_diffs(diffs) -> tuple[np.ndarray, np.ndarray] | None:
    """Dest pictures (expected, actual) holding only the differing cells of compare.Diff objects."""
    cells = [d for d in diffs if d.region == "dest" and isinstance(d.expected, int)]
    if not cells:
        return None
    e, a = np.zeros((1024, 16), dtype=np.uint16), np.zeros((1024, 16), dtype=np.uint16)
    for d in cells:
        _, row, _, col = d.location.split()
        e[int(row), int(col)], a[int(row), int(col)] = d.expected, d.actual
    return e, a
