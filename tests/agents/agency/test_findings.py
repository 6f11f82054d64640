"""What F2 is shown and what F1 and F2 hand the moves stage (agents.agency.findings, through
memos.pipeline.agency.inference.checked): Apple's newest bundled posts less their promotion, each one left
out named with what gave it away; and claims that say the same thing merged, every citation kept, while
claims that differ in what they say stay apart."""

from __future__ import annotations

from agents.agency.findings import key, left_out_note, names, screened
from agents.agency.outputs import Source
from agents.agency.schemas import Inference, InferenceClaim
from agents.data.social import StocknetSocialSource
from memos.pipeline.agency.inference import checked
from tests.agents.data import SNAPSHOT

APPLE = ("Apple Inc.", "AAPL")


def _apple_posts() -> list[Source]:
    """Apple's six newest posts, as layer 0 gathers them for the agency (memos.pipeline.agency.sources)."""
    return [
        Source(
            doc_id=post.doc_id,
            kind="social",
            source=post.source,
            published=post.published,
            title=post.title,
            text=post.text,
            about="AAPL",
            stale=True,
        )
        for post in StocknetSocialSource(SNAPSHOT / "stocknet").posts("AAPL", limit=6)
    ]


def test_apple_s_promotional_posts_are_left_out_before_f2_reads_them_each_with_its_reason() -> None:
    posts = _apple_posts()
    screen = screened(posts)
    assert len(screen.left_out) == 2 and len(screen.kept) == 4
    ticker_pump, course = screen.left_out
    # A pump: hype and a dozen tickers stuffed in.
    assert ticker_pump.startswith(f"{posts[0].doc_id} (") and "names 12 tickers" in ticker_pump
    assert "\u201c$tpac 50s here we come!!" in ticker_pump
    # The post that became F2's claims, then moves, on the embedded run (issue 32).
    assert "sells a trading course or service" in course
    assert "\u201c5 steps to become a successful online trader" in course
    # What a reader would call news or a trader's view is kept, in its order.
    kept = [d.text for d in screen.kept]
    assert kept[1].startswith("apple talks for new iphone display boosts universal")
    assert kept[3].startswith("$aapl - $ms says consensus overly concerned with apple iphone")
    assert left_out_note(screen) == (
        "code left out 2 of 6 documents as promotion or spam before F2 read them"
    )
    # Nothing left out, nothing said.
    assert left_out_note(screened(screen.kept)) == ""


def test_the_company_s_name_its_ticker_and_the_company_are_one_word_of_a_claim_s_key() -> None:
    apple = names(*APPLE)
    assert key("Apple's customers complain of waits.", apple) == key(
        "apple customers complain of waits", apple
    )
    assert key("AAPL customers complain of waits!", apple) == key(
        "The company's customers complain of waits.", apple
    )
    assert key("Apple Inc. customers complain of waits.", apple) == key(
        "Apple customers complain of waits", apple
    )
    # Another company's name is a word of the claim: Apple's customers are not Dell's.
    assert key("Dell customers complain of waits.", apple) != key("Apple customers complain of waits.", apple)


def _f2(*claims: tuple[str, list[str]]) -> Inference:
    return Inference(
        claims=[InferenceClaim(statement=s, citations=c) for s, c in claims],
        gaps=["No news from the last quarter."],
    )


def test_f2_claims_that_differ_only_in_wording_trivia_are_merged_keeping_every_citation() -> None:
    posts = {d.doc_id: d for d in screened(_apple_posts()).kept}
    first, news, view, ms = posts
    answer = _f2(
        ("Apple's talks over a new iPhone display lifted Universal Display, a post reports.", [news]),
        ("apple talks over a new iphone display lifted universal display a post reports", [first]),
        (
            "A post says Morgan Stanley finds the consensus overly concerned with iPhone sell-through.",
            [ms],
        ),
        ("Posts say Morgan Stanley finds consensus overly concerned about iPhone sell-through.", [ms]),
        ("The company's share price puzzles some traders.", [view]),
    )
    found = checked("F2", answer, set(posts), {}, frozenset(), documents=posts, company=APPLE)
    assert [(c.claim_id, c.citations) for c in found.claims] == [
        ("F2.1", [news, first]),
        ("F2.2", [ms]),
        ("F2.3", [view]),
    ]
    assert found.claims[0].statement.startswith("Apple's talks over a new iPhone display")
    assert found.merged == [
        "claim 2 merged into F2.1 (the same sentence once case, punctuation and the company's name are set "
        "aside): \u201capple talks over a new iphone display lifted universal display a post reports\u201d",
        "claim 4 merged into F2.2 (the same claim citing the same documents): \u201cPosts say Morgan Stanley "
        "finds consensus overly concerned about iPhone sell-through.\u201d",
    ]
    assert found.dropped == []


def test_claims_that_say_different_things_are_never_merged() -> None:
    posts = {d.doc_id: d for d in screened(_apple_posts()).kept}
    first, news, _, ms = posts
    answer = _f2(
        ("Posts report longer waits for iPhone repairs at Apple stores.", [first]),
        ("Posts report shorter waits for iPhone repairs at Apple stores.", [first]),  # the opposite
        ("Posts say demand for the iPhone is slowing.", [ms]),
        ("Posts say demand for the iPhone is not slowing.", [ms]),  # its denial
        # The same words but other documents, and not the same sentence: two findings, two sources.
        ("Posts say demand for the new iPhone is slowing in China.", [news]),
    )
    found = checked("F2", answer, set(posts), {}, frozenset(), documents=posts, company=APPLE)
    assert len(found.claims) == 5 and found.merged == []
    # F1's claims are compared the same way: one finding said twice is one claim.
    figures = _f2(
        ("Apple's revenue is the largest in its industry.", ["AAPL:revenue:FY2025"]),
        ("The company's revenue is the largest in its industry", ["AAPL:revenue:FY2025"]),
    )
    ids = {"AAPL:revenue:FY2025"}
    one = checked("F1", figures, ids, {}, frozenset(), company=APPLE)
    assert [c.claim_id for c in one.claims] == ["F1.1"] and len(one.merged) == 1
    # Without the company's name, "Apple's" and "The company's" are different words: no merge.
    assert len(checked("F1", figures, ids, {}, frozenset()).claims) == 2
