"""The typed hand-offs between the screen's roles, rendered for prompts by code: the quant analyst's figures
as lines with their ids, the documents a search found (fenced as untrusted text), each role's output as the
next one reads it. One place, so every role sees the same figures written the same way."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agents.data.types import SourceDocument
from agents.screen.display import figure_lines, value_text
from agents.screen.inputs import declared_gaps
from agents.screen.outputs import Document, NewsOutput, SynthesisOutput
from agents.screen.quant import Figure, QuantOutput, SectorGroup, SymbolProfile


def figures_of(quant: QuantOutput, ids: Iterable[str]) -> list[Figure]:
    by_id = {figure.fact_id: figure for figure in quant.figures}
    return [by_id[ref] for ref in ids if ref in by_id]


def market_ids(quant: QuantOutput) -> list[str]:
    return list(quant.market.facts.values())


def market_block(quant: QuantOutput) -> str:
    market = quant.market
    return "\n".join(
        [
            f"Regime: {market.regime} ({market.regime_signal}).",
            figure_lines(figures_of(quant, market_ids(quant))),
            *(f"Not held: {gap.name}: {gap.detail}." for gap in declared_gaps()),
        ]
    )


# What each role is given of a symbol by id (a prompt's length is the embedded model's time): the news
# analyst names a symbol's own move; the senior analyst its week, beta, own move and momentum. The quant
# note gives every role the split and the rest in words and numbers code wrote.
NEWS_FIGURES = ("alpha_1w",)
SENIOR_FIGURES = ("return_1w", "beta", "alpha_1w", "rsi14")


def sector_ids(profiles: Sequence[SymbolProfile], keys: Sequence[str]) -> list[str]:
    """The figures a sector's prose may reference: its symbols' ``keys`` (each a fact with a row; a sector's
    averages are derivations code prints, not facts a reference can resolve)."""
    return [p.facts[key] for p in profiles for key in keys if key in p.facts]


def sector_block(
    quant: QuantOutput, group: SectorGroup, profiles: Sequence[SymbolProfile], keys: Sequence[str]
) -> str:
    """The sector's averages and interpretation, then each symbol: its name, its signal, code's note (the
    split of its week, momentum, volume), and its ``keys`` figures by id, on one line."""
    by_id = {figure.fact_id: figure for figure in quant.figures}
    lines = [f"{group.sector}: {group.interpretation}", figure_lines(figures_of(quant, group.facts.values()))]
    for profile in profiles:
        refs = "; ".join(
            f"[{ref}] {value_text(key, by_id[ref].value)}"
            for key in keys
            if (ref := profile.facts.get(key)) in by_id
        )
        lines += [
            "",
            f"{profile.symbol} ({profile.name}), signal {profile.quant_signal}. {profile.quant_note}",
            f"By id: {refs}" if refs else "",
        ]
    return "\n".join(lines)


def document_of(doc: SourceDocument) -> Document:
    return Document(
        doc_id=doc.doc_id,
        kind=doc.kind,
        source=doc.source,
        published=doc.published,
        title=doc.title,
        text=doc.text if doc.text != doc.title else "",
        about=list(doc.tickers),
    )


def document_block(documents: Sequence[Document]) -> str:
    return "\n\n".join(
        f"[{d.doc_id}] {d.kind} · {d.source} · {d.published or 'undated'}"
        f"{' · about ' + ', '.join(d.about) if d.about else ''}\n{d.title}\n{d.text}".rstrip()
        for d in documents
    )


def news_block(news: NewsOutput | None) -> str:
    if news is None:
        return (
            "The news analyst's reading of this sector did not finish: its news is unread, which is not the "
            "same as no news. Code holds its symbols at YELLOW, unassessed; say that nothing is known of "
            "the sector's news."
        )
    titles = {d.doc_id: d.title for d in news.documents}
    lines = [f"Evidence quality (capped by code): {news.evidence_quality}.", news.summary]
    for driver in news.drivers:
        sources = "; ".join(f"[{ref}] {titles.get(ref, '')[:100]}" for ref in driver.citations)
        affects = ", ".join(driver.affected_symbols) or "the sector"
        head = f"- {driver.driver} ({driver.type}; affects {affects})"
        lines.append(f"{head}: {driver.evidence} Sources: {sources}")
    for event in news.events:
        lines.append(f"- {event.event} (sources: {', '.join(event.citations)})")
    return "\n".join(lines)


def synthesis_block(sector: str, synthesis: SynthesisOutput | None) -> str:
    if synthesis is None:
        return f"{sector}: the senior analyst's synthesis did not finish."
    return f"{sector} ({synthesis.drop_type}, confidence {synthesis.confidence}): {synthesis.synthesis}"
