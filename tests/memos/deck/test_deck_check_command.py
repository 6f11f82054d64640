"""``manage.py deck_check``: a rendered deck's figures against the fact store's rows, as a table or JSON,
with exit status 0 (all ok), 1 (any not) and 2 (bad input, one line on stderr)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from datetime import date
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from pptx import Presentation
from pypdf import PdfWriter

from agents.deck.render.pdf import render_pdf
from agents.deck.render.pptx import render_pptx
from agents.deck.spec import Deck
from memos.models import Company, FactRecord
from tests.agents.deck.samples import sample_deck
from tests.memos.factories import company

REPO_ROOT = Path(__file__).resolve().parents[3]
FIGURE_KEYS = {"slide", "text", "fact_id", "expected", "status"}


def store(deck: Deck, of: Company) -> None:
    """A fact-store row for every figure of ``deck``, as the EDGAR and analysis steps write them."""
    for figure in deck.figures().values():
        _, metric, period = figure.fact_id.split(":")
        year = int(period.removeprefix("FY"))
        FactRecord.objects.create(
            fact_id=figure.fact_id,
            company=of,
            metric=metric,
            value=figure.decimal,
            unit=figure.unit,
            period_start=date(year - 1, 10, 1),
            period_end=date(year, 9, 28),
            fiscal_year=year,
            fiscal_period="FY",
            source=FactRecord.Source.DERIVED if figure.unit == "pure" else FactRecord.Source.COMPANYFACTS,
            form="" if figure.unit == "pure" else "10-K",
            filed=None if figure.unit == "pure" else date(year, 11, 1),
            url=figure.url,
        )


def written(tmp_path: Path, data: bytes, suffix: str) -> str:
    path = tmp_path / f"deck{suffix}"
    path.write_bytes(data)
    return str(path)


def deck_check(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("deck_check", *args, stdout=out, stderr=err)
    except SystemExit as exit_info:
        return int(exit_info.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


@pytest.fixture
def deck() -> Deck:
    return sample_deck(6)


@pytest.mark.django_db
def test_a_deck_that_matches_the_store_prints_every_figure_and_exits_0(deck: Deck, tmp_path: Path) -> None:
    store(deck, company())
    code, out, err = deck_check(written(tmp_path, render_pptx(deck), ".pptx"))
    lines = out.splitlines()
    assert (code, err) == (0, "")
    assert lines[0].split() == ["slide", "text", "fact", "expected", "status"]
    assert lines[1].split() == [
        "1",
        "USD",
        "391,035",
        "M",
        "AAPL:revenue:FY2024",
        "USD",
        "391,035",
        "M",
        "ok",
    ]
    total = sum(len(slide.figures()) for slide in deck.slides)
    assert len(lines) == 1 + total + 1
    assert lines[-1] == f"ok: all {total} figures match the fact store"


@pytest.mark.django_db
def test_a_figure_that_differs_from_the_store_is_a_mismatch_and_exits_1(deck: Deck, tmp_path: Path) -> None:
    store(deck, company())
    FactRecord.objects.filter(fact_id="AAPL:gross_margin:FY2024").update(value="0.4630000000")  # restated
    code, out, _ = deck_check(written(tmp_path, render_pdf(deck).pdf, ".pdf"), "--json")
    report = json.loads(out)
    assert code == 1
    assert set(report) == {"ok", "figures"}
    assert report["ok"] is False
    assert all(set(row) == FIGURE_KEYS for row in report["figures"])
    wrong = {
        "text": "46.2%",
        "fact_id": "AAPL:gross_margin:FY2024",
        "expected": "46.3%",
        "status": "mismatch",
    }
    assert [row for row in report["figures"] if row["status"] != "ok"] == [
        {"slide": 2, **wrong},
        {"slide": 6, **wrong},
    ]


@pytest.mark.django_db
def test_a_figure_the_store_does_not_hold_is_unresolved(deck: Deck, tmp_path: Path) -> None:
    store(deck, company())
    FactRecord.objects.filter(fact_id="AAPL:eps_diluted:FY2024").delete()
    code, out, _ = deck_check(written(tmp_path, render_pptx(deck), ".pptx"))
    assert code == 1
    assert [line.split() for line in out.splitlines() if "unresolved" in line][:1] == [
        ["2", "6.08", "USD/shares", "AAPL:eps_diluted:FY2024", "-", "unresolved"]
    ]
    total = sum(len(slide.figures()) for slide in deck.slides)
    assert out.splitlines()[-1] == f"FAILED: 2 of {total} figures do not match the fact store (2 unresolved)"


@pytest.mark.django_db
def test_the_period_comes_from_the_store_row(deck: Deck, tmp_path: Path) -> None:
    store(deck, company())
    FactRecord.objects.filter(fact_id="AAPL:revenue:FY2022").update(fiscal_year=2021)
    code, out, _ = deck_check(written(tmp_path, render_pptx(deck), ".pptx"), "--json")
    problems = [row for row in json.loads(out)["figures"] if row["status"] != "ok"]
    assert code == 1
    assert [(row["slide"], row["text"], row["expected"]) for row in problems] == [
        (1, "USD 394,328 M (FY2022)", "USD 394,328 M (FY2021)"),
        (5, "USD 394,328 M (FY2022)", "USD 394,328 M (FY2021)"),
    ]


def _blank_pptx() -> bytes:
    buffer = io.BytesIO()
    Presentation().save(buffer)
    return buffer.getvalue()


def _blank_pdf() -> bytes:
    writer = PdfWriter()
    writer.add_blank_page(width=200, height=100)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.pptx", None, "no such file"),
        ("notes.txt", b"Revenue FY2024: USD 391,035 M\n", "neither a PDF nor a PPTX (zip) file"),
        ("plain.pptx", "pptx", "the PPTX carries no deck.json"),
        ("plain.pdf", "pdf", "the PDF carries no deck.json attachment"),
        ("broken.pdf", b"%PDF-1.7\n\x00\x01 not a pdf", "not a readable PDF"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_2(
    tmp_path: Path, name: str, content: bytes | str | None, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(
            {"pptx": _blank_pptx, "pdf": _blank_pdf}[content]() if isinstance(content, str) else content
        )
    code, out, err = deck_check(str(path))
    assert (code, out) == (2, "")
    assert err.startswith(f"deck_check: {path}: ")
    assert message in err
    assert err.count("\n") <= 1


def test_a_zip_bomb_is_refused_in_one_line_with_exit_2(deck: Deck, tmp_path: Path) -> None:
    # 300 MB of zeros in a part python-pptx loads on open: 0.3 MB on disk.
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(render_pptx(deck))) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bomb,
    ):
        for info in source.infolist():
            if info.filename == "ppt/printerSettings/printerSettings1.bin":
                with bomb.open(info.filename, "w") as member:
                    for _ in range(300):
                        member.write(bytes(1024 * 1024))
            else:
                bomb.writestr(info, source.read(info))
    path = written(tmp_path, out.getvalue(), ".pptx")
    code, out_text, err = deck_check(path)
    assert (code, out_text) == (2, "")
    assert err.startswith(f"deck_check: {path}: the PPTX unzips to 314.")
    assert err.endswith(" MB, more than any deck (256.0 MB at most)\n")


def test_a_file_larger_than_any_deck_is_refused_without_being_read(tmp_path: Path) -> None:
    huge = tmp_path / "huge.pdf"
    with huge.open("wb") as sparse:  # 64 GB on paper, nothing on disk: reading it would take minutes
        sparse.write(b"%PDF-1.7\n")
        sparse.truncate(64 * 1024**3)
    code, out, err = deck_check(str(huge))
    assert (code, out) == (2, "")
    assert err.strip() == f"deck_check: {huge}: the file is 68,719.5 MB, more than any deck (32.0 MB at most)"


def _run_as_program(*args: str) -> subprocess.CompletedProcess[str]:
    db = connection.settings_dict
    environment = {
        **os.environ,
        "ANALYST_DESK_TESTING": "true",
        # pytest-django's test database, which this (transactional) test commits to.
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
    }
    return subprocess.run(
        [sys.executable, "manage.py", "deck_check", *args],
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.django_db(transaction=True)
def test_the_command_run_as_a_program_exits_0_1_and_2(deck: Deck, tmp_path: Path) -> None:
    store(deck, company())
    clean = written(tmp_path, render_pptx(deck), ".pptx")
    seeded = written(
        tmp_path, render_pdf(_retitled(deck, "Hold: the stock is up 12.5%"), spec=deck).pdf, ".pdf"
    )

    ok = _run_as_program(clean, "--json")
    assert (ok.returncode, ok.stderr) == (0, "")
    assert json.loads(ok.stdout)["ok"] is True

    failed = _run_as_program(seeded, "--json")
    assert failed.returncode == 1
    figures = json.loads(failed.stdout)["figures"]
    assert [row for row in figures if row["status"] != "ok"] == [
        {"slide": 1, "text": "12.5%", "fact_id": None, "expected": None, "status": "unresolved"}
    ]

    bad = _run_as_program(str(tmp_path / "missing.pdf"))
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr.strip() == f"deck_check: {tmp_path / 'missing.pdf'}: no such file"


def _retitled(deck: Deck, title: str) -> Deck:
    first = deck.slides[0].model_copy(update={"title": title})
    return deck.model_copy(update={"slides": (first, *deck.slides[1:])})
