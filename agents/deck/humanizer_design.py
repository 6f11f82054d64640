"""The humanizer's design rule (T12 "AI-looking design"): gradients, glows, soft edges, shadows,
reflections and bevels, read from the rendered files rather than from the spec.

PPTX: each slide's shapes, its charts and its background are searched for DrawingML effects, and so are
the theme styles a shape inherits. That inheritance is a real trap: python-pptx's ``add_shape`` gives a
shape ``<a:fillRef idx="3"/>`` and ``<a:effectRef idx="2"/>``, which in the default theme are a gradient
and a drop shadow, so a plain rectangle renders glossy unless its fill and effects are set explicitly.

HTML: CSS in ``<style>`` blocks and ``style`` attributes (gradients, text shadows, box shadows with a blur,
blur and drop-shadow filters) and SVG gradient and filter elements. Only markup is searched: the deck's
words are escaped in the HTML, so a bullet that mentions "linear-gradient(" is not a design finding.
"""

from __future__ import annotations

import bisect
import io
import re
import zipfile
from collections.abc import Iterator
from typing import Any, NamedTuple

from lxml import etree
from pptx import Presentation
from pptx.opc.constants import RELATIONSHIP_TYPE
from pptx.oxml.ns import qn

from agents.deck.spec import Deck

_DRAWINGML = "http://schemas.openxmlformats.org/drawingml/2006/main"
# DrawingML elements that draw an effect, and what a reader would call them.
EFFECTS: dict[str, str] = {
    "gradFill": "a gradient fill",
    "glow": "a glow",
    "softEdge": "soft edges",
    "outerShdw": "a drop shadow",
    "innerShdw": "an inner shadow",
    "prstShdw": "a preset shadow",
    "reflection": "a reflection",
    "bevelT": "a bevel",
    "bevelB": "a bevel",
}
_EXPLICIT_FILLS = frozenset(
    qn(f"a:{tag}") for tag in ("noFill", "solidFill", "gradFill", "blipFill", "pattFill", "grpFill")
)
_EXPLICIT_EFFECTS = frozenset((qn("a:effectLst"), qn("a:effectDag")))
_BACKGROUND_STYLE_BASE = 1000  # a bgRef idx above 1000 names a background fill style, below a fill style
_UNREADABLE = (zipfile.BadZipFile, etree.XMLSyntaxError, KeyError, ValueError)
_SAFE_XML = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)

_SLIDE_START = re.compile(r"<section\b[^>]*\bid\s*=\s*[\"']slide-(\d+)[\"']", re.IGNORECASE)
_STYLE_BLOCK = re.compile(r"<style\b[^>]*>(.*?)</style\s*>", re.IGNORECASE | re.DOTALL)
_STYLE_ATTRIBUTE = re.compile(r"""\sstyle\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)
_SVG_EFFECT = re.compile(
    r"<(?:svg:)?(linearGradient|radialGradient|filter|feGaussianBlur|feDropShadow)\b", re.IGNORECASE
)
_CSS_GRADIENT = re.compile(r"(?:repeating-)?(?:linear|radial|conic)-gradient\s*\([^;}\"']*", re.IGNORECASE)
_TEXT_SHADOW = re.compile(r"text-shadow\s*:\s*([^;}\"']+)", re.IGNORECASE)
_BOX_SHADOW = re.compile(r"box-shadow\s*:\s*([^;}\"']+)", re.IGNORECASE)
_BLUR_FILTER = re.compile(
    r"(?:-webkit-)?(?:backdrop-)?filter\s*:\s*[^;}\"']*?\b(?:blur|drop-shadow)\s*\(", re.IGNORECASE
)
_NO_VALUE = frozenset({"none", "initial", "unset", "inherit", "revert", "0"})
_COLOUR = re.compile(r"#[0-9a-f]+|\b[a-z-]+\([^()]*\)", re.IGNORECASE)
_LENGTH = re.compile(r"-?(?:\d+\.?\d*|\.\d+)")
_QUOTE_CHARS = 80


class DesignTell(NamedTuple):
    slide: int  # the deck slide's number; 0 where the design applies to the whole deck
    where: str
    quote: str
    message: str


def pptx_design_tells(data: bytes, deck: Deck) -> list[DesignTell]:
    """Effects on each slide of the PPTX; slide N of the file is the deck's Nth slide (the renderer draws
    one slide per spec slide, in order). An unreadable file has none: the render lint reports it."""
    try:
        presentation: Any = Presentation(io.BytesIO(data))
        slides = list(presentation.slides)
    except _UNREADABLE:
        return []
    tells: list[DesignTell] = []
    for index, slide in enumerate(slides):
        number = deck.slides[index].number if index < len(deck.slides) else index + 1
        theme = _theme(slide)
        for shape in slide.shapes:
            where = f"pptx '{shape.name}'"
            tells.extend(_explicit_effects(number, where, shape.element))
            if getattr(shape, "has_chart", False):
                tells.extend(_explicit_effects(number, f"{where} chart", shape.chart._chartSpace))
            tells.extend(_inherited_effects(number, where, shape.element, theme))
        tells.extend(_background(number, slide, theme))
    return tells


def html_design_tells(html: str) -> list[DesignTell]:
    """CSS and SVG effects in the deck HTML, each placed on the slide (``<section id="slide-N">``) it
    sits in; a stylesheet in the head applies to every slide and is slide 0."""
    starts = [(match.start(), int(match.group(1))) for match in _SLIDE_START.finditer(html)]
    offsets = [offset for offset, _ in starts]

    def slide_at(offset: int) -> int:
        index = bisect.bisect_right(offsets, offset) - 1
        return starts[index][1] if index >= 0 else 0

    tells: list[DesignTell] = []
    for offset, where, css in _css_contexts(html):
        for match_offset, declaration, message in _css_effects(css):
            tells.append(DesignTell(slide_at(offset + match_offset), where, _short(declaration), message))
    for match in _SVG_EFFECT.finditer(html):
        message = f"an SVG <{match.group(1)}>: draw charts in flat colours"
        tells.append(DesignTell(slide_at(match.start()), "html svg", _short(match.group()), message))
    return sorted(tells, key=lambda tell: tell.slide)


def _explicit_effects(number: int, where: str, element: Any) -> Iterator[DesignTell]:
    for node in element.iter(f"{{{_DRAWINGML}}}*"):
        name = etree.QName(node).localname
        if name in EFFECTS:
            yield DesignTell(number, where, f"a:{name}", f"{EFFECTS[name]}: use a flat fill and no effects")


def _inherited_effects(number: int, where: str, element: Any, theme: Any) -> Iterator[DesignTell]:
    """Fills and effects a shape takes from the theme through its ``p:style`` references."""
    if theme is None:
        return
    for shape in element.iter(qn("p:sp"), qn("p:cxnSp")):
        style, properties = shape.find(qn("p:style")), shape.find(qn("p:spPr"))
        if style is None:
            continue
        explicit = {child.tag for child in properties} if properties is not None else set()
        fill_ref = style.find(qn("a:fillRef"))
        if fill_ref is not None and not explicit & _EXPLICIT_FILLS:
            fill = _theme_fill(theme, _index(fill_ref))
            if fill is not None and fill.tag == qn("a:gradFill"):
                message = "a gradient fill inherited from the theme: give the shape an explicit solid fill"
                yield DesignTell(number, where, f'a:fillRef idx="{_index(fill_ref)}"', message)
        effect_ref = style.find(qn("a:effectRef"))
        if effect_ref is not None and not explicit & _EXPLICIT_EFFECTS and _index(effect_ref) > 0:
            styles = theme.findall(f".//{qn('a:effectStyleLst')}/{qn('a:effectStyle')}")
            if _index(effect_ref) <= len(styles):
                drawn = {etree.QName(node).localname for node in styles[_index(effect_ref) - 1].iter()}
                for name in sorted(drawn & EFFECTS.keys()):
                    message = f"{EFFECTS[name]} inherited from the theme: give the shape an empty effect list"
                    yield DesignTell(
                        number, where, f'a:effectRef idx="{_index(effect_ref)}" ({name})', message
                    )


def _background(number: int, slide: Any, theme: Any) -> Iterator[DesignTell]:
    """The background the slide shows: its own, else its layout's, else its master's."""
    for owner in (slide, slide.slide_layout, slide.slide_layout.slide_master):
        background = owner.element.find(f"{qn('p:cSld')}/{qn('p:bg')}")
        if background is None:
            continue
        yield from _explicit_effects(number, "pptx background", background)
        reference = background.find(qn("p:bgRef"))
        if reference is not None and theme is not None:
            fill = _theme_fill(theme, _index(reference))
            if fill is not None and fill.tag == qn("a:gradFill"):
                message = "a gradient background from the theme: use a plain background"
                yield DesignTell(number, "pptx background", f'p:bgRef idx="{_index(reference)}"', message)
        return


def _theme(slide: Any) -> Any:
    try:
        part = slide.slide_layout.slide_master.part.part_related_by(RELATIONSHIP_TYPE.THEME)
        return etree.fromstring(part.blob, _SAFE_XML)
    except _UNREADABLE:
        return None


def _theme_fill(theme: Any, index: int) -> Any:
    """Fill style ``index`` of the theme (1-999), or background fill style ``index - 1000`` (1001+)."""
    if index > _BACKGROUND_STYLE_BASE:
        fills, index = theme.find(f".//{qn('a:bgFillStyleLst')}"), index - _BACKGROUND_STYLE_BASE
    else:
        fills = theme.find(f".//{qn('a:fillStyleLst')}")
    if fills is None or not 1 <= index <= len(fills):
        return None
    return fills[index - 1]


def _index(reference: Any) -> int:
    try:
        return int(reference.get("idx", "0"))
    except ValueError:
        return 0


def _css_contexts(html: str) -> Iterator[tuple[int, str, str]]:
    """(offset, where, css) for every stylesheet and style attribute."""
    for match in _STYLE_BLOCK.finditer(html):
        yield match.start(1), "html <style>", match.group(1)
    for match in _STYLE_ATTRIBUTE.finditer(html):
        group = 1 if match.group(1) is not None else 2
        yield match.start(group), "html style attribute", match.group(group)


def _css_effects(css: str) -> Iterator[tuple[int, str, str]]:
    for match in _CSS_GRADIENT.finditer(css):
        yield match.start(), match.group(), "a CSS gradient: use a flat colour"
    for match in _TEXT_SHADOW.finditer(css):
        if match.group(1).strip().lower() not in _NO_VALUE:
            yield match.start(), match.group(), "a text shadow: set text flat"
    for match in _BOX_SHADOW.finditer(css):
        if _blurred(match.group(1)):
            yield (
                match.start(),
                match.group(),
                "a blurred box shadow (a glow or soft shadow): use a rule or nothing",
            )
    for match in _BLUR_FILTER.finditer(css):
        yield match.start(), match.group(), "a blur or drop-shadow filter: remove it"


def _blurred(value: str) -> bool:
    """Whether any shadow in a ``box-shadow`` value has a blur radius (its third length)."""
    if value.strip().lower() in _NO_VALUE:
        return False
    for shadow in re.split(r",(?![^()]*\))", value):
        lengths = [float(number) for number in _LENGTH.findall(_COLOUR.sub(" ", shadow))]
        if len(lengths) >= 3 and lengths[2] > 0:
            return True
    return False


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _QUOTE_CHARS else flat[: _QUOTE_CHARS - 1] + "…"
