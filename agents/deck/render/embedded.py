"""The resolved deck travels inside every file rendered from it, as ``deck.json``.

The fact-check (T5) reads a rendered PPTX or PDF back and must know which fact each printed figure is; the
text alone cannot say (two slides may print "$391.0B" for different facts). So each renderer embeds the
``Deck`` it drew, and ``read_deck`` takes it back out of either kind of file:

- PPTX: a package part of our own (``/analyst-desk/deck.json``), related from the presentation part by a
  relationship type of our own URI. Office ignores a part whose relationship type it does not know, and
  keeps it when the file is saved again.
- PDF: an embedded file whose description is ``deck.json`` (the deck HTML carries it as a ``data:`` URI
  ``<link rel="attachment" title="deck.json">``; WeasyPrint files every such link as ``attachment.bin``,
  with the link's title as its description).
"""

from __future__ import annotations

import base64
import io
import json
import posixpath
import zipfile
from typing import Any

from lxml import etree
from pptx.opc.package import Part
from pptx.opc.packuri import PackURI
from pypdf import PdfReader
from pypdf.errors import PyPdfError

from agents.deck.spec import Deck

DECK_JSON_NAME = "deck.json"
DECK_PART_NAME = "/analyst-desk/deck.json"
DECK_RELTYPE = "http://schemas.analyst-desk.invalid/2026/relationships/deck-json"
DECK_CONTENT_TYPE = "application/json"
# A deck of 40 slides is ~100 KB; anything far bigger is not ours, and a zip bomb must not be inflated.
_MAX_DECK_JSON_BYTES = 16 * 1024 * 1024

_OFFICE_DOCUMENT_RELTYPE = (
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
)
_RELATIONSHIP = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
_SAFE_XML = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


class NoEmbeddedDeck(ValueError):
    """The file carries no deck.json, or one that is not a valid deck."""


def deck_json(deck: Deck) -> bytes:
    """The deck as canonical JSON: sorted keys, no spaces, ASCII only (a lone surrogate in model-written
    text is kept as a ``\\udXXX`` escape rather than failing to encode)."""
    document = deck.model_dump(mode="json")
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def deck_attachment_href(deck: Deck) -> str:
    """The ``data:`` URI the deck HTML attaches to its PDF."""
    return "data:application/json;base64," + base64.b64encode(deck_json(deck)).decode("ascii")


def embed_in_pptx(presentation: Any, deck: Deck) -> None:
    """Add ``deck`` to a python-pptx ``Presentation`` as its own part (python-pptx ships no type hints for
    the presentation object's part, hence ``Any``)."""
    presentation_part = presentation.part
    part = Part(PackURI(DECK_PART_NAME), DECK_CONTENT_TYPE, presentation_part.package, deck_json(deck))
    presentation_part.relate_to(part, DECK_RELTYPE)


def read_deck(data: bytes) -> Deck:
    """The deck embedded in a rendered PPTX or PDF; ``NoEmbeddedDeck`` when there is none or it is broken."""
    if data[:5] == b"%PDF-":
        raw = _deck_json_from_pdf(data)
    elif data[:4] == b"PK\x03\x04":
        raw = _deck_json_from_pptx(data)
    else:
        raise NoEmbeddedDeck("neither a PDF nor a PPTX (zip) file")
    return _parse_deck(raw)


def _parse_deck(raw: bytes) -> Deck:
    # json.loads, not model_validate_json: the escaped lone surrogates deck_json writes must come back
    # as the same strings, which pydantic's JSON parser refuses.
    try:
        document = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise NoEmbeddedDeck(f"{DECK_JSON_NAME} is not JSON ({error})") from error
    try:
        return Deck.model_validate(document)
    except ValueError as error:  # pydantic's ValidationError is a ValueError
        raise NoEmbeddedDeck(f"{DECK_JSON_NAME} is not a valid deck: {error}") from error


def _deck_json_from_pptx(data: bytes) -> bytes:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            presentation = _related_part(package, "/", _OFFICE_DOCUMENT_RELTYPE)
            if presentation is None:
                raise NoEmbeddedDeck("the PPTX has no presentation part")
            deck_part = _related_part(package, presentation, DECK_RELTYPE)
            if deck_part is None:
                raise NoEmbeddedDeck(f"the PPTX carries no {DECK_JSON_NAME} (no {DECK_RELTYPE} relationship)")
            return _read_member(package, deck_part.lstrip("/"))
    except zipfile.BadZipFile as error:
        raise NoEmbeddedDeck(f"not a readable PPTX ({error})") from error


def _related_part(package: zipfile.ZipFile, source: str, reltype: str) -> str | None:
    """The part name (``/ppt/presentation.xml``) that ``source`` relates to with ``reltype``, if any."""
    directory, name = posixpath.split(source)
    rels_member = posixpath.join(directory, "_rels", f"{name}.rels").lstrip("/")
    if rels_member not in package.namelist():
        return None
    try:
        rels = etree.fromstring(_read_member(package, rels_member), parser=_SAFE_XML)
    except etree.XMLSyntaxError as error:
        raise NoEmbeddedDeck(f"the PPTX has a broken relationships part {rels_member} ({error})") from error
    for relationship in rels.iter(_RELATIONSHIP):
        if relationship.get("Type") == reltype and relationship.get("TargetMode") != "External":
            target = relationship.get("Target") or ""
            joined = target if target.startswith("/") else posixpath.join(directory, target)
            return posixpath.normpath("/" + joined.lstrip("/"))
    return None


def _read_member(package: zipfile.ZipFile, member: str) -> bytes:
    try:
        info = package.getinfo(member)
    except KeyError as error:
        raise NoEmbeddedDeck(f"the PPTX has no {member}") from error
    if info.file_size > _MAX_DECK_JSON_BYTES:
        raise NoEmbeddedDeck(f"{member} is {info.file_size} bytes, more than any deck")
    try:
        return package.read(info)
    except (zipfile.BadZipFile, OSError, EOFError) as error:  # a CRC mismatch, a truncated member
        raise NoEmbeddedDeck(f"cannot read {member} from the PPTX ({error})") from error


def _deck_json_from_pdf(data: bytes) -> bytes:
    try:
        reader = PdfReader(io.BytesIO(data))
        found = [
            attachment.content
            for attachment in reader.attachment_list
            if DECK_JSON_NAME in (attachment.description, attachment.name)
        ]
    except (PyPdfError, KeyError, TypeError, ValueError, OSError) as error:
        # pypdf reports a damaged file with its own errors and, deeper in, plain lookup and type errors.
        raise NoEmbeddedDeck(f"not a readable PDF ({type(error).__name__}: {error})") from error
    if not found:
        raise NoEmbeddedDeck(f"the PDF carries no {DECK_JSON_NAME} attachment")
    if len(found[0]) > _MAX_DECK_JSON_BYTES:
        raise NoEmbeddedDeck(f"the PDF's {DECK_JSON_NAME} is larger than any deck")
    return found[0]
