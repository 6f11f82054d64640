"""A rendered deck read back as text, and the figures in that text.

``slide_texts`` reads what a viewer sees, slide by slide (page N of the PDF is slide N of the PPTX): in a
PPTX every shape's text in reading order (top to bottom, then left to right), a table row by row with its
cells joined by " | ", and a chart point by point as "category label" (the data label's own text, read
from the chart part's XML, since that is what PowerPoint draws); in a PDF what pypdf extracts per page.
Slide numbers in footers are not read.

``figures_in`` finds every figure-like token in one line: every shape ``agents.deck.spec.display`` and
``agents.data.formatting.format_value`` print ("USD 391,035 M", "USD 6.08", "46.2%", "6.08 USD/shares",
"15,204.1 M shares", "1.64e+05 index") and the shapes an edit may leave ("$1.2bn", "USD391,035", "12%").
Not figures, as for the memo (agents.text.figures): calendar years, fiscal labels (FY2024, FY2025Q3,
Q3), ISO dates, form names (10-K, 8-K), ids, and a lone digit counting things.

A PDF is read as its text lines after two repairs, so that it reads like the PPTX: a figure wrapped across
two lines is joined again, and a chart's run of value labels followed by its run of periods is paired
point by point.

``refuse_oversized`` caps what is read, before any parser sees the bytes: the file's size, a PPTX's zip
directory, its number of parts and their total unzipped size (a zip bomb declares sizes zipfile inflates up
to and never past, so the declared total bounds the work), and a PDF's pages (pypdf caps each stream).
"""

from __future__ import annotations

import bisect
import io
import re
import struct
import unicodedata
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lxml import etree
from pptx import Presentation
from pptx.enum.shapes import PP_PLACEHOLDER
from pptx.exc import PythonPptxError
from pptx.shapes.base import BaseShape
from pptx.shapes.graphfrm import GraphicFrame
from pptx.shapes.group import GroupShape
from pypdf import PageObject, PdfReader
from pypdf.errors import PyPdfError
from pypdf.generic import DictionaryObject, NameObject, PdfObject, StreamObject

from agents.kept import KeptInProcess
from agents.text.figures import DOCUMENT_ID, FIGURE_IN_WORD, KEPT_WORD, word_spans

FigureKind = Literal["currency", "percent", "per-share", "plain"]

_CURRENCY_CODES = "USD|EUR|TWD|GBP|JPY|CNY|RMB|CHF|CAD|AUD|HKD|INR|KRW"
# A figure: an optional currency (a code, which may be glued to the text before it in a PDF extraction, or
# a symbol), a sign, digits (grouped, with decimals or an exponent) and an optional scale or unit. Digits
# glued into a word or an id ("FY2024", "Q3"), or that are part of a date or a form name ("2024-11-01",
# "10-K"), do not start or end a figure.
FIGURE = re.compile(
    rf"(?:(?<![A-Za-z])(?P<code>{_CURRENCY_CODES}) ?|(?P<symbol>[$€£¥₹])|(?<![\w.,\-/:]))"
    r"(?P<sign>[-+])?"
    r"(?P<number>[0-9](?:[0-9,]*[0-9])?(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"
    r"(?P<suffix> ?%| (?:M|bn|k) shares\b| ?(?:bn|billion|million|trillion|mn|tn|[kKmMbB])\b"
    rf"| (?:[A-Z]{{3}}/shares|[A-Za-z]+/[A-Za-z]+|shares|index|{_CURRENCY_CODES})\b| ?x\b)?"
    r"(?![\w\-/:]|[.,][0-9])"
)
_YEAR_OR_DIGIT = re.compile(r"(?:19|20)[0-9]{2}|[0-9]")
# The periods a deck prints beside a figure (Figure.period): "FY2024", "FY2025Q3", "as of 2026-10-30".
PERIOD = re.compile(
    r"(?<![A-Za-z0-9])(?:FY[0-9]{4}(?:Q[1-4]|H[12])?|as of [0-9]{4}-[0-9]{2}-[0-9]{2})(?![0-9])",
    re.IGNORECASE,
)
_CURRENCY = re.compile(rf"(?<![A-Za-z])(?:{_CURRENCY_CODES})|[$€£¥₹]")
_ENDS_IN_CURRENCY = re.compile(rf"(?:^|\s)(?:{_CURRENCY_CODES}|[$€£¥₹])$")
_ENDS_IN_NUMBER = re.compile(r"(?:^|\s)[-+]?[0-9][0-9,.]*$")
_STARTS_WITH_NUMBER = re.compile(r"[-+]?[0-9]")
# "6.13 USD/" then "shares": where a PDF rendered before figures were kept whole broke a per-share unit.
_ENDS_IN_PER = re.compile(r"[0-9] [A-Z]{3}/$")
_STARTS_WITH_SHARES = re.compile(r"shares\b")
_STARTS_WITH_UNIT = re.compile(
    rf"(?:%|(?:M|bn|k)(?: shares)?\b|shares\b|index\b|[A-Z]{{3}}/shares\b|(?:{_CURRENCY_CODES})\b)"
)
_BLANKS = re.compile(r"\s+")
_MINUS = str.maketrans({"\u2212": "-", "\u2012": "-", "\u2013": "-"})
# A footer that only numbers the slide: "3", "3 / 20", "Slide 3 of 20", "Page 3".
_SLIDE_NUMBER_LINE = re.compile(r"(?:(?:slide|page)\s+)?([0-9]{1,3})(?:\s*(?:/|of)\s*[0-9]{1,3})?", re.I)
_DATE_GLUED = re.compile(r"((?<![0-9])[0-9]{4}-[0-9]{2}-[0-9]{2})(?=[-+]?(?:USD|[$€£¥₹])?[0-9])")
_FOOTERS = {PP_PLACEHOLDER.SLIDE_NUMBER, PP_PLACEHOLDER.FOOTER, PP_PLACEHOLDER.DATE}
# What no viewer sees as text: NUL and the other control characters (a reader's misreading of an undrawn
# glyph), and U+FFFD (what a reader puts where it could not decode one). Never part of a figure.
_UNSEEN = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
_REPLACEMENT = "\ufffd"
_CODESPACE = re.compile(rb"begincodespacerange(.*?)endcodespacerange", re.DOTALL)
_HEX_CODE = re.compile(rb"<([0-9A-Fa-f]+)>")
_MAX_FORM_DEPTH = 8
_SAFE_XML = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
_C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


# The most a rendered deck may take. Ours are far below: a 40-slide deck is a 0.2 MB PPTX of 177 parts that
# unzip to 0.6 MB, and a 0.1 MB PDF; a deck re-saved with pictures grows by megabytes, not by hundreds.
MAX_FILE_BYTES = 32_000_000
MAX_UNZIPPED_BYTES = 256_000_000
MAX_PPTX_PARTS = 2_000
MAX_PDF_PAGES = 1_000
# zipfile reads the whole central directory before listing one part; 2,000 entries take ~0.2 MB.
_MAX_ZIP_DIRECTORY_BYTES = 1_000_000
_ZIP_END = b"PK\x05\x06"
_ZIP64_END_LOCATOR = b"PK\x06\x07"
_ZIP_END_SIZE, _ZIP_LOCATOR_SIZE, _ZIP_MAX_COMMENT = 22, 20, 65_535


class UnreadableFile(ValueError):
    """Not a PPTX or PDF this check can read."""


class TooLarge(UnreadableFile):
    """Larger than any rendered deck (a file, a PPTX's parts, a PDF's pages): refused unread."""


@dataclass(frozen=True)
class SlideText:
    number: int  # 1-based: slide N of the PPTX, page N of the PDF
    lines: tuple[str, ...]


@dataclass(frozen=True)
class FoundFigure:
    text: str  # as printed, blanks made single spaces
    kind: FigureKind
    period: str | None  # the period printed nearest before it on its line, with no figure between


def refuse_oversized(data: bytes) -> None:
    """``TooLarge`` when ``data`` is bigger than any rendered deck, or is a zip that unzips to more parts or
    bytes than one; checked before anything parses it. A PDF's pages are counted as it is read."""
    refuse_file_size(len(data))
    if data[:4] != b"PK\x03\x04":
        return
    _refuse_large_zip_directory(data)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            parts = package.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise UnreadableFile(f"not a readable PPTX ({type(error).__name__}: {error})") from error
    if len(parts) > MAX_PPTX_PARTS:
        raise TooLarge(f"the PPTX has {len(parts):,} parts, more than any deck ({MAX_PPTX_PARTS:,} at most)")
    unzipped = sum(part.file_size for part in parts)
    if unzipped > MAX_UNZIPPED_BYTES:
        raise TooLarge(
            f"the PPTX unzips to {_mb(unzipped)}, more than any deck ({_mb(MAX_UNZIPPED_BYTES)} at most)"
        )


def refuse_file_size(size: int) -> None:
    """``TooLarge`` for a file of ``size`` bytes past the cap: a reader of a file asks before it reads."""
    if size > MAX_FILE_BYTES:
        raise TooLarge(f"the file is {_mb(size)}, more than any deck ({_mb(MAX_FILE_BYTES)} at most)")


def _refuse_large_zip_directory(data: bytes) -> None:
    """The directory's size as the end record declares it (what zipfile reads whole), refused when larger
    than any deck's; a zip64 archive (for more than 65,535 parts or 4 GB) is never a deck."""
    end = data.rfind(_ZIP_END, max(0, len(data) - _ZIP_END_SIZE - _ZIP_MAX_COMMENT))
    if end < 0 or end + _ZIP_END_SIZE > len(data):
        raise UnreadableFile("not a readable PPTX (no zip end record)")
    parts, directory = struct.unpack_from("<HI", data, end + 10)
    zip64 = data[max(0, end - _ZIP_LOCATOR_SIZE) : end].startswith(_ZIP64_END_LOCATOR)
    if zip64 or parts == 0xFFFF or directory > _MAX_ZIP_DIRECTORY_BYTES:
        raise TooLarge(
            f"the PPTX's zip directory declares {_mb(directory)} of entries, more than any deck "
            f"({_mb(_MAX_ZIP_DIRECTORY_BYTES)} at most)"
        )


def _mb(size: int) -> str:
    return f"{size / 1_000_000:,.1f} MB"


def slide_texts(data: bytes, *, page_keys: Sequence[str] = ()) -> list[SlideText]:
    """The text of each slide of a PPTX or PDF. ``page_keys`` (agents.deck.render.pdf.page_keys of the
    deck the PDF was rendered from, in page order) lets a PDF page whose key was read before in this process
    be answered from what was read then: pypdf's extraction is as slow as the render itself, and a
    refinement lap changes a few slides of a deck measured a moment before."""
    refuse_oversized(data)
    if data[:5] == b"%PDF-":
        return _pdf_texts(data, page_keys)
    if data[:4] == b"PK\x03\x04":
        return _pptx_texts(data)
    raise UnreadableFile("neither a PDF nor a PPTX (zip) file")


def figures_in(line: str) -> list[FoundFigure]:
    text = plain_text(line)
    spans = [
        (match.start(), match.end(), match.group(0)) for match in FIGURE.finditer(text) if _is_figure(match)
    ]
    spans.extend(_figures_in_words(text, spans))
    spans.sort()
    found: list[FoundFigure] = []
    previous_end = 0
    for start, end, printed in spans:
        token = _BLANKS.sub(" ", printed).strip()
        found.append(FoundFigure(token, figure_kind(token), _period_before(text, previous_end, start)))
        previous_end = end
    return found


def plain_text(line: str) -> str:
    """What a viewer sees (``readable``), compatibility forms folded (a full-width digit reads as a digit),
    dashes used as minus made "-"."""
    return unicodedata.normalize("NFKC", readable(line)).translate(_MINUS)


def readable(line: str) -> str:
    """The line without what no viewer sees as text (control characters, U+FFFD as a blank), and a date
    apart from a figure a PDF's extraction glued to it: a table's period cell "as of 2026-10-30" beside its
    value "1.3%" reads "2026-10-301.3%"."""
    return _DATE_GLUED.sub(r"\1 ", _UNSEEN.sub("", line).replace(_REPLACEMENT, " "))


def figure_kind(text: str) -> FigureKind:
    if "/" in text:
        return "per-share"
    if "%" in text:
        return "percent"
    if _CURRENCY.search(text):
        return "currency"
    return "plain"


def compact(text: str) -> str:
    """A figure or period as compared: blanks do not count (a PDF extraction may add or drop them)."""
    return _BLANKS.sub("", plain_text(text))


def _is_figure(match: re.Match[str]) -> bool:
    decorated = any(match.group(name) for name in ("code", "symbol", "sign", "suffix"))
    return decorated or not _YEAR_OR_DIGIT.fullmatch(match.group("number"))


def _figures_in_words(text: str, spans: list[tuple[int, int, str]]) -> Iterator[tuple[int, int, str]]:
    """Digits in a word that FIGURE does not take ("grew12%", "12-15%", "1.2.3") are a figure too, unless
    the word is one the memo keeps (a year, a date, a label or an id)."""
    starts = [start for start, _, _ in spans]  # FIGURE's matches: in order, never overlapping
    for start, end in word_spans(text):
        word = text[start:end]
        before = bisect.bisect_left(starts, end) - 1  # the last figure starting before the word ends
        if not any(char.isdigit() for char in word) or (before >= 0 and spans[before][1] > start):
            continue
        if DOCUMENT_ID.fullmatch(word) or (KEPT_WORD.fullmatch(word) and not FIGURE_IN_WORD.search(word)):
            continue
        yield start, end, word


def _period_before(text: str, start: int, end: int) -> str | None:
    periods = [match.group(0) for match in PERIOD.finditer(text, start, end)]
    return periods[-1] if periods else None


def _pdf_texts(data: bytes, keys: Sequence[str] = ()) -> list[SlideText]:
    try:
        reader = PdfReader(io.BytesIO(data))
        if len(reader.pages) > MAX_PDF_PAGES:
            raise TooLarge(
                f"the PDF has {len(reader.pages):,} pages, more than any deck ({MAX_PDF_PAGES:,} at most)"
            )
        # Keys only for a PDF of one page a slide: a slide that overflowed onto a page of its own is read.
        keyed = keys if len(keys) == len(reader.pages) else [None] * len(reader.pages)
        pages = [_page_text(page, key) for page, key in zip(reader.pages, keyed, strict=True)]
    except TooLarge:
        raise
    except _PDF_ERRORS as error:
        raise UnreadableFile(f"not a readable PDF ({type(error).__name__}: {error})") from error
    return [_slide_text(number, text) for number, text in enumerate(pages, 1)]


def deck_pdf_texts(keys: Sequence[str], draw: Callable[[list[int]], bytes]) -> list[SlideText] | None:
    """The text of each page of a deck's PDF (one page a slide, ``keys`` its pages' keys: page_keys), drawing
    only what this process never read: ``draw(indexes)`` is the PDF of those slides alone, in order. A
    refinement lap changes a few slides of a deck measured a moment before, and drawing a slide costs as
    much as reading it. None when the drawn PDF has not one page a slide (one overflowed): only the whole
    deck's PDF says then which page is which, and how many pages a reader gets."""
    texts = {index: text for index, key in enumerate(keys) if (text := _page_texts.find(key)) is not None}
    missing = [index for index in range(len(keys)) if index not in texts]
    if missing:
        try:
            reader = PdfReader(io.BytesIO(draw(missing)))
            if len(reader.pages) != len(missing):
                return None
            for index, page in zip(missing, reader.pages, strict=True):
                texts[index] = _page_text(page, keys[index])
        except _PDF_ERRORS as error:
            raise UnreadableFile(f"not a readable PDF ({type(error).__name__}: {error})") from error
    return [_slide_text(number, texts[number - 1]) for number in range(1, len(keys) + 1)]


# pypdf reports a damaged file with its own errors and, deeper in, plain lookup and type errors.
_PDF_ERRORS = (PyPdfError, KeyError, TypeError, ValueError, OSError, AttributeError)


def _slide_text(number: int, text: str) -> SlideText:
    return SlideText(number, _chart_points_paired(_wraps_rejoined(_content_lines(number, text.splitlines()))))


# What pypdf read from the last pages of known keys, in this process.
_page_texts: KeptInProcess[str] = KeptInProcess(512)


def _page_text(page: PageObject, key: str | None) -> str:
    def read() -> str:
        _read_codes_as_two_bytes(page.get("/Resources"))
        text: str = page.extract_text()
        return text

    return _page_texts.get(key or "", read)  # a page without a key is read, never kept


def _read_codes_as_two_bytes(resources: Any, depth: int = 0) -> None:
    """Make pypdf read a composite font's codes two bytes at a time when its encoding is an embedded CMap.

    WeasyPrint embeds such a CMap when a page draws a glyph its font lacks (the undrawn glyph's codes get
    their own entries). pypdf 7 does not parse an embedded CMap: it reads the font's two-byte codes one byte
    at a time, so a whole slide came back as NUL characters between its letters, and the undrawn glyphs as
    pairs of unrelated characters ("5m5n" for "市场"), which the check then read as a figure. The text of each
    code is in the font's ToUnicode map either way; declaring the codes two-byte (Identity-H) is all pypdf
    lacks. Only the reader's copy of the file changes. Form XObjects (a chart) have resources of their own."""
    resources = _resolved(resources)
    if not isinstance(resources, DictionaryObject) or depth > _MAX_FORM_DEPTH:
        return
    fonts = _resolved(resources.get("/Font"))
    for font in (_resolved(ref) for ref in fonts.values()) if isinstance(fonts, DictionaryObject) else ():
        encoding = _resolved(font.get("/Encoding"))
        if font.get("/Subtype") == "/Type0" and isinstance(encoding, StreamObject) and _two_byte(encoding):
            font[NameObject("/Encoding")] = NameObject("/Identity-H")
    forms = _resolved(resources.get("/XObject"))
    for form in (_resolved(ref) for ref in forms.values()) if isinstance(forms, DictionaryObject) else ():
        if isinstance(form, StreamObject) and form.get("/Subtype") == "/Form":
            _read_codes_as_two_bytes(form.get("/Resources"), depth + 1)


def _resolved(value: Any) -> Any:
    """A PDF object itself, not a reference to it."""
    return value.get_object() if isinstance(value, PdfObject) else value


def _two_byte(cmap: StreamObject) -> bool:
    """Whether every code space range of the CMap is two bytes wide ("<0000> <ffff>")."""
    ranges = _CODESPACE.search(cmap.get_data())
    widths = {len(code) for code in _HEX_CODE.findall(ranges.group(1))} if ranges else set()
    return widths == {4}


def _wraps_rejoined(lines: tuple[str, ...]) -> tuple[str, ...]:
    """A figure the PDF wrapped ("... Revenue FY2024: USD" then "391,035 M") read whole again: a line that
    ends in a currency is joined to a next line that starts with a number, one that ends in a number to a
    next line that starts with a scale or a unit, one that ends in "USD/" to a next line that starts with
    "shares". (The renderer keeps a figure on one line; PDFs frozen before it did may wrap one.)"""
    joined: list[str] = []
    for line in lines:
        previous = joined[-1] if joined else ""
        if (_ENDS_IN_CURRENCY.search(previous) and _STARTS_WITH_NUMBER.match(line)) or (
            _ENDS_IN_NUMBER.search(previous) and _STARTS_WITH_UNIT.match(line)
        ):
            joined[-1] = f"{previous} {line}"
        elif _ENDS_IN_PER.search(previous) and _STARTS_WITH_SHARES.match(line):
            joined[-1] = f"{previous}{line}"
        else:
            joined.append(line)
    return tuple(joined)


def _chart_points_paired(lines: tuple[str, ...]) -> tuple[str, ...]:
    """The PDF's chart (agents.render.charts) draws every value label, then every period under the plot:
    a run of lines that are each one bare figure, followed by as many lines that are each one period, is
    read point by point as "period figure", the way the PPTX's chart reads."""
    paired: list[str] = []
    index = 0
    while index < len(lines):
        count = 0
        while index + count < len(lines) and _is_bare_figure(lines[index + count]):
            count += 1
        periods = lines[index + count : index + 2 * count]
        if count and len(periods) == count and all(PERIOD.fullmatch(period) for period in periods):
            labels = lines[index : index + count]
            paired.extend(f"{period} {label}" for period, label in zip(periods, labels, strict=True))
            index += 2 * count
        else:
            paired.append(lines[index])
            index += 1
    return tuple(paired)


def _is_bare_figure(line: str) -> bool:
    found = figures_in(line)
    return len(found) == 1 and compact(found[0].text) == compact(line)


def _content_lines(number: int, lines: list[str]) -> tuple[str, ...]:
    kept = [readable(line).strip() for line in lines]
    return tuple(line for line in kept if line and not _numbers_the_slide(number, line))


def _numbers_the_slide(number: int, line: str) -> bool:
    match = _SLIDE_NUMBER_LINE.fullmatch(line)
    return match is not None and int(match.group(1)) == number


def _pptx_texts(data: bytes) -> list[SlideText]:
    try:
        presentation = Presentation(io.BytesIO(data))
        return [
            SlideText(number, _content_lines(number, list(_shape_lines(slide.shapes))))
            for number, slide in enumerate(presentation.slides, 1)
        ]
    except (PythonPptxError, zipfile.BadZipFile, KeyError, ValueError, OSError, etree.LxmlError) as error:
        raise UnreadableFile(f"not a readable PPTX ({type(error).__name__}: {error})") from error


def _shape_lines(shapes: Any) -> Iterator[str]:
    """Every shape's text in reading order: top to bottom, then left to right."""
    for shape in sorted(shapes, key=lambda shape: (shape.top or 0, shape.left or 0)):
        if shape.is_placeholder and shape.placeholder_format.type in _FOOTERS:
            continue
        if isinstance(shape, GroupShape):
            yield from _shape_lines(shape.shapes)
        elif isinstance(shape, GraphicFrame) and shape.has_table:
            for row in shape.table.rows:
                yield " | ".join(_one_line(cell.text) for cell in row.cells)
        elif isinstance(shape, GraphicFrame) and shape.has_chart:
            yield from _chart_lines(shape)
        elif _has_text(shape):
            yield from (_one_line(paragraph.text) for paragraph in shape.text_frame.paragraphs)


def _has_text(shape: BaseShape) -> bool:
    return bool(getattr(shape, "has_text_frame", False))


def _one_line(text: str) -> str:
    # A soft line break (python-pptx writes it as a vertical tab) or a paragraph inside a cell still
    # belongs to the same line: "USD 391,035\vM" reads as one figure.
    return _BLANKS.sub(" ", text.replace("\v", " ")).strip()


def _chart_lines(frame: GraphicFrame) -> Iterator[str]:
    """The chart's titles, then one line per point: its category and its data label's text."""
    root = etree.fromstring(frame.chart_part.blob, parser=_SAFE_XML)
    for title in root.iter(f"{_C}title"):
        yield _one_line(_rich_text(title))
    for series in root.iter(f"{_C}ser"):
        categories = _categories(series.find(f"{_C}cat"))
        labels = _data_labels(series.find(f"{_C}dLbls"))
        for index in sorted(set(categories) | set(labels)):
            yield _one_line(f"{categories.get(index, '')} {labels.get(index, '')}")


def _categories(cat: Any) -> dict[int, str]:
    """Each point's category (c:pt idx="N" with its c:v, in a string or number cache or a literal)."""
    if cat is None:
        return {}
    found = {_index(point.get("idx")): point.findtext(f"{_C}v") or "" for point in cat.iter(f"{_C}pt")}
    return {index: text for index, text in found.items() if index is not None}


def _data_labels(labels: Any) -> dict[int, str]:
    """Each point's data label text (c:dLbl with its c:idx and rich text): what the chart draws."""
    if labels is None:
        return {}
    found: dict[int, str] = {}
    for label in labels.iter(f"{_C}dLbl"):
        index = _index(label.find(f"{_C}idx").get("val") if label.find(f"{_C}idx") is not None else None)
        text = label.find(f"{_C}tx")
        if index is not None and text is not None:
            found[index] = _rich_text(text)
    return found


def _index(raw: str | None) -> int | None:
    return int(raw) if raw and raw.isdigit() else None


def _rich_text(element: Any) -> str:
    """The drawn text of a title or label: its a:t runs (not the sheet reference a c:strRef also holds)."""
    return "".join(run.text or "" for run in element.iter(f"{_A}t"))
