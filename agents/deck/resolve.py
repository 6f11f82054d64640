"""A drafted deck made renderable by code: fact ids become figures, model-typed numbers never reach a slide.

The drafter and the reviser write words and fact ids. Here, code:
- turns every fact id into the ``Figure`` the data stage built from the fact store, and drops (and lists)
  an id the run was not given, so the source-of-truth gate can name it;
- writes a number the model typed in a bullet as the figure that backs it, where exactly one of the run's
  figures does (agents.text.resolution: the value at the typed rounding, the unit, the period and the
  metric's name in the sentence), printed as code displays it and cited like the bullet's other figures;
- withholds a sentence with a figure's place left empty or one word said over and over
  (agents.text.blanks), and every other sentence in which the model typed a figure of its own
  (agents.text.figures decides what a figure is: a year, a date, a duration or a number the analyst's brief
  contains is not one), and lists it, so a board never reads a number nobody can trace;
- withholds a bullet's words where its own figures do not bear them out (agents.text.figure_claims, the
  reading every workflow's claims share): a trend word that does not hold at each step of the series, or a
  metric named that none of its figures is; the figures stay;
- leaves to the figure a bullet's last words that only name it ("Cash; Cash FY2025: ..."), and drops a
  section slide's title or takeaway that repeats the deck's title or thesis;
- stands in with code's words (agents.deck.stand_in) where a slide's whole title or takeaway was withheld,
  or a summary reason's words were ("Revenue rose in FY2025", from its figure and the year before);
- opens each line with a capital letter, unless its first word is a name ("iPhone");
- keeps a chart to one metric (the first point's) and a table to distinct facts, and numbers the slides.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from agents.data.types import period_label
from agents.deck.assign import Assignment, metric_of
from agents.deck.code_slides import MAX_MEMO_LINES, MemoLines, risks_slide, sources_slide, title_slide
from agents.deck.schemas import BulletDraft, ChartDraft, DeckDraft, SlideDraft, TableDraft
from agents.deck.spec import Bullet, Chart, Deck, Figure, Slide, Table, Theme
from agents.deck.stand_in import moves, stand_in_takeaway, stand_in_title
from agents.deck.watch_slide import watch_slide
from agents.text.blanks import blank_problem
from agents.text.figure_claims import CitedFigure, cited_figure, read_claim
from agents.text.figures import REF, segments
from agents.text.repair import Writer
from agents.text.resolution import Printed, resolve_typed
from agents.text.scripts import slips
from agents.text.sentences import is_finished, sentences

MIN_CHART_POINTS = 2
MIN_TABLE_ROWS = 2
# The prompt's figure list ("- AAPL:capex:FY2025: Capital expenditure FY2025 = USD 10,959 M") copied into
# prose: a fact id, or "= USD".
_COPIED_LIST = re.compile(r"\b[A-Z][A-Z.]{0,5}:[a-z_]+:|=\s*(?:USD|[$€£])")


@dataclass
class Resolution:
    """What code changed on the way from draft to deck, for the gate and the run page."""

    unresolved: list[str] = field(default_factory=list)  # fact ids the run was not given
    withheld: list[str] = field(default_factory=list)  # "slide 3: takeaway" for each withheld sentence
    resolved: list[str] = field(default_factory=list)  # "slide 3: bullet 1" for each sentence code resolved
    dropped: list[str] = field(default_factory=list)  # charts or tables that lost their figures
    stood_in: list[str] = field(default_factory=list)  # "slide 3: takeaway" where code's words stand in
    # "slide 3: bullet 1: it says revenue went up, but ...": words their own figures contradict, withheld
    contradicted: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class DeckFrame:
    """What code writes around the model's words: the company, the subtitle, the firm's theme, which figures
    each section's slide may show (and where code draws the bridge), and the memo's lines for the risks."""

    company: str
    ticker: str
    subtitle: str
    theme: Theme = field(default_factory=Theme)
    plan: Assignment | None = None
    memo: MemoLines | None = None


SUMMARY_SECTION = "Executive summary"
FIRST_DRAFTED = 2  # the deck's number of the first drafted slide: slide 1 is code's title slide


def resolve(
    draft: DeckDraft,
    figures: Mapping[str, Figure],
    frame: DeckFrame,
    *,
    keep: frozenset[str] = frozenset(),
) -> tuple[Deck, Resolution]:
    """The draft as a deck: code's title slide, the drafted slides (the executive summary first), then
    code's risks and sources slides."""
    notes = Resolution()
    resolver = _Resolver(figures, keep, notes)
    title = resolver.words(draft.title, "deck title")
    thesis = resolver.words(draft.thesis, "thesis")
    resolver.opening = (_plain(title), _plain(thesis))
    drafted = [resolver.slide(number, slide, frame) for number, slide in enumerate(draft.slides, start=2)]
    after = len(drafted) + FIRST_DRAFTED
    risk_ids = frame.plan.risks if frame.plan is not None else ()
    risks = risks_slide(
        after, figures, risk_ids, frame.memo, lambda text: resolver.words(text, "memo"), own=frame.ticker
    )
    memo = frame.memo
    watch = (
        watch_slide(
            after + 1,
            memo.version,
            thesis=memo.thesis,
            catalysts=memo.catalysts,
            falsifiers=memo.falsifiers[MAX_MEMO_LINES:],  # the risks slide quotes the first
            cited=resolver.cited,
        )
        if memo is not None
        else None
    )
    closing = (risks,) if watch is None else (risks, watch)
    shown = [f for slide in (*drafted, *closing) for f in slide.figures()]
    opening = title_slide(title or f"{frame.company} ({frame.ticker})", thesis or frame.subtitle)
    slides = (opening, *drafted, *closing, sources_slide(after + len(closing), shown))
    deck = Deck(
        company=frame.company,
        ticker=frame.ticker,
        title=title,
        subtitle=frame.subtitle,
        thesis=thesis,
        slides=slides,
        theme=frame.theme,
    )
    return deck, notes


class _Resolver:
    def __init__(self, figures: Mapping[str, Figure], keep: frozenset[str], notes: Resolution) -> None:
        self.figures = figures
        self.keep = keep
        self.notes = notes
        self.ids = frozenset(figures)
        self.opening = ("", "")  # the deck's title and thesis, as _plain: a section slide may not repeat them
        self.printed = tuple(
            Printed(figure.fact_id, figure.decimal, figure.unit, figure.period, _metric(figure.fact_id))
            for figure in figures.values()
        )

    def slide(self, number: int, slide: SlideDraft, frame: DeckFrame) -> Slide:
        where = f"slide {number}"
        bullets = tuple(
            bullet
            for index, draft in enumerate(slide.bullets, start=1)
            if (bullet := self.bullet(draft, f"{where}: bullet {index}")) is not None
        )
        chart = self.chart(slide.chart, where) if slide.chart is not None else None
        planned = frame.plan.sections.get(slide.section) if frame.plan is not None else None
        if planned is not None and planned.bridge and all(i in self.figures for i in planned.bridge):
            if chart is not None:
                self.notes.dropped.append(f"{where}: the drafted chart (code draws this slide's bridge)")
            chart = self.bridge(planned.bridge)
        table = self.table(slide.table, where) if slide.table is not None else None
        if planned is not None and len(planned.mix) >= MIN_CHART_POINTS:
            chart, table = self._with_mix(planned.mix, chart, table, where)
        if planned is not None and planned.earnings and all(i in self.figures for i in planned.earnings):
            if chart is not None:
                self.notes.dropped.append(f"{where}: the drafted chart (code draws what moved net income)")
            chart = self.earnings(planned.earnings)
        if table is not None and chart is not None:
            table = self._beside(table, chart, where)
        summary = slide.section == SUMMARY_SECTION
        if summary:
            bullets = tuple(
                self._reason(bullet, f"{where}: bullet {index}") for index, bullet in enumerate(bullets, 1)
            )
        title = self.words(slide.title, f"{where}: title")
        takeaway = self.words(slide.takeaway, f"{where}: takeaway")
        if not summary:  # the summary states the thesis by design; a section slide repeating it says nothing
            title = self._not_repeated(title, self.opening[0], f"{where}: title (the deck's title again)")
            takeaway = self._not_repeated(takeaway, self.opening[1], f"{where}: takeaway (the thesis again)")
        resolved = Slide(
            number=number,
            section=slide.section,
            kind="summary" if summary else "section",
            title=title,
            takeaway=takeaway,
            bullets=bullets,
            table=table,
            chart=chart,
        )
        return self._stood_in(resolved, frame.memo if summary else None, where)

    def _stood_in(self, slide: Slide, memo: MemoLines | None, where: str) -> Slide:
        """The slide with code's words where its title or takeaway was withheld whole (agents.deck.stand_in):
        an empty box would break a slide whose other words stand."""
        title = slide.title
        if not title:  # the summary's is its recommendation: the memo's stands in, where there is one
            if memo is not None and memo.recommendation:
                title = f"The {memo.version} recommends {memo.recommendation}"
            else:
                title = stand_in_title(slide)
            self.notes.stood_in.append(f"{where}: title")
        takeaway = slide.takeaway
        if not takeaway:
            takeaway = stand_in_takeaway(slide)
            self.notes.stood_in.append(f"{where}: takeaway")
        if (title, takeaway) == (slide.title, slide.takeaway):
            return slide
        return slide.model_copy(update={"title": title, "takeaway": takeaway})

    def _reason(self, bullet: Bullet, where: str) -> Bullet:
        """A summary reason whose words code withheld, with code's words where its one figure has a year
        before it among the run's figures: "Cash rose in FY2025", both years shown. A reason of a figure
        alone tells a board nothing."""
        if bullet.text or len(bullet.figures) != 1:
            return bullet
        latest = bullet.figures[0]
        earlier = self.figures.get(_year_before(latest))
        found = moves([earlier, latest]) if earlier is not None else []
        if earlier is None or not found:
            return bullet
        self.notes.stood_in.append(where)
        return Bullet(text=found[0], figures=(earlier, latest))

    def _not_a_label(self, text: str, figures: tuple[Figure, ...], where: str) -> str:
        """A bullet's words less a last sentence that only names (or begins to name) one of its figures,
        which code prints after them anyway: "Cash; Cash FY2025: ...", "... new projects. Free cash; Free
        cash flow FY2023: ...", where the drafter began the figure's label and stopped."""
        parts = sentences(text)
        if not parts or is_finished(parts[-1]):
            return text
        last = _plain(parts[-1])
        if last and any(_plain(figure.label).startswith(last) for figure in figures):
            self.notes.dropped.append(f"{where}: words that only name its figure")
            return "".join(parts[:-1]).strip()
        return text

    def _not_repeated(self, text: str, opening: str, where: str) -> str:
        """``text``, or "" where it repeats the title slide's words (a reviser copied the deck's title onto a
        section slide): code's words stand in for it."""
        if text and _plain(text) == opening:
            self.notes.dropped.append(where)
            return ""
        return text

    def _beside(self, table: Table, chart: Chart, where: str) -> Table | None:
        """The table without the figures the chart beside it already shows (the embedded model put the same
        three figures in a table and a chart on one slide); none when fewer than two rows are left."""
        shown = {point.fact_id for point in chart.points}
        rows = tuple(row for row in table.rows if row.fact_id not in shown)
        if len(rows) == len(table.rows):
            return table
        if len(rows) < MIN_TABLE_ROWS:
            self.notes.dropped.append(f"{where}: table (the chart beside it shows its figures)")
            return None
        self.notes.dropped.append(f"{where}: table rows the chart beside it shows")
        return table.model_copy(update={"rows": rows})

    def _with_mix(
        self, ids: tuple[str, ...], chart: Chart | None, table: Table | None, where: str
    ) -> tuple[Chart | None, Table | None]:
        """Code's breakdown of revenue by line on the slide: as its chart where the drafter drew none (or
        drew the breakdown itself), else as its table (the drafted one gives way)."""
        points = tuple(self.figures[i] for i in ids if i in self.figures)
        if len(points) < MIN_CHART_POINTS:
            return chart, table
        title = f"Revenue by line, {points[0].period}"
        if chart is None or set(chart.points) <= set(points):
            mix = Chart(title=title, kind="bar", unit=points[0].unit, points=points, parts=True)
            return mix, table
        if table is not None:
            self.notes.dropped.append(f"{where}: the drafted table (code shows revenue by line)")
        return chart, Table(title=title, rows=points)

    def earnings(self, ids: tuple[str, ...]) -> Chart:
        """Last year's net income, each line's effect on it, and this year's."""
        points = tuple(self.figures[fact_id] for fact_id in ids)
        steps = tuple(0 < index < len(points) - 1 for index in range(len(points)))
        return Chart(
            title=f"What moved net income from {points[0].period} to {points[-1].period}",
            kind="bridge",
            unit=points[0].unit,
            points=points,
            steps=steps,
            adds=True,
        )

    def bridge(self, ids: tuple[str, ...]) -> Chart:
        """The latest year's bridge from revenue to net income: totals, and the steps taken away."""
        points = tuple(self.figures[fact_id] for fact_id in ids)
        steps = tuple(index % 2 == 1 for index in range(len(points)))
        period = points[0].period
        return Chart(
            title=f"From revenue to net income, {period}",
            kind="bridge",
            unit=points[0].unit,
            points=points,
            steps=steps,
        )

    def words(self, text: str, where: str) -> str:
        """The text without the sentences that state a figure no fact backs."""
        return self.placed_words(text, where, inline=None)

    def placed_words(self, text: str, where: str, inline: list[Figure] | None) -> str:
        """The text without the sentences that state a figure no fact backs; where ``inline`` collects the
        figures code writes into the words (a bullet's), a typed number a figure backs is written as it."""
        kept = []
        for sentence in sentences(text):
            # A figure's place left empty, a word said over and over, or the figure list copied
            # ("AAPL:capex:FY: Capital expenditure FY = USD"): no reader can use it.
            if blank_problem(sentence) or _COPIED_LIST.search(sentence):
                self.notes.withheld.append(where)
                continue
            if not self._typed(sentence):
                kept.append(sentence)
                continue
            placed = self._placed(sentence, inline) if inline is not None else None
            if placed is None:
                self.notes.withheld.append(where)
            else:
                self.notes.resolved.append(where)
                kept.append(placed)
        return _opened("".join(kept).strip())

    def cited(self, text: str, where: str) -> tuple[str, list[Figure]]:
        """A memo's frozen words as a slide may print them: each ``[[fact id]]`` citation written as that
        figure (the figures returned, to be cited where they stand); a sentence citing a figure the deck
        was not given, typing a number of its own or with a hole in it is withheld."""
        kept: list[str] = []
        shown: list[Figure] = []
        for sentence in sentences(text):
            pieces = segments(sentence, self.ids, self.keep)
            if blank_problem(sentence) or any(piece.kind == "removed" for piece in pieces):
                self.notes.withheld.append(where)
                continue
            for piece in pieces:
                if piece.kind == "fact":
                    figure = self.figures[piece.fact_id]
                    kept.append(figure.display)
                    shown.extend([figure] if figure not in shown else [])
                else:
                    kept.append(piece.text)
        return "".join(kept).strip(), shown

    def _typed(self, sentence: str) -> bool:
        return any(part.kind == "removed" for part in segments(sentence, frozenset(), self.keep))

    def _placed(self, sentence: str, inline: list[Figure]) -> str | None:
        """``sentence`` with every typed number written as the figure that backs it, or None when one is
        backed by no figure."""
        resolved = resolve_typed(sentence, self.printed, keep=self.keep)
        if self._typed(REF.sub("", resolved.text)) or not resolved.replaced:
            return None
        for fact_id in resolved.replaced:
            figure = self.figures[fact_id]
            if figure not in inline:
                inline.append(figure)
        return REF.sub(lambda match: self.figures[match.group(1)].display, resolved.text)

    def resolved(self, fact_ids: list[str], where: str) -> list[Figure]:
        found: list[Figure] = []
        for fact_id in dict.fromkeys(fact_ids):
            figure = self.figures.get(fact_id)
            if figure is None:
                self.notes.unresolved.append(f"{where}: {fact_id}")
            else:
                found.append(figure)
        return found

    def bullet(self, draft: BulletDraft, where: str) -> Bullet | None:
        listed = self.resolved(draft.figures, where)
        inline: list[Figure] = []
        text = self.placed_words(draft.text, where, inline)
        figures = tuple(figure for figure in listed if figure not in inline)  # printed once, in the words
        text = self._not_a_label(text, (*inline, *figures), where)
        problem = read_claim(text, claim_figures((*inline, *figures))).reason if text else ""
        if problem:  # the figures stay, without the words that misread them
            self.notes.contradicted.append(f"{where}: {problem}")
            text, figures, inline = "", (*inline, *figures), []
        if not text and not figures:
            return None
        return Bullet(text=text, figures=figures, inline=tuple(inline))

    def table(self, draft: TableDraft, where: str) -> Table | None:
        rows = tuple(self.resolved(draft.rows, f"{where}: table"))
        if not rows:
            self.notes.dropped.append(f"{where}: table (none of its facts resolved)")
            return None
        return Table(title=self.words(draft.title, f"{where}: table title"), rows=rows)

    def chart(self, draft: ChartDraft, where: str) -> Chart | None:
        points = self.resolved(draft.points, f"{where}: chart")
        unit = points[0].unit if points else ""
        label = points[0].label if points else ""
        # One metric over periods: points of another metric (or unit) would read as more periods of it.
        same_unit = [point for point in points if point.unit == unit and point.label == label]
        if len(same_unit) < len(points):
            self.notes.dropped.append(f"{where}: chart points of another metric than {label}")
        if len(same_unit) < MIN_CHART_POINTS:
            self.notes.dropped.append(f"{where}: chart (fewer than {MIN_CHART_POINTS} figures of one metric)")
            return None
        return Chart(
            title=self.words(draft.title, f"{where}: chart title"),
            kind=draft.kind,
            unit=unit,
            points=tuple(same_unit),
        )


def claim_figures(figures: tuple[Figure, ...]) -> list[CitedFigure]:
    """A bullet's figures as a claim's are read: shown as the slide prints them."""
    found = (
        cited_figure(
            fact_id=figure.fact_id,
            metric=metric_of(figure.fact_id),
            period=figure.period,
            value=figure.value,
            shown=figure.display,
            unit=figure.unit,
        )
        for figure in figures
    )
    return [figure for figure in found if figure is not None]


def _year_before(figure: Figure) -> str:
    """ "AAPL:cash:FY2024" for "AAPL:cash:FY2025", "AAPL:revenue:FY2024Q3" for "AAPL:revenue:FY2025Q3";
    "" for a period of another kind."""
    if figure.fiscal is None:
        return ""
    year, quarter = figure.fiscal
    return f"{figure.fact_id.rsplit(':', 1)[0]}:{period_label(year - 1, f'Q{quarter}' if quarter else 'FY')}"


def _plain(text: str) -> str:
    """Words as compared for repetition and for a label's beginning: case, spacing and every mark but "&"
    aside ("Sales came back." repeats "Sales came back"; "Free cash;" begins "Free cash flow"). Unlike a
    quote's check (agents.text.quotes.fold, which the judge's quotes go through in agents.deck.outline),
    which keeps the marks: a quote must be the deck's words as written, a repetition need only say them
    again."""
    return " ".join(re.sub(r"[^\w\s&]", " ", text).casefold().split())


def _opened(text: str) -> str:
    """The text with its first letter a capital, as a slide's line opens: the embedded drafter often begins
    a bullet in lower case ("the company's revenue ..."). A first word with a capital or a digit of its own
    ("iPhone", "eBay", "x86") is a name, left as written."""
    first = text.split(" ", 1)[0]
    if not first[:1].islower() or any(ch.isupper() or ch.isdigit() for ch in first):
        return text
    return text[0].upper() + text[1:]


def _metric(fact_id: str) -> str:
    return fact_id.split(":")[1] if fact_id.count(":") >= 2 else ""


@dataclass(frozen=True)
class DeckWriter(Writer):
    """A deck's words as its resolution will judge them, for the drafter's re-ask (agents.text.repair): a
    typed number one of the run's figures backs is no fault (code prints that figure in its place when the
    deck is built), so only what resolution would withhold is asked about; nothing is resolved beforehand."""

    figures: Mapping[str, Figure] = field(default_factory=dict)

    def withholds(self, sentence: str) -> bool:
        if self.language is not None and slips(sentence, self.language):
            return True
        if blank_problem(sentence) or _COPIED_LIST.search(sentence):
            return True
        resolver = _Resolver(self.figures, self.keep, Resolution())
        return resolver._typed(sentence) and resolver._placed(sentence, []) is None

    def resolve(self, text: str) -> str:
        return text
