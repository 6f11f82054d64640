"""Each symbol's evidence chosen by code for what it is about (issue 32): a post quoted for a symbol names it
(cashtag, ticker or company name); what the sector's reading cited that does not is the sector's context;
promotion is never quoted; a symbol with nothing of its own says so in a sentence naming it and what was
searched; a reason the model wrote alike for several symbols is left out."""

from __future__ import annotations

from datetime import date

from agents.screen.config import Thresholds
from agents.screen.criteria import model_part
from agents.screen.evidence import may_be_about, names_symbol, short_names, symbol_evidence
from agents.screen.outputs import Document, NewsOutput, Searched, SymbolCallOut, SynthesisOutput
from agents.screen.quant import SymbolProfile
from agents.screen.search import Query
from agents.screen.verdicts import proposals, symbol_floor

SECTOR = "Basic Materials"
END = date(2015, 8, 21)


def _post(doc_id: str, text: str, kind: str = "social", about: tuple[str, ...] = ()) -> Document:
    return Document(
        doc_id=doc_id,
        kind=kind,
        source="stocknet",
        published=END,
        title=text[:80],
        text=text,
        about=list(about),
    )


XOM_POST = _post("s-xom", "analysts ’ recent ratings changes for exxon mobil $xom URL")
CVX_NAME = _post("s-cvx", "chevron slashes its workforce URL")
OTHERS = _post(
    "s-stx", "7th year fear: making sense and taking advantage of seasonal volatility URL $stx $tot $ip"
)
SPAM = _post(
    "s-spam", "millionaire trading student URL made millions learning to trade from URL $veev $xom $ilmn"
)


def _profile(symbol: str, name: str) -> SymbolProfile:
    return SymbolProfile(
        symbol=symbol,
        name=name,
        sector=SECTOR,
        sector_rule="table",
        as_of=END,
        figures={"alpha_1w": -0.01},
        market_part=None,
        quant_signal="NEUTRAL",
        quant_note="",
        facts={},
    )


def _reading(documents: list[Document], cited: list[str]) -> NewsOutput:
    posts = Query(
        kind="posts",
        text=f"{SECTOR}: posts on XOM, CVX, BP in the week to {END}",
        terms="",
        sector=SECTOR,
        symbols=("XOM", "CVX", "BP"),
        start=date(2015, 8, 15),
        end=END,
        limit=4,
    )
    return NewsOutput(
        sector=SECTOR,
        searches=[Searched(query=posts, found=[d.doc_id for d in documents])],
        documents=documents,
        summary="Limited evidence found.",
        claimed="weak",
        ceiling="weak",
        evidence_quality="weak",
        cited=cited,
    )


def test_a_post_names_a_symbol_by_cashtag_ticker_or_company_name() -> None:
    assert names_symbol("$xom news: oil at a six-year low", "XOM", "Exxon Mobil Corporation")
    assert names_symbol("XOM cut its capital spending again", "XOM", "Exxon Mobil Corporation")
    assert names_symbol("analysts cut exxon's target", "XOM", "Exxon Mobil Corporation")
    assert names_symbol("at & t sees significant drop in short interest", "T", "AT&T Inc.")
    assert names_symbol("shell and bp agree on a swap $rds-b", "RDS-B", "Royal Dutch Shell")
    assert names_symbol("a filing URL $rds.b", "RDS-B", "Royal Dutch Shell")
    assert names_symbol("$pg.us p & g aims to boost venezuelan product supply", "PG", "The Procter & Gamble")
    assert not names_symbol("ppl.to pembina pipeline corp. URL $ppl.to", "PPL", "PPL Corporation")
    # ... and not by others' cashtags, a word that only shares its letters, or a shared first word.
    assert not names_symbol("7th year fear URL $stx $tot $ip", "XOM", "Exxon Mobil Corporation")
    assert not names_symbol("exxon and its peers URL $cvx", "XOM", "Exxon Mobil Corporation")
    assert not names_symbol("the meeting starts at 3 PM", "PM", "Philip Morris International")
    assert not names_symbol("general motors recalls a model", "GE", "General Electric Company")
    assert not names_symbol("we make love under pretty lights, l $d", "D", "Dominion Resources, Inc.")
    assert names_symbol("sogotrade's spotlight stocks $d $nrg", "D", "Dominion Resources, Inc.")


def test_a_company_s_short_names_drop_its_legal_form_and_a_generic_first_word() -> None:
    assert short_names("Exxon Mobil Corporation") == ("exxon mobil", "exxon")
    assert short_names("The Coca-Cola Company") == ("coca cola", "coca")
    assert short_names("General Electric Company") == ("general electric",)
    assert short_names("Apple Inc.") == ("apple",)


def test_a_news_item_the_desk_tagged_with_the_symbol_names_it_but_a_post_s_file_does_not() -> None:
    news = _post("n-1", "Oil majors cut spending as crude slides", kind="news", about=("XOM",))
    post_in_xom_file = _post("s-1", "$veev $stx up on the day", about=("XOM",))
    chosen = symbol_evidence("XOM", "Exxon Mobil Corporation", [news, post_in_xom_file], {"n-1", "s-1"})
    assert chosen.own == [news]
    assert chosen.context == [post_in_xom_file]


def test_a_symbol_quotes_what_names_it_and_its_sector_s_other_posts_are_context_and_spam_neither() -> None:
    documents = [SPAM, OTHERS, XOM_POST, CVX_NAME]
    cited = {"s-spam", "s-stx", "s-cvx"}
    xom = symbol_evidence("XOM", "Exxon Mobil Corporation", documents, cited)
    assert xom.own == [XOM_POST]  # found but not cited by the model: code chose it for XOM
    assert xom.context == [OTHERS, CVX_NAME]  # cited for the sector, naming other symbols
    assert xom.promotional == [SPAM]  # it carries $xom, and is still never quoted
    cvx = symbol_evidence("CVX", "Chevron Corporation", documents, cited)
    assert cvx.own == [CVX_NAME] and XOM_POST not in cvx.context  # XOM's post was not cited: not shown


def test_the_flag_reason_quotes_the_symbol_s_own_post_or_says_in_its_own_sentence_it_has_none() -> None:
    reading = _reading([SPAM, OTHERS, XOM_POST], cited=["s-spam", "s-stx"])
    xom = symbol_floor(_profile("XOM", "Exxon Mobil Corporation"), reading, Thresholds()).rule
    assert xom.startswith("Limited evidence found: ") and "exxon mobil $xom" in xom
    assert "millionaire" not in xom and "$stx" not in xom
    bp = symbol_floor(_profile("BP", "BP p.l.c."), reading, Thresholds()).rule
    assert bp.startswith(
        "Limited evidence found for BP: none of the 2 documents the Basic Materials searches"
    )
    assert "posts on its 3 symbols; to 2015-08-21" in bp
    assert (
        "no specific catalyst identified for BP" in bp and "Basic Materials context, not BP's evidence" in bp
    )
    assert "millionaire" not in bp and "$stx" not in bp
    # Code's sentence is the protocol's, its count and date included: none of it is counted as the model's.
    assert model_part(f"{bp} BP held up.") == "BP held up."


def test_no_own_sentence_where_the_sector_has_no_evidence_at_all() -> None:
    reading = _reading([], cited=[]).model_copy(update={"evidence_quality": "none", "ceiling": "none"})
    rule = symbol_floor(_profile("BP", "BP p.l.c."), reading, Thresholds()).rule
    assert not rule.startswith("Limited evidence found")


def _call(symbol: str, reason: str) -> SymbolCallOut:
    return SymbolCallOut(
        symbol=symbol,
        proposed="YELLOW",
        flag_reason=reason,
        bullish_signals=[],
        bearish_signals=[],
        key_concern="",
    )


def test_a_reason_written_alike_for_several_symbols_of_a_sector_is_left_out_and_an_own_one_kept() -> None:
    synthesis = SynthesisOutput(
        sector=SECTOR,
        synthesis="",
        drop_type="unclear",
        confidence="low",
        calls=[
            _call("XOM", "XOM follows its sector's story, with its own momentum."),
            _call("CVX", "CVX follows its sector's story, with its own momentum."),
            _call("BP", "BP fell on its refinery outage."),
        ],
    )
    calls = proposals({SECTOR: synthesis})
    assert calls["XOM"].flag_reason == calls["CVX"].flag_reason == ""
    assert calls["BP"].flag_reason == "BP fell on its refinery outage."
    assert calls["XOM"].proposed == "YELLOW"  # the proposal stands; only the shared words go


def test_a_post_in_a_symbol_s_file_is_read_unless_its_cashtag_is_part_of_a_word() -> None:
    assert may_be_about("sogotrade's spotlight stocks $d $nrg", "D")
    assert may_be_about("dominion raises its dividend", "D")  # no cashtag: its words decide later
    assert not may_be_about("we make love under pretty lights, l $d", "D")
    assert not may_be_about("nilai rupiah menguat jadi 1 rupiah = 1000 u $d", "D")
    assert not may_be_about("somwtimes hat 3 can be the b3 $t l0v3", "T")
    assert may_be_about("s & p stocks worth watching... $t $chk $cnx", "T")
    # A glued "teaml$d", split by the tokenizer, in a post with nothing of the trade in it.
    assert not may_be_about("AT_USER new AT_USER out now URL obh topgoon teaml $d", "D")
    assert may_be_about("$t is rated buy, 10.0 % upside by wall street analysts", "T")
    assert may_be_about("moffett nathanson reiterates “ hold ” rating for at & t $t URL", "T")
