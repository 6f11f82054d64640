"""Text any renderer can take (WeasyPrint, python-pptx, an SVG): kept apart from the renderers so cleaning
text never imports WeasyPrint (slow to import, and it needs Pango)."""

from __future__ import annotations

import re

# Text a renderer cannot take: C0/C1 controls but tab, newline and carriage return, and the Unicode
# non-characters (U+FDD0..U+FDEF and the last two code points of every plane). Lone surrogates are
# handled apart (they make WeasyPrint raise UnicodeEncodeError).
_UNRENDERABLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufdd0-\ufdef"
    + "".join(f"{chr(plane * 0x10000 + 0xFFFE)}{chr(plane * 0x10000 + 0xFFFF)}" for plane in range(17))
    + "]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_render_text(text: str) -> str:
    """Text every renderer can take: surrogate pairs joined, lone surrogates made U+FFFD, and control
    characters and non-characters removed."""
    if _SURROGATE.search(text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return _UNRENDERABLE.sub("", text)
