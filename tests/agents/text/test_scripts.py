"""Text in another script than the brief's, found by code: the slip the embedded 1.5B model made ("市场")."""

from __future__ import annotations

import pytest

from agents.text.scripts import ENGLISH, Language, note, slips

BRIEF = "Is the buyback pace sustainable over the next 12 months?"


def found(text: str, language: Language = ENGLISH) -> list[str]:
    return [str(slip) for slip in slips(text, language)]


def test_chinese_in_an_english_bullet_is_a_slip_named_by_its_script_and_characters() -> None:
    assert found("Services 市场 carried the year") == ["Han '市场'"]
    assert note(slips("市场 and 规模 grew", ENGLISH)) == "Han '市场', Han '规模'"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Revenue क्षेत्र grew", ["Devanagari 'क्षेत्र'"]),
        ("Москва rises", ["Cyrillic 'Москва'"]),
        ("Rising αβγ words", ["Greek 'αβγ'"]),
        ("Growth，fast。", ["East Asian forms '，'", "East Asian forms '。'"]),
        ("up ３ times", ["East Asian forms (digits, not shown)"]),
    ],
)
def test_other_scripts_and_east_asian_forms_are_slips_in_english(text: str, expected: list[str]) -> None:
    assert found(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Café crème, naïve Zürich — “quoted” … 12% · €3 ± ¥5",
        "A beta β of 1.2 and a Δ in margin",
        "AAPL, BRK.B and 0700.HK filed 10-K forms",
        "Revenue up 📈 on the year",
    ],
)
def test_latin_punctuation_symbols_and_a_lone_greek_symbol_are_not_slips(text: str) -> None:
    assert found(text) == []


def test_the_brief_decides_its_language_from_its_own_letters() -> None:
    english = Language.of(BRIEF)
    chinese = Language.of("回购速度在未来12个月内可持续吗？")
    assert english.scripts == frozenset({"Latn"}) and chinese.scripts == frozenset({"Latn", "Hani"})
    assert found("Services 市场，growth", chinese) == []
    assert found("サービス grew", chinese) == ["Katakana 'サービス'"]


def test_a_name_the_fact_store_holds_is_never_a_slip_whatever_its_script() -> None:
    language = Language.of(BRIEF, names=["Apple Inc.", "腾讯控股有限公司"])
    assert language.names == ("腾讯控股有限公司",)  # a Latin name could never be flagged: not kept
    assert found("腾讯控股有限公司 grew while the 市场 slowed", language) == ["Han '市场'"]


def test_a_slip_that_is_a_number_is_named_without_showing_it() -> None:
    # A full-width "４２７" is a typed figure too: no page shows a figure a model typed, not even in a note.
    assert found("A full-width figure: ４２７ dollars, 三百 of them") == [
        "East Asian forms (digits, not shown)",
        "Han (digits, not shown)",
    ]
