"""Fast Agg rasterisation for the course's figures: the Agg canvas with a text-bitmap cache.

Why: matplotlib 3.11's Agg renderer lays out and rasterises every glyph of every text again on each
draw (``ft2font._layout`` through the font fallback list, then ``_render_glyph`` per glyph). In the
explorers most of a redraw is text: tick labels, cell annotations and titles that are the same
strings as in the previous frame. Profiled in ``benchmarks/bench_explorer_latency.py`` (issue 12):
text was 40-60 % of model + draw + encode for the layout and NCCL-tuning explorers.

What: :class:`CachedTextRendererAgg` draws a text with the same glyph rendering as matplotlib's
``RendererAgg.draw_text`` (same fonts, hinting, kerning, rotation), but keyed by the string, the
font properties, the angle, the dpi and the antialiasing it keeps the coverage bitmap of the whole
string, composited from the glyph bitmaps, and blits it with one ``draw_text_image`` call next
time. The text's anchor is snapped to the whole pixel so that the cached bitmap is valid wherever
the string is drawn; matplotlib before 3.9 also drew a text as one bitmap at a whole-pixel position.
Mathtext and TeX go the normal way. The cache is a bounded LRU shared by every canvas of the process.

:class:`CourseCanvasAgg` is ``FigureCanvasAgg`` with that renderer; ``labutil.widgets.Explorer`` and
``labutil.plotting.figure_png`` rasterise with it.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import matplotlib as mpl
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag
from matplotlib.ft2font import FT2Font

__all__ = ["GLYPH_CACHE", "TEXT_CACHE_ENTRIES", "text_cache_stats", "clear_text_cache", "CachedTextRendererAgg",
           "CourseCanvasAgg", "encode_png"]

try:  # matplotlib >= 3.11 renders text glyph by glyph (libraqm layout): the case the bitmap cache is for
    from matplotlib.ft2font import RenderMode
except ImportError:  # pragma: no cover - older matplotlib
    RenderMode = None



def private_api_available() -> bool:
    """Whether this matplotlib has the private pieces the bitmap cache replays: ``FT2Font._layout``,
    ``_render_glyph`` and ``_set_transform``, ``ft2font.RenderMode`` and ``RendererAgg._prepare_font``
    (matplotlib 3.11). Older ones (3.9, 3.10: the project's floor) draw a string as one bitmap
    already; a later one may rename these. Either way the stock text path is used."""
    return (RenderMode is not None and all(hasattr(FT2Font, n) for n in ("_layout", "_render_glyph", "_set_transform"))
            and hasattr(RendererAgg, "_prepare_font"))


#: Whether the text-bitmap cache is in use. False when :func:`private_api_available` is False at
#: import, or after the private API failed at a draw (a renamed attribute, a changed signature):
#: then every text goes through matplotlib's own ``RendererAgg.draw_text`` and
#: :data:`FALLBACK_REASON` says why.
GLYPH_CACHE = private_api_available()
FALLBACK_REASON: str | None = None if GLYPH_CACHE else (
    "matplotlib without the glyph-by-glyph text path (FT2Font._layout/_render_glyph, RenderMode)")


def use_stock_text_path(reason: str) -> None:
    """Stop using the cache for the rest of the process (matplotlib's own text path from now on)."""
    global GLYPH_CACHE, FALLBACK_REASON
    GLYPH_CACHE = False
    FALLBACK_REASON = reason
    _TEXT_CACHE.clear()

#: Most strings an explorer shows fit many times over; a bitmap is a few kB.
TEXT_CACHE_ENTRIES = 4096

_TEXT_CACHE: OrderedDict = OrderedDict()
_STATS = {"hits": 0, "misses": 0}


def text_cache_stats() -> dict:
    """Hits, misses and entries of the text-bitmap cache (for benchmarks and tests)."""
    return {**_STATS, "entries": len(_TEXT_CACHE)}


def clear_text_cache() -> None:
    _TEXT_CACHE.clear()
    _EXTENT_CACHE.clear()
    _METRICS_CACHE.clear()
    _STATS.update(hits=0, misses=0)


_METRICS_CACHE: dict = {}
_EXTENT_CACHE: OrderedDict = OrderedDict()


def _font_height_metrics(prop, dpi: float) -> tuple:
    """As ``matplotlib.text.Text._get_layout`` computes them (OS/2 typo metrics, else hhea);
    ``(None, None, None)`` lets matplotlib fall back to measuring "lp"."""
    from matplotlib.font_manager import fontManager, get_font

    font = get_font(fontManager._find_fonts_by_props(prop))
    for table_name, gap_key, asc_key, desc_key in (("OS/2", "sTypoLineGap", "sTypoAscender", "sTypoDescender"),
                                                   ("hhea", "lineGap", "ascent", "descent")):
        table = font.get_sfnt_table(table_name)
        if table is None:
            continue
        scale = prop.get_size_in_points() * dpi / 72 / font.get_sfnt_table("head")["unitsPerEm"]
        return table[asc_key] * scale, -table[desc_key] * scale, table[gap_key] * scale
    return None, None, None


class CachedTextRendererAgg(RendererAgg):
    """``RendererAgg`` that keeps the bitmap of each (string, font, angle, dpi) it has drawn."""

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if ismath or not s or not GLYPH_CACHE:
            return super().draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
        features = mtext.get_fontfeatures() if mtext is not None and hasattr(mtext, "get_fontfeatures") else None
        language = mtext.get_language() if mtext is not None and hasattr(mtext, "get_language") else None
        antialiased = bool(gc.get_antialiased())
        key = (s, hash(prop), float(angle), float(self.dpi), antialiased, get_hinting_flag(),
               None if features is None else tuple(features), language)
        entry = _TEXT_CACHE.get(key)
        if entry is None:
            _STATS["misses"] += 1
            try:
                entry = self._text_bitmap(s, prop, angle, antialiased, features, language)
            except (AttributeError, TypeError) as exc:  # the private API is gone or changed: stock path
                use_stock_text_path(f"{type(exc).__name__}: {exc}")
                return super().draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
            _TEXT_CACHE[key] = entry
            if len(_TEXT_CACHE) > TEXT_CACHE_ENTRIES:
                _TEXT_CACHE.popitem(last=False)
        else:
            _STATS["hits"] += 1
            _TEXT_CACHE.move_to_end(key)
        if entry is None:  # nothing visible (only spaces)
            return
        bitmap, dx, dy = entry
        try:
            self._renderer.draw_text_image(bitmap, int(round(x)) + dx, int(round(y)) + dy, 0, gc)
        except (AttributeError, TypeError) as exc:
            use_stock_text_path(f"{type(exc).__name__}: {exc}")
            return super().draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

    def get_text_width_height_descent(self, s, prop, ismath):
        """Text extents, cached for the process: matplotlib keeps them per renderer, and every figure
        has its own renderer, so each new figure measured its tick labels and titles again (with
        matplotlib 3.11's text layout that is ~0.5 ms a string)."""
        if ismath:
            return super().get_text_width_height_descent(s, prop, ismath)
        key = (s, hash(prop), float(self.dpi), get_hinting_flag(), mpl.rcParams["text.hinting_factor"])
        got = _EXTENT_CACHE.get(key)
        if got is None:
            got = super().get_text_width_height_descent(s, prop, ismath)
            _EXTENT_CACHE[key] = got
            if len(_EXTENT_CACHE) > 4 * TEXT_CACHE_ENTRIES:
                _EXTENT_CACHE.popitem(last=False)
        return got

    def _get_font_height_metrics(self, prop):
        """(ascent, descent, line gap) in pixels of the font of ``prop``, cached: what
        ``Text._get_layout`` reads from the font's OS/2 or hhea table for every text on every draw
        (matplotlib 3.11 asks the renderer first through this hook)."""
        key = (hash(prop), prop.get_size_in_points(), float(self.dpi))
        got = _METRICS_CACHE.get(key)
        if got is None:
            try:
                got = _font_height_metrics(prop, float(self.dpi))
            except (AttributeError, KeyError, TypeError):  # fontManager._find_fonts_by_props is private
                got = (None, None, None)                    # matplotlib then measures "lp" itself
            if len(_METRICS_CACHE) > TEXT_CACHE_ENTRIES:
                _METRICS_CACHE.clear()
            _METRICS_CACHE[key] = got
        return got

    def _text_bitmap(self, s, prop, angle, antialiased, features, language):
        """Coverage bitmap of ``s`` anchored at the origin, as ``(uint8 array, dx, dy)``: blit it with
        ``draw_text_image(bitmap, x + dx, y + dy)`` (y downwards, at the bitmap's bottom edge), as
        ``RendererAgg._draw_text_glyphs_and_boxes`` places each glyph."""
        font = self._prepare_font(prop)
        kw = {}
        if features is not None:
            kw["features"] = features
        if language is not None:
            kw["language"] = language
        items = font._layout(s, flags=get_hinting_flag(), **kw)
        size = prop.get_size_in_points()
        cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        height = int(self.height)  # whole pixels: the anchor (0, 0) maps to a whole pixel
        load_flags = get_hinting_flag()
        mode = RenderMode.NORMAL if antialiased else RenderMode.MONO
        glyphs = []
        for item in items:
            ft, dx, dy = item.ft_object, item.x, item.y
            ft.set_size(size, self.dpi)
            ft._set_transform(
                (0x10000 * np.array([[cos, -sin], [sin, cos]])).round().astype(int),
                [round(0x40 * (dx * cos - dy * sin)), round(0x40 * (height + dx * sin + dy * cos))])
            bm = ft._render_glyph(item.glyph_index, load_flags, mode)
            buf = np.array(bm.buffer, dtype=np.uint8, copy=True)
            if buf.size == 0:
                continue
            if not antialiased:
                buf *= 0xFF
            top = height - bm.top  # downwards, relative to the anchor
            glyphs.append((buf, bm.left, top))
        if not glyphs:
            return None
        x0 = min(g[1] for g in glyphs)
        y0 = min(g[2] for g in glyphs)
        x1 = max(g[1] + g[0].shape[1] for g in glyphs)
        y1 = max(g[2] + g[0].shape[0] for g in glyphs)
        out = np.zeros((y1 - y0, x1 - x0), dtype=np.uint16)
        for buf, left, top in glyphs:
            r, c = top - y0, left - x0
            region = out[r:r + buf.shape[0], c:c + buf.shape[1]]
            g = buf.astype(np.uint16)
            # Same colour drawn twice composes as 1 - (1 - a)(1 - b): what blending glyph by glyph gives.
            region[...] = region + g - (region * g + 127) // 255
        return np.ascontiguousarray(out.astype(np.uint8)), x0, y1


class CourseCanvasAgg(FigureCanvasAgg):
    """``FigureCanvasAgg`` whose renderer caches text bitmaps (:class:`CachedTextRendererAgg`)."""

    def get_renderer(self):
        w, h = self.get_width_height(physical=True)
        key = w, h, self.figure.dpi
        if self._lastKey != key:
            self.renderer = CachedTextRendererAgg(w, h, self.figure.dpi)
            self._lastKey = key
        return self.renderer


def encode_png(rgba: np.ndarray, compress_level: int = 1) -> bytes:
    """PNG bytes of an Agg buffer (H x W x 4 uint8). An opaque figure is written as RGB: a quarter
    less data to compress and send (the course's figures have a white, opaque background)."""
    import io

    from PIL import Image

    if rgba.ndim != 3 or rgba.shape[2] != 4 or rgba.dtype != np.uint8:
        raise ValueError(f"rgba must be an H x W x 4 uint8 array; got shape {rgba.shape}, dtype {rgba.dtype}")
    if not 0 <= compress_level <= 9:
        raise ValueError(f"compress_level must be in [0, 9]; got {compress_level!r}")
    opaque = bool((rgba[..., 3] == 255).all())
    img = Image.fromarray(np.ascontiguousarray(rgba[..., :3]), "RGB") if opaque else Image.fromarray(rgba, "RGBA")
    buf = io.BytesIO()
    img.save(buf, format="png", compress_level=compress_level)
    return buf.getvalue()
