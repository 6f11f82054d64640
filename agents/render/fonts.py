"""The typefaces both deck renderers use, and where their files are, so the lint measures text with the
metrics of the font that draws it.

DejaVu Sans draws the deck (Latin, Greek, Cyrillic, Arabic, Hebrew and most symbols). For the glyphs it
lacks, WenQuanYi Micro Hei draws instead: Chinese, Japanese kana and Korean hangul, the scripts a small
model slips into (a bullet once carried "市场", market). It is the most compact Debian font with all three
(fonts-wqy-microhei: 5.1 MB installed, against 16 MB for fonts-wqy-zenhei and 91 MB for fonts-noto-cjk).
Both are installed by the project's scripts (scripts/lib.sh) on every machine that renders; WeasyPrint
(fontconfig), LibreOffice and PowerPoint resolve them by name, and the PDF's CSS lists them in this order.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from fontTools.ttLib import TTCollection, TTFont

FONT_NAME = "DejaVu Sans"
FALLBACK_FONT_NAME = "WenQuanYi Micro Hei"
# The CSS font stack: each glyph from the first family that has it.
CSS_FONT_FAMILY = f'"{FONT_NAME}", "{FALLBACK_FONT_NAME}", sans-serif'
_FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
_FILES = {False: "DejaVuSans.ttf", True: "DejaVuSans-Bold.ttf"}
_FALLBACK_FILE = Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")
FALLBACK_INDEX = 0  # the collection's proportional face (index 1 is its monospaced one)
_PACKAGES = {FONT_NAME: "fonts-dejavu-core", FALLBACK_FONT_NAME: "fonts-wqy-microhei"}


class FontMissing(RuntimeError):
    pass


def font_path(*, bold: bool = False) -> Path:
    return _installed(FONT_NAME, _FONT_DIR / _FILES[bold])


def fallback_path() -> Path:
    """The fallback face's file (it has one weight: a bold run is drawn emboldened, at the same advances)."""
    return _installed(FALLBACK_FONT_NAME, _FALLBACK_FILE)


@cache
def code_points(path: Path) -> frozenset[int]:
    """Every character the font file (a collection's ``FALLBACK_INDEX`` face) has a glyph for."""
    font = TTCollection(str(path)).fonts[FALLBACK_INDEX] if path.suffix == ".ttc" else TTFont(str(path))
    return frozenset(font.getBestCmap())


def _installed(name: str, path: Path) -> Path:
    if not path.is_file():
        raise FontMissing(
            f"{name} is not installed ({path}; Debian package {_PACKAGES[name]}); "
            "run scripts/run.sh or scripts/test.sh once"
        )
    return path
