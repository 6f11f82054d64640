"""Text widths as the renderers draw them: each character in the face that draws it (agents.render.fonts).

A run of characters DejaVu Sans has is measured in DejaVu Sans; a run it lacks but the fallback face has
(Chinese, kana, hangul) in the fallback, the way fontconfig, LibreOffice and PowerPoint fall back. A
character neither has is measured in DejaVu Sans, as the empty box it draws. Widths are read with Pillow at
a large pixel size and scaled, so small sizes are not hinted or rounded.
"""

from __future__ import annotations

from functools import lru_cache

from PIL import ImageFont

from agents.render.fonts import FALLBACK_INDEX, code_points, fallback_path, font_path

_MEASURE_UNITS = 1000


@lru_cache(maxsize=8192)
def advance_em(text: str, *, bold: bool = False) -> float:
    """The advance width of ``text`` in em (multiply by the size in points for points)."""
    if text.isascii():  # DejaVu Sans has every printable ASCII character: the common case, one run
        return _face(fallback=False, bold=bold).getlength(text) / _MEASURE_UNITS
    return sum(
        _face(fallback=fallback, bold=bold).getlength(run) / _MEASURE_UNITS
        for run, fallback in runs(text, bold)
    )


def runs(text: str, bold: bool = False) -> list[tuple[str, bool]]:
    """``text`` cut where the face that draws it changes: (characters, drawn by the fallback face)."""
    found: list[tuple[str, bool]] = []
    for char in text:
        fallback = _drawn_by_fallback(char, bold)
        if found and found[-1][1] == fallback:
            found[-1] = (found[-1][0] + char, fallback)
        else:
            found.append((char, fallback))
    return found


def _drawn_by_fallback(char: str, bold: bool) -> bool:
    code = ord(char)
    return code not in code_points(font_path(bold=bold)) and code in code_points(fallback_path())


@lru_cache(maxsize=4)
def _face(*, fallback: bool, bold: bool) -> ImageFont.FreeTypeFont:
    if fallback:
        return ImageFont.truetype(str(fallback_path()), _MEASURE_UNITS, index=FALLBACK_INDEX)
    return ImageFont.truetype(str(font_path(bold=bold)), _MEASURE_UNITS)
