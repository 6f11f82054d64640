"""Moves checked by code before they are debated: near-duplicates merged by a declared measure (tested on
move titles the agency's models wrote and on realistic ones), and moves that are generic or infeasible set
aside with the figures that show it; a distinct move, a feasible acquisition and a target without figures
are not."""

from __future__ import annotations

from decimal import Decimal

from agents.agency.dedup import MIN_JACCARD, clusters, dedup_key, near, similarity, target_words
from agents.agency.feasibility import (
    DEBT_TO_OPERATING_INCOME,
    EARNINGS_FLOOR_MULTIPLE,
    Figure,
    Holdings,
    acquisition,
    generic,
    is_acquisition,
    names_of,
    resolve,
)


def _merged(*moves: tuple[str, str]) -> list[list[str]]:
    keyed = [(f"m{n}", dedup_key(action, target)) for n, (action, target) in enumerate(moves, 1)]
    return [cluster.members for cluster in clusters(keyed)]


def test_the_same_acquisition_under_synonyms_suffixes_and_word_order_is_one_move() -> None:
    assert _merged(
        ("acquire", "Shazam"),
        ("acquire", "Acquisition of Shazam Ltd"),
        ("acquire", "Buy Shazam"),
        ("acquire", "Shazam Holdings plc"),
    ) == [["m1", "m2", "m3", "m4"]]
    # The fakes' two high-risk moves, and the rivals a model names by another word.
    assert _merged(("acquire", "a smaller competitor"), ("acquire", "smaller rivals")) == [["m1", "m2"]]
    assert _merged(
        ("partner", "channel partners in emerging markets"),
        ("partner", "emerging-market distribution partners"),
    ) == [["m1", "m2"]]
    assert _merged(("return_capital", "share repurchase"), ("return_capital", "repurchases of shares")) == [
        ["m1", "m2"]
    ]


def test_distinct_moves_are_never_merged() -> None:
    # Different targets of one action, and one target under different actions.
    assert _merged(("acquire", "Shazam"), ("acquire", "Spotify")) == [["m1"], ["m2"]]
    assert _merged(("acquire", "Shazam"), ("partner", "Shazam")) == [["m1"], ["m2"]]
    # Two of three words shared is 0.5, under the declared bar: two markets, two moves.
    assert (
        similarity(target_words("home health devices"), target_words("home security devices"))
        == 0.5
        < (MIN_JACCARD)
    )
    assert _merged(("enter_market", "home health devices"), ("enter_market", "home security devices")) == [
        ["m1"],
        ["m2"],
    ]
    # Every move of the agency's fakes but the two acquisitions stays its own move.
    fakes = [
        ("return_capital", "buyback of surplus cash"),
        ("reduce_debt", "long-term borrowings"),
        ("partner", "channel partners in emerging markets"),
        ("reprice", "the entry product tier"),
        ("cut_costs", "logistics and freight"),
        ("restructure", "the supplier base"),
        ("invest", "own chip fabrication"),
        ("communicate", "the product roadmap to customers"),
        ("launch_product", "a subscription bundle"),
        ("enter_market", "home health devices"),
        ("hedge", "currency exposure"),
        ("lobby_or_comply", "upcoming platform regulation"),
        ("divest", "the most tariff-exposed assembly lines"),
    ]
    assert len(_merged(*fakes)) == len(fakes)


def test_a_chain_of_small_steps_does_not_merge_moves_that_are_not_near() -> None:
    # b is near a and c near b, but c is compared with its cluster's first move only.
    a, b, c = "cloud storage", "cloud storage security", "storage security appliances"
    assert near(dedup_key("acquire", a), dedup_key("acquire", b))
    assert not near(dedup_key("acquire", a), dedup_key("acquire", c))
    assert _merged(("acquire", a), ("acquire", b), ("acquire", c)) == [["m1", "m2"], ["m3"]]


APPLE_NAMES = names_of(["Apple Inc."], "AAPL")


def test_a_move_whose_target_is_the_company_itself_is_generic() -> None:
    found = generic("Apple Inc.", APPLE_NAMES, "Apple Inc.")
    assert found is not None and found.kind == "generic" and "Apple Inc. itself" in found.reason
    assert generic("AAPL", APPLE_NAMES, "Apple Inc.") is not None
    assert generic("the company", APPLE_NAMES, "Apple Inc.") is not None
    # A part of the company, or another company, is a target.
    assert generic("Apple's services arm", APPLE_NAMES, "Apple Inc.") is None
    assert generic("Google Inc.", APPLE_NAMES, "Apple Inc.") is None


def _figure(ticker: str, metric: str, millions: int, year: str = "FY2025") -> Figure:
    return Figure(f"{ticker}:{metric}:{year}", metric, Decimal(millions) * 1_000_000, "USD", year)


APPLE = Holdings(
    "AAPL",
    "Apple Inc.",
    cash=_figure("AAPL", "cash", 35_934),
    operating_income=_figure("AAPL", "operating_income", 133_050),
)
ALPHABET = Holdings(
    "GOOG",
    "Alphabet Inc.",
    net_income=_figure("GOOG", "net_income", 132_170),
    equity=_figure("GOOG", "stockholders_equity", 415_265),
)


def test_an_acquisition_larger_than_cash_and_debt_capacity_is_infeasible_with_its_figures() -> None:
    found, note = acquisition(APPLE, ALPHABET)
    assert found is not None and found.kind == "infeasible" and note == ""
    floor = 132_170 * EARNINGS_FLOOR_MULTIPLE  # above Alphabet's book equity
    can = 35_934 + 133_050 * DEBT_TO_OPERATING_INCOME
    assert floor > can
    assert f"USD {floor:,} M" in found.reason and f"USD {can:,} M" in found.reason
    assert {figure.fact_id for figure in found.figures} == {
        "GOOG:net_income:FY2025",
        "GOOG:stockholders_equity:FY2025",
        "AAPL:cash:FY2025",
        "AAPL:operating_income:FY2025",
    }
    assert "USD 132,170 M (GOOG:net_income:FY2025)" in found.reason


def test_an_acquisition_within_reach_and_one_without_figures_are_not_judged_infeasible() -> None:
    small = Holdings(
        "TSLA",
        "Tesla, Inc.",
        net_income=_figure("TSLA", "net_income", 5_519, "FY2021"),
        equity=_figure("TSLA", "stockholders_equity", 30_189, "FY2021"),
    )
    found, note = acquisition(APPLE, small)
    assert found is None and note.startswith("not shown infeasible")
    found, note = acquisition(APPLE, Holdings("SHZM", "Shazam"))
    assert found is None and "no size figures" in note
    # Without its own cash and operating income the acquirer is not judged either.
    found, note = acquisition(Holdings("AAPL", "Apple Inc."), ALPHABET)
    assert found is None and "no cash and operating income" in note


def test_an_acquisition_is_known_by_its_action_or_its_title() -> None:
    assert is_acquisition("acquire", "Expand in streaming")
    assert is_acquisition("invest", "Acquisition of Google Inc.")
    assert not is_acquisition("invest", "Invest in chip fabrication")


def test_a_target_is_named_by_its_listed_name_or_a_former_one_never_by_a_description() -> None:
    index = {
        frozenset({"alphabet"}): "GOOG",
        frozenset({"google"}): "GOOG",
        frozenset({"tesla"}): "TSLA",
    }
    assert resolve("Acquisition of Google Inc.", index) == "GOOG"
    assert resolve("Alphabet Inc.", index) == "GOOG"
    assert resolve("Tesla, Inc.", index) == "TSLA"
    assert resolve("a smaller competitor", index) is None
    assert resolve("Google's advertising arm", index) is None
