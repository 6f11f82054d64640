"""What the fact-check reads at most: a file, a PPTX's unzipped parts and their number, a PDF's pages. A file
past a cap is refused before anything inflates it, with one message that names the cap."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Collection, Mapping
from decimal import Decimal

import pytest
from pypdf import PdfReader, PdfWriter

from agents.deck.factcheck.check import FactLookup, KnownFact, check
from agents.deck.factcheck.extract import (
    MAX_FILE_BYTES,
    MAX_PDF_PAGES,
    MAX_PPTX_PARTS,
    MAX_UNZIPPED_BYTES,
    TooLarge,
    UnreadableFile,
    refuse_oversized,
    slide_texts,
)
from agents.deck.render.pdf import render_pdf
from agents.deck.render.pptx import render_pptx
from agents.deck.spec import Deck
from tests.agents.deck.samples import sample_deck

MIB = 1024 * 1024
# A part every rendered PPTX relates from its presentation, so python-pptx loads it on open.
LOADED_PART = "ppt/printerSettings/printerSettings1.bin"


def lookup(deck: Deck) -> FactLookup:
    known = {
        fact_id: KnownFact(value=Decimal(figure.value), unit=figure.unit, period=figure.period)
        for fact_id, figure in deck.figures().items()
    }

    def found(ids: Collection[str]) -> Mapping[str, KnownFact]:
        return {fact_id: known[fact_id] for fact_id in ids if fact_id in known}

    return found


@pytest.fixture(scope="module")
def deck() -> Deck:
    return sample_deck(6)


@pytest.fixture(scope="module")
def pptx(deck: Deck) -> bytes:
    return render_pptx(deck)


def rezipped(data: bytes, *, bomb: str | None = None, bomb_bytes: int = 0, extra_parts: int = 0) -> bytes:
    """``data``'s parts again, one replaced by ``bomb_bytes`` zeros (deflate packs them about 1,000 to 1)
    and ``extra_parts`` tiny parts added: what an attacker hands the check instead of a rendered deck."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(data)) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            if info.filename != bomb:
                target.writestr(info, source.read(info))
                continue
            with target.open(info.filename, "w") as member:
                chunk = bytes(MIB)
                for _ in range(bomb_bytes // MIB + 1):
                    member.write(chunk)
        for index in range(extra_parts):
            target.writestr(f"ppt/media/extra{index}.bin", b"x")
    return out.getvalue()


def test_a_rendered_deck_is_far_inside_every_cap(deck: Deck, pptx: bytes) -> None:
    pdf = render_pdf(deck).pdf
    refuse_oversized(pptx)
    refuse_oversized(pdf)
    with zipfile.ZipFile(io.BytesIO(pptx)) as package:
        assert len(package.infolist()) * 10 < MAX_PPTX_PARTS
        assert sum(info.file_size for info in package.infolist()) * 100 < MAX_UNZIPPED_BYTES
    assert len(pptx) * 100 < MAX_FILE_BYTES


def test_a_zip_bomb_is_refused_before_any_part_is_inflated(deck: Deck, pptx: bytes) -> None:
    bomb = rezipped(pptx, bomb=LOADED_PART, bomb_bytes=MAX_UNZIPPED_BYTES + 2 * MIB)
    assert len(bomb) < 2 * MIB  # small on disk: only its declared, unzipped size gives it away
    with pytest.raises(TooLarge, match=r"unzips to 25[6-9]\.\d MB, more than any deck \(256\.0 MB at most\)"):
        check(bomb, lookup(deck))
    with pytest.raises(TooLarge, match="unzips to"):
        slide_texts(bomb)


def test_a_pptx_with_more_parts_than_any_deck_is_refused(deck: Deck, pptx: bytes) -> None:
    crowded = rezipped(pptx, extra_parts=MAX_PPTX_PARTS)
    with pytest.raises(TooLarge, match=rf"\d+ parts, more than any deck \({MAX_PPTX_PARTS:,} at most\)"):
        check(crowded, lookup(deck))


def test_a_zip_whose_directory_is_larger_than_any_deck_is_refused_before_it_is_listed(pptx: bytes) -> None:
    # The end record declares the directory's size, which zipfile reads whole before listing a single part.
    end = pptx.rindex(b"PK\x05\x06")
    lying = pptx[: end + 12] + (64 * MIB).to_bytes(4, "little") + pptx[end + 16 :]
    with pytest.raises(TooLarge, match=r"zip directory declares 67\.1 MB of entries"):
        refuse_oversized(lying)
    zip64 = pptx[:end] + b"PK\x06\x07" + bytes(16) + pptx[end:]
    with pytest.raises(TooLarge, match="zip directory"):
        refuse_oversized(zip64)


def test_a_file_larger_than_any_deck_is_refused_unread() -> None:
    with pytest.raises(TooLarge, match=r"32\.0 MB at most"):
        refuse_oversized(b"%PDF-1.7\n" + bytes(MAX_FILE_BYTES))


def test_a_pdf_with_more_pages_than_any_deck_is_refused(deck: Deck) -> None:
    writer = PdfWriter()
    for _ in range(MAX_PDF_PAGES + 1):
        writer.add_blank_page(width=72, height=72)
    out = io.BytesIO()
    writer.write(out)
    assert len(PdfReader(io.BytesIO(out.getvalue())).pages) == MAX_PDF_PAGES + 1
    with pytest.raises(TooLarge, match=rf"{MAX_PDF_PAGES + 1:,} pages, more than any deck"):
        slide_texts(out.getvalue())


def test_a_refusal_is_an_unreadable_file_to_every_caller() -> None:
    assert issubclass(TooLarge, UnreadableFile)
