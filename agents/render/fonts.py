"""The one typeface both deck renderers use, and where its files are, so the lint measures text with the
metrics of the font that draws it. DejaVu Sans is installed by the project's scripts (fonts-dejavu-core) on
every machine that renders; LibreOffice and WeasyPrint resolve it by name."""

from __future__ import annotations

from pathlib import Path

FONT_NAME = "DejaVu Sans"
_FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
_FILES = {False: "DejaVuSans.ttf", True: "DejaVuSans-Bold.ttf"}


class FontMissing(RuntimeError):
    pass


def font_path(*, bold: bool = False) -> Path:
    path = _FONT_DIR / _FILES[bold]
    if not path.is_file():
        raise FontMissing(
            f"{FONT_NAME} is not installed ({path}); run scripts/run.sh or scripts/test.sh once"
        )
    return path
