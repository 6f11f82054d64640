"""The bundled snapshot holds only files copied unchanged from ../shared/data under a licence that allows
redistribution (../shared/data/PROVENANCE.md), each listed with its source in data/snapshot/ATTRIBUTION.md."""

from __future__ import annotations

import gzip
import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from tests.agents.data import SHARED_DATA, SNAPSHOT, shared_file

ATTRIBUTION = "ATTRIBUTION.md"
# PROVENANCE.md's licence column: what may be shipped in the product, and what is for tests only.
REDISTRIBUTABLE = ("MIT", "ODC-PDDL")
TESTS_ONLY = ("CC BY-NC", "none stated")
# Files of ../shared/data that may be shipped but are deliberately left out: subsets derived from a
# companyfacts file that is bundled whole.
DERIVED_SUBSETS = "edgar/companyfacts/key_concepts/"
# | `file` | bytes | sha256 (first 16) | source repo | path in repo | commit | licence | contents |
# The companyfacts added on 2026-11-28 (GOOG, META) give the whole sha256 of the raw JSON a .gz file holds.
PROVENANCE_ROW = re.compile(
    r"^\| `(?P<file>[^`]+)` \| (?P<bytes>\d+) \| `(?P<sha>[0-9a-f]{16}|[0-9a-f]{64})` \|"
    r" [^|]+ \| [^|]+ \| [^|]+ \| (?P<licence>[^|]+) \|"
)
# | `file` | bytes | primary source | obtained from | licence |
ATTRIBUTION_ROW = re.compile(
    r"^\| `(?P<file>[^`]+)` \| (?P<bytes>\d+) \| [^|]+ \| [^|]+ \| (?P<licence>[^|]+) \|$"
)


@dataclass(frozen=True)
class Recorded:
    size: int
    sha256_prefix: str
    licence: str

    def matches(self, path: Path) -> bool:
        """The file's sha256 starts with the recorded one; a whole digest is of the raw JSON a .gz holds."""
        if len(self.sha256_prefix) == 64 and path.suffix == ".gz":
            return hashlib.sha256(gzip.decompress(path.read_bytes())).hexdigest() == self.sha256_prefix
        return sha256(path).startswith(self.sha256_prefix)


# The stocknet folder is described by a section of PROVENANCE.md, not file by file: its files are upstream's,
# unchanged, under the section's licence and bundling rule.
STOCKNET = "stocknet/"
STOCKNET_SECTION = re.compile(
    r"`stocknet/` is yumoxu/stocknet-dataset \((?P<licence>MIT)[^)]*\)"
    r".*?Bundling rule: \*\*MIT, may be bundled\*\*",
    re.DOTALL,
)


@cache
def provenance() -> dict[str, Recorded]:
    text = shared_file("PROVENANCE.md").read_text(encoding="utf-8")
    return {
        match["file"]: Recorded(int(match["bytes"]), match["sha"], match["licence"].strip())
        for match in map(PROVENANCE_ROW.match, text.splitlines())
        if match
    }


@cache
def stocknet_licence() -> str:
    found = STOCKNET_SECTION.search(shared_file("PROVENANCE.md").read_text(encoding="utf-8"))
    assert found is not None, "PROVENANCE.md no longer says stocknet/ may be bundled"
    return found["licence"]


def recorded(relative: str) -> Recorded | None:
    """What PROVENANCE.md records of a bundled file: its row, or for stocknet's files its section."""
    if relative.startswith(STOCKNET):
        origin = SHARED_DATA / relative
        return Recorded(origin.stat().st_size, sha256(origin)[:16], stocknet_licence())
    return provenance().get(relative)


def bundled() -> list[str]:
    return sorted(
        path.relative_to(SNAPSHOT).as_posix()
        for path in SNAPSHOT.rglob("*")
        if path.is_file() and path.name != ATTRIBUTION
    )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def redistributable(licence: str) -> bool:
    return licence.startswith(REDISTRIBUTABLE) and not any(mark in licence for mark in TESTS_ONLY)


def licence_family(licence: str) -> str:
    """ "ODC-PDDL" or "MIT" (SEC data is public information; the repositories that carried it are MIT)."""
    return "ODC-PDDL" if "ODC-PDDL" in licence else "MIT" if "MIT" in licence else licence.strip()


def test_the_provenance_table_is_read_whole() -> None:
    # PROVENANCE.md describes 63 files; a parser that read fewer would let the checks below pass vacuously.
    assert len(provenance()) == 63
    assert provenance()["edgar/companyfacts/CIK0001652044_GOOG.json.gz"].licence.startswith("MIT")
    assert provenance()["prices/fnspid_with_sentiment/NVDA.csv"].licence == "CC BY-NC 4.0"
    assert provenance()["prices/daily/XLK.csv"].licence == "none stated"


@pytest.mark.parametrize("relative", bundled())
def test_every_bundled_file_is_byte_identical_to_its_origin_in_shared_data(relative: str) -> None:
    origin = SHARED_DATA / relative
    assert origin.is_file(), f"{relative} has no origin in ../shared/data"
    assert (SNAPSHOT / relative).read_bytes() == origin.read_bytes()
    found = recorded(relative)
    assert found is not None, f"{relative} is not described in ../shared/data/PROVENANCE.md"
    assert (SNAPSHOT / relative).stat().st_size == found.size
    assert found.matches(SNAPSHOT / relative)


@pytest.mark.parametrize("relative", bundled())
def test_every_bundled_file_has_a_licence_that_allows_redistribution(relative: str) -> None:
    found = recorded(relative)
    assert found is not None, f"{relative} is not described in ../shared/data/PROVENANCE.md"
    assert redistributable(found.licence), f"{relative} is {found.licence!r}: tests only, never bundled"


def test_no_bundled_file_carries_the_bytes_of_a_file_that_may_not_be_shipped() -> None:
    # Catches a tests-only file copied in under another name.
    tests_only = {
        sha256(SHARED_DATA / relative): relative
        for relative, recorded in provenance().items()
        if not redistributable(recorded.licence)
    }
    assert len(tests_only) == 29  # FNSPID (CC BY-NC 4.0) and the price files with no stated licence
    smuggled = {
        relative: tests_only[digest]
        for relative in bundled()
        if (digest := sha256(SNAPSHOT / relative)) in tests_only
    }
    assert smuggled == {}


def test_attribution_lists_every_bundled_file_with_its_size_and_licence() -> None:
    text = (SNAPSHOT / ATTRIBUTION).read_text(encoding="utf-8")
    rows = {match["file"]: match for match in map(ATTRIBUTION_ROW.match, text.splitlines()) if match}
    assert sorted(rows) == bundled()
    for relative, row in rows.items():
        assert int(row["bytes"]) == (SNAPSHOT / relative).stat().st_size, relative
        found = recorded(relative)
        assert found is not None, relative
        assert licence_family(row["licence"]) == licence_family(found.licence), relative


def test_every_redistributable_file_of_shared_data_is_bundled_unless_it_is_a_derived_subset() -> None:
    left_out = [
        relative
        for relative, recorded in provenance().items()
        if redistributable(recorded.licence)
        and not relative.startswith(DERIVED_SUBSETS)
        and not (SNAPSHOT / relative).is_file()
    ]
    assert left_out == []
