"""A deck's slides as PNG images (thumbnails), and its PDF and PPTX, made once per deck and kept.

A slide image is page N of the deck's PDF (agents.deck.render.pdf), rasterised by poppler's ``pdftoppm``:
the same file a reader downloads, so a thumbnail shows exactly what the PDF shows. Everything here is keyed
by the sha256 of the deck's canonical JSON (agents.deck.render.embedded.deck_json), so an entry is never
wrong, only unused: a frozen version's deck and a finished step's deck never change, and a changed deck is
another key. Entries live in the shared cache (memos.cache), like every other value computed from content that
cannot change, so each web process reads what another one drew.

A page of thumbnails asks for every slide at once. The first request draws the whole deck in one WeasyPrint
render and one ``pdftoppm`` call and stores every page; the others wait for it (a lock in the cache) rather
than each rendering the same PDF on two shared cores.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from redis.exceptions import RedisError

from agents.deck.render.embedded import deck_json
from agents.deck.render.pdf import render_pdf
from agents.deck.render.pptx import render_pptx
from agents.deck.spec import Deck
from memos.cache import cache_key, cached, shared_cache

log = logging.getLogger(__name__)

THUMBNAIL_WIDTH_PX = 480  # shown at 240 CSS px: sharp on a 2x screen, ~20-40 KB a slide
PDFTOPPM_TIMEOUT_S = 60
# Longer than a 40-slide deck takes to render and rasterise on two busy cores (a few seconds); a waiter
# gives up after this and draws the deck itself, so a crashed renderer never blocks the page for good.
RENDER_LOCK_S = 45
_POLL_S = 0.1
_CACHE_ERRORS = (RedisError, OSError, pickle.PickleError, TypeError, AttributeError)


class SlideImageFailed(RuntimeError):
    """pdftoppm failed, timed out or drew fewer pages than the deck has slides."""


def deck_digest(deck: Deck) -> str:
    return hashlib.sha256(deck_json(deck)).hexdigest()


def slide_key(digest: str, number: int, width_px: int) -> str:
    return cache_key("deck-slide-png", digest, number, width_px)


def pdf_key(digest: str) -> str:
    return cache_key("deck-pdf", digest)


def pptx_key(digest: str) -> str:
    return cache_key("deck-pptx", digest)


def deck_pdf(deck: Deck) -> bytes:
    """The deck as the PDF readers download (and the thumbnails are drawn from)."""
    return cached(pdf_key(deck_digest(deck)), lambda: render_pdf(deck).pdf, type_=bytes)


def deck_pptx(deck: Deck) -> bytes:
    return cached(pptx_key(deck_digest(deck)), lambda: render_pptx(deck), type_=bytes)


def slide_png(deck: Deck, number: int, *, width_px: int = THUMBNAIL_WIDTH_PX) -> bytes:
    """Slide ``number`` (1-based) of the deck as a PNG ``width_px`` wide.

    Raises IndexError for a slide the deck does not have, SlideImageFailed when poppler fails."""
    if not 1 <= number <= len(deck.slides):
        raise IndexError(f"the deck has {len(deck.slides)} slides, not a slide {number}")
    digest = deck_digest(deck)
    key = slide_key(digest, number, width_px)
    found = _read(key)
    if found is not None:
        return found
    lock = cache_key("deck-slides-lock", digest, width_px)
    token = uuid.uuid4().hex
    if not _acquire(lock, token):
        drawn = _wait_for(key, lock)
        if drawn is not None:
            return drawn
        log.warning("no slide images of deck %s from its other renderer; drawing them here", digest[:12])
    try:
        pages = rasterise(deck_pdf(deck), width_px=width_px, pages=len(deck.slides))
        _store({slide_key(digest, n, width_px): png for n, png in enumerate(pages, start=1)})
    finally:
        _release(lock, token)
    return pages[number - 1]


def rasterise(pdf: bytes, *, width_px: int, pages: int) -> list[bytes]:
    """Every page of ``pdf``, ``width_px`` wide (height to scale), in one pdftoppm call."""
    with tempfile.TemporaryDirectory(prefix="deck-slides-") as folder:
        source = Path(folder) / "deck.pdf"
        source.write_bytes(pdf)
        command = [
            "pdftoppm",
            "-png",
            "-f",
            "1",
            "-l",
            str(pages),
            "-scale-to-x",
            str(width_px),
            "-scale-to-y",
            "-1",
            str(source),
            str(Path(folder) / "slide"),
        ]
        try:
            subprocess.run(command, check=True, capture_output=True, timeout=PDFTOPPM_TIMEOUT_S)
        except (OSError, subprocess.SubprocessError) as error:
            raise SlideImageFailed(f"pdftoppm could not draw the deck: {error}") from error
        # pdftoppm pads the page number to the width of the last one (slide-01.png ... slide-12.png).
        drawn = sorted(Path(folder).glob("slide-*.png"), key=lambda path: int(path.stem.rsplit("-", 1)[1]))
        if len(drawn) != pages:
            raise SlideImageFailed(f"pdftoppm drew {len(drawn)} pages of {pages}")
        return [path.read_bytes() for path in drawn]


# --- the shared cache, which is a help and not a dependency: with Redis away every request draws


def _read(key: str) -> bytes | None:
    try:
        found = shared_cache().get(key)
    except _CACHE_ERRORS:
        log.warning("could not read %s from the cache", key, exc_info=True)
        return None
    return found if isinstance(found, bytes) else None


def _store(values: dict[str, bytes]) -> None:
    try:
        shared_cache().set_many(values)
    except _CACHE_ERRORS:
        log.warning("could not keep %d slide images in the cache", len(values), exc_info=True)


def _acquire(lock: str, token: str) -> bool:
    try:
        return bool(shared_cache().add(lock, token, timeout=RENDER_LOCK_S))
    except _CACHE_ERRORS:
        return True  # no cache, no lock: draw


def _release(lock: str, token: str) -> None:
    # Only our own lock: a renderer slower than RENDER_LOCK_S must not free the lock a later one holds.
    try:
        if shared_cache().get(lock) == token:
            shared_cache().delete(lock)
    except _CACHE_ERRORS:
        log.warning("could not release %s", lock, exc_info=True)


def _wait_for(key: str, lock: str) -> bytes | None:
    """The image another request is drawing, once it is stored; None when that request let go of the
    lock without storing it (it failed) or took longer than the lock lasts."""
    deadline = time.monotonic() + RENDER_LOCK_S
    while time.monotonic() < deadline:
        time.sleep(_POLL_S)
        found = _read(key)
        if found is not None:
            return found
        try:
            if shared_cache().get(lock) is None:
                return _read(key)
        except _CACHE_ERRORS:
            return None
    return None
