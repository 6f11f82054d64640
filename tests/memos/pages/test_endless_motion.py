"""An endless animation of the desk's pages moves by transform and opacity alone: a run page stays open for
the whole run, often on the machine that runs the local model, and a box-shadow or a background-position
animated forever repaints the page every frame (headless Chromium spent 114-120% of a core on a page of
four running steps; 19% once they moved by transform and opacity)."""

from __future__ import annotations

import re

from tests.conftest import ROOT

COMPOSITED = {"transform", "opacity"}


def _keyframes(css: str) -> dict[str, set[str]]:
    """Each @keyframes block's name and the properties its frames set."""
    found: dict[str, set[str]] = {}
    for match in re.finditer(r"@keyframes\s+([\w-]+)\s*\{((?:[^{}]*\{[^{}]*\})*)\s*\}", css):
        found[match.group(1)] = set(re.findall(r"([\w-]+)\s*:", match.group(2)))
    return found


def test_every_endless_animation_is_drawn_by_the_compositor() -> None:
    for sheet in sorted((ROOT / "static" / "css").glob("*.css")):
        css = sheet.read_text()
        frames = _keyframes(css)
        endless = set(re.findall(r"animation:\s*([\w-]+)[^;}]*\binfinite\b", css))
        assert endless <= frames.keys(), (sheet.name, endless - frames.keys())
        for name in sorted(endless):
            assert frames[name] <= COMPOSITED, (sheet.name, name, frames[name] - COMPOSITED)


def test_the_reading_of_keyframes_finds_a_painted_property() -> None:
    # The other side: an endless box-shadow pulse, as the run page had, is found.
    css = "@keyframes pulse { 0% { box-shadow: 0 0 0 0 red; } 100% { box-shadow: 0 0 0 9px red; } }"
    assert _keyframes(css) == {"pulse": {"box-shadow"}}
