"""The PDF renderer: a real WeasyPrint render of our own static files and inline data, and not one byte
read or sent for anything else (file://, loopback, cloud metadata, other hosts, escapes from static/)."""

from __future__ import annotations

import base64
import io
import os
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest
from pypdf import PdfReader

from agents.render.pdf import RenderedPdf, html_to_pdf
from agents.text.cleaning import clean_render_text
from tests.agents.render.pdf_fonts import embedded_fonts

BASE_URL = "https://desk.invalid/"
# An 8x4 blue PNG.
PNG_DATA_URI = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAECAIAAAA8r+mnAAAAFElEQVR4nGMUydvCgA0wYRUlSwIAeAABPmFmLJYAAAAASUVORK5CYII="
)
REPORT_CSS = """
@page { size: A5; margin: 12mm; }
body { font-family: "DejaVu Sans", sans-serif; font-size: 10pt; }
section + section { break-before: page; }
h1 { color: #0a3d62; }
h1::before { content: "Section: "; }
.screen-only { display: none; }
img.chart { width: 60mm; height: 30mm; }
"""
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
SECRET_CSS = 'h1::after { content: " LeakedSecret"; }'


@dataclass
class Loopback:
    """A tiny HTTP server on 127.0.0.1 that counts every request it gets."""

    port: int
    hits: list[str] = field(default_factory=list)


@dataclass
class NetworkLog:
    attempts: list[str] = field(default_factory=list)


@pytest.fixture
def static_root(tmp_path: Path) -> Path:
    root = tmp_path / "static"
    (root / "css").mkdir(parents=True)
    (root / "css" / "report.css").write_text(REPORT_CSS)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.css").write_text(SECRET_CSS)
    (root / "css" / "linked.css").symlink_to(outside / "secret.css")
    (root / "elsewhere").symlink_to(outside, target_is_directory=True)
    return root


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    state = Loopback(port=0)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.hits.append(self.path)
            body = b"h1::after { content: ' FromTheNetwork'; }"
            self.send_response(200)
            self.send_header("Content-Type", "text/css")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch) -> NetworkLog:
    """Every name lookup and outgoing connection during the test is recorded. Loopback ones go through, so
    that a leak would reach the counting server; anything else fails here and never leaves the machine."""
    log = NetworkLog()
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        log.attempts.append(f"getaddrinfo {host!r}")
        if host in LOOPBACK_NAMES:
            return real_getaddrinfo(host, *args, **kwargs)
        raise OSError("the renderer must not touch the network")

    def connect(self: socket.socket, address: Any) -> None:
        log.attempts.append(f"connect {address!r}")
        if isinstance(address, tuple) and address[0] in LOOPBACK_NAMES:
            return real_connect(self, address)
        raise OSError("the renderer must not touch the network")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    return log


def page(body: str, *, head: str = "") -> str:
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>Memo</title>"
        f'<link rel="stylesheet" href="/static/css/report.css">{head}</head><body>{body}</body></html>'
    )


def render(html: str, static_root: Path, *, base_url: str | None = BASE_URL) -> RenderedPdf:
    return html_to_pdf(html, base_url=base_url, static_root=static_root)


def text_of(result: RenderedPdf) -> str:
    return "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(result.pdf)).pages)


def test_it_renders_our_stylesheet_and_an_inline_image_into_a_real_pdf(
    static_root: Path, network: NetworkLog
) -> None:
    html = page(
        "<section><h1>Summary</h1><p>Revenue grew 12% on the year.</p>"
        f'<img class="chart" alt="chart" src="{PNG_DATA_URI}"><p class="screen-only">not in print</p>'
        "</section><section><h1>Risks</h1><p>Customer concentration.</p></section>"
        "<section><h1>Catalysts</h1><p>The Q3 filing.</p></section>"
    )
    result = render(html, static_root)

    assert result.pdf.startswith(b"%PDF-")
    reader = PdfReader(io.BytesIO(result.pdf))
    assert len(reader.pages) == result.pages == 3  # one page per section: the stylesheet's page breaks
    first = reader.pages[0].extract_text()
    assert "Section: Summary" in first  # generated content that only the stylesheet adds
    assert "Revenue grew 12% on the year." in first
    assert "not in print" not in first
    assert len(reader.pages[0].images) == 1
    assert "Section: Catalysts" in reader.pages[2].extract_text()
    assert reader.pages[0].mediabox.width == pytest.approx(419.53, abs=0.5)  # A5, from @page
    assert (result.refused, result.missing) == ((), ())
    assert network.attempts == []


def test_it_serves_static_files_with_no_base_url_through_an_internal_origin(static_root: Path) -> None:
    result = render(page("<h1>Summary</h1>"), static_root, base_url=None)

    assert "Section: Summary" in text_of(result)
    assert result.refused == ()


def test_it_serves_an_absolute_static_url_only_on_the_apps_own_origin(static_root: Path) -> None:
    own = "https://desk.invalid/static/css/report.css"
    others = [
        "https://desk.invalid:8443/static/css/report.css",
        "http://desk.invalid/static/css/report.css",
        "https://user:pw@desk.invalid/static/css/report.css",
        "https://other.invalid/static/css/report.css",
        "https://desk.invalid/media/report.css",
    ]
    links = "".join(f'<link rel="stylesheet" href="{url}">' for url in [own, *others])
    result = html_to_pdf(f"{links}<h1>Summary</h1>", base_url=BASE_URL, static_root=static_root)

    assert "Section: Summary" in text_of(result)
    assert list(result.refused) == others


HOSTILE = [
    "file:///etc/passwd",
    "http://127.0.0.1:{port}/x.png",
    "http://localhost:{port}/",
    "http://[::1]:{port}/",
    "http://169.254.169.254/latest/meta-data",
    "http://[fd00:ec2::254]/latest/meta-data",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://10.1.2.3/a.css",
    "https://example.com/a.css",
    "/static/../../etc/passwd",
    "/static/%2e%2e/%2e%2e/etc/passwd",
    "/static/%2e%2e/outside/secret.css",  # a real file just outside static/
    "/static//etc/passwd",
    "/static/css/linked.css",  # a symlink to a file outside static/
    "/static/elsewhere/secret.css",  # through a symlinked directory
]


@pytest.mark.parametrize("href", HOSTILE)
def test_a_hostile_url_is_refused_everywhere_and_never_fetched(
    href: str, static_root: Path, loopback: Loopback, network: NetworkLog
) -> None:
    url = href.format(port=loopback.port)
    html = page(
        f'<h1>Summary</h1><img src="{url}"><p style="background-image: url(\'{url}\')">x</p>'
        f'<a rel="attachment" href="{url}">file</a>',
        head=f'<link rel="stylesheet" href="{url}"><link rel="attachment" href="{url}">'
        f"<style>@import url('{url}');</style>",
    )
    result = render(html, static_root)

    assert result.pdf.startswith(b"%PDF-")
    assert result.refused == (urljoin(BASE_URL, url),)  # relative ones as WeasyPrint joins them
    text = text_of(result)
    assert "Section: Summary" in text
    assert "LeakedSecret" not in text
    assert "FromTheNetwork" not in text
    assert PdfReader(io.BytesIO(result.pdf)).attachments == {}
    assert loopback.hits == []
    assert network.attempts == []


def test_a_refused_colour_profile_does_not_abort_the_render(static_root: Path, loopback: Loopback) -> None:
    # WeasyPrint 70 fetches @color-profile outside its usual try: a raising fetcher would end the render.
    url = f"http://127.0.0.1:{loopback.port}/p.icc"
    html = page(
        f"<style>@color-profile --brand {{ src: url('{url}') }} h1 {{ color: color(--brand 1 0 0) }}</style>"
        "<h1>Summary</h1>"
    )
    result = render(html, static_root)

    assert "Section: Summary" in text_of(result)
    assert result.refused == (url,)
    assert loopback.hits == []


def test_an_svg_inside_a_data_uri_cannot_reach_out_either(static_root: Path, loopback: Loopback) -> None:
    url = f"http://127.0.0.1:{loopback.port}/inner.png"
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><image href="{url}"/></svg>'
    data_uri = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    result = render(page(f'<h1>Summary</h1><img src="{data_uri}">'), static_root)

    assert url in result.refused
    assert loopback.hits == []


def test_a_missing_static_file_a_directory_or_a_fifo_is_skipped_as_missing(static_root: Path) -> None:
    os.mkfifo(static_root / "css" / "pipe.css")
    html = page(
        '<h1>Summary</h1><img src="/static/css/nope.png"><img src="/static/css/">',
        head='<link rel="stylesheet" href="/static/css/pipe.css">',
    )
    result = render(html, static_root)

    assert "Section: Summary" in text_of(result)
    assert result.refused == ()
    assert set(result.missing) == {
        BASE_URL + "static/css/nope.png",
        BASE_URL + "static/css/",
        BASE_URL + "static/css/pipe.css",
    }


def test_a_print_with_no_static_root_serves_no_static_file(network: NetworkLog) -> None:
    html = page('<h1>Summary</h1><img src="/static/css/chart.png">')
    result = html_to_pdf(html, base_url=BASE_URL, static_root=None)

    assert "Summary" in text_of(result) and "Section: Summary" not in text_of(result)  # report.css unread
    assert result.refused == ()
    assert set(result.missing) == {BASE_URL + "static/css/report.css", BASE_URL + "static/css/chart.png"}
    assert network.attempts == []


HOSTILE_TEXT = {
    "lone high surrogate": "\ud800",
    "lone low surrogate": "\udfff",
    "U+FFFE and U+FFFF": "\ufffe\uffff",
    "NUL": "\x00",
    "C0 and C1 controls": "".join(map(chr, range(1, 9))) + "\x0b\x0c\x1b\x7f\x85\x9f",
    "plane-16 non-character": "\U0010ffff",
    "bidi override": "\u202e",
}


@pytest.mark.parametrize("hostile", HOSTILE_TEXT.values(), ids=HOSTILE_TEXT.keys())
def test_hostile_characters_in_text_attributes_and_styles_do_not_crash_the_render(
    hostile: str, static_root: Path
) -> None:
    html = page(
        f"<style>h1::after {{ content: '{hostile}' }}</style>"
        f'<h1 title="{hostile}">Before{hostile}After</h1><p>{hostile * 50}</p>'
    )
    result = render(html, static_root)

    assert result.pdf.startswith(b"%PDF-")
    assert "Before" in text_of(result)


def test_cleaning_joins_surrogate_pairs_replaces_lone_ones_and_drops_controls() -> None:
    assert clean_render_text("a\ud83d\ude00b") == "a\U0001f600b"
    assert clean_render_text("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
    assert clean_render_text("a\x00b\x1bc\x85d\ufffee\U0001ffff") == "abcde"
    assert clean_render_text("keeps\ttabs\nand\r\nlines, é and €") == "keeps\ttabs\nand\r\nlines, é and €"


@pytest.mark.parametrize(
    "base_url", ["file:///srv/app/", "/srv/app/", "ftp://desk.invalid/", "https://u:p@x/"]
)
def test_the_base_url_must_be_the_apps_own_http_url(base_url: str, static_root: Path) -> None:
    with pytest.raises(ValueError, match="base_url"):
        html_to_pdf("<p>x</p>", base_url=base_url, static_root=static_root)


def test_the_static_prefix_must_be_a_path_with_slashes(static_root: Path) -> None:
    with pytest.raises(ValueError, match="allowed_prefix"):
        html_to_pdf("<p>x</p>", base_url=BASE_URL, static_root=static_root, allowed_prefix="static")


def test_text_given_no_font_is_drawn_in_the_deck_faces_and_chinese_in_the_fallback(tmp_path: Path) -> None:
    rendered = html_to_pdf("<p>Revenue 市场 grew</p>", base_url=None, static_root=tmp_path)
    assert embedded_fonts(rendered.pdf) == {"DejaVu-Sans", "WenQuanYi-Micro-Hei"}
    assert "Revenue 市场 grew" in PdfReader(io.BytesIO(rendered.pdf)).pages[0].extract_text()
