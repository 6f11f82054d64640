"""A deck's slides as PNG images (thumbnails), made once per PDF and kept.

A slide image is page N of the deck's PDF, rasterised by poppler's ``pdftoppm``: for a frozen version its
stored ``render.pdf`` (memos.services.version_files), the very file a reader downloads; for a run's step (a
draft, a lap, the deck step) the PDF rendered from the step's deck (agents.deck.render.pdf). Entries are
keyed by what they were drawn from (the stored PDF's sha256, or the sha256 of the deck's canonical JSON,
agents.deck.render.embedded.deck_json), so an entry is never wrong, only unused. They live in the shared
cache (memos.cache), so each web process reads what another one drew.

A page of thumbnails asks for every slide at once. The first request draws the whole deck in one render and
one ``pdftoppm`` call and stores every page; the others wait for it (a lock in the cache) rather than each
drawing the same PDF on two shared cores. The drawing happens in a render slot of the process
(memos.services.render_slots), holding no database connection.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from redis.exceptions import RedisError

from agents.deck.render.embedded import deck_json
from agents.deck.render.pdf import render_pdf
from agents.deck.spec import Deck
from memos.cache import cache_key, cached, shared_cache
from memos.services.render_slots import release_connection, render_slot

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


def stored_digest(pdf_sha256: str) -> str:
    """What a frozen version's slide images are keyed by: the sha256 of the stored PDF they are drawn from."""
    return f"pdf:{pdf_sha256}"


def pdf_key(digest: str) -> str:
    return cache_key("deck-pdf", digest)


def deck_pdf(deck: Deck) -> bytes:
    """A step's deck as a PDF (the thumbnails of its slides are drawn from it)."""
    return cached(pdf_key(deck_digest(deck)), lambda: render_pdf(deck).pdf, type_=bytes)


def slide_png(deck: Deck, number: int, *, width_px: int = THUMBNAIL_WIDTH_PX) -> bytes:
    """Slide ``number`` (1-based) of a step's deck as a PNG ``width_px`` wide, its PDF rendered for it.

    Raises IndexError for a slide the deck does not have, SlideImageFailed when poppler fails, RenderBusy
    when no render slot came free in time."""

    def draw() -> list[bytes]:
        with render_slot():
            return rasterise(deck_pdf(deck), width_px=width_px, pages=len(deck.slides))

    return _slide(deck_digest(deck), len(deck.slides), number, width_px, draw)


def stored_slide_png(
    pdf_sha256: str, *, pages: int, number: int, width_px: int, pdf: Callable[[], bytes]
) -> bytes:
    """Slide ``number`` of a frozen version, rasterised from its stored PDF (``pdf`` reads its bytes, whose
    sha256 is ``pdf_sha256``): never rendered again. Raises as ``slide_png``."""

    def draw() -> list[bytes]:
        body = pdf()  # read before waiting for a slot, which gives the database connection back
        with render_slot():
            return rasterise(body, width_px=width_px, pages=pages)

    return _slide(stored_digest(pdf_sha256), pages, number, width_px, draw)


def stored_slide_if_drawn(pdf_sha256: str, number: int, width_px: int) -> bytes | None:
    """A frozen version's slide image if it was drawn already: no database read, no render."""
    return _read(slide_key(stored_digest(pdf_sha256), number, width_px))


def _slide(digest: str, pages: int, number: int, width_px: int, draw: Callable[[], list[bytes]]) -> bytes:
    if not 1 <= number <= pages:
        raise IndexError(f"the deck has {pages} slides, not a slide {number}")
    key = slide_key(digest, number, width_px)
    found = _read(key)
    if found is not None:
        return found
    lock = cache_key("deck-slides-lock", digest, width_px)
    token = uuid.uuid4().hex
    if not _acquire(lock, token):
        release_connection()  # the wait may last seconds: no database connection is held meanwhile
        drawn = _wait_for(key, lock)
        if drawn is not None:
            return drawn
        log.warning("no slide images of deck %s from its other renderer; drawing them here", digest[:12])
    try:
        images = draw()
        _store({slide_key(digest, n, width_px): png for n, png in enumerate(images, start=1)})
    finally:
        _release(lock, token)
    return images[number - 1]


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
