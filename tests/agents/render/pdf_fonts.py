"""The faces a PDF embeds: which fonts drew its text (an undrawn glyph embeds none for itself)."""

from __future__ import annotations

import io

from pypdf import PdfReader
from pypdf.generic import DictionaryObject


def embedded_fonts(pdf: bytes, *, page: int | None = None) -> set[str]:
    """The base names of the fonts the PDF's pages (or page ``page``, from 0) use, subset tags dropped."""
    pages = PdfReader(io.BytesIO(pdf)).pages
    names: set[str] = set()
    for current in [pages[page]] if page is not None else pages:
        resources = current["/Resources"].get_object()
        assert isinstance(resources, DictionaryObject)
        fonts = resources["/Font"].get_object()
        assert isinstance(fonts, DictionaryObject)
        for font in fonts.values():
            names.add(str(font.get_object()["/BaseFont"]).split("+", 1)[-1])
    return names
