"""Before a sentence is withheld: code resolves what it can, the writer is asked once to rewrite the rest.

Every workflow's prose goes through the same three steps, section by section (a memo's macro layer, a
deck's slide, a debate's turn):

1. ``resolve``: a number the model typed that a fact it was given backs becomes that fact's reference
   (agents.text.resolution); the sentence is whole again, and no model owns the number.
2. ``faults`` and ``quoted``: the sentences still withheld, numbered, for one re-ask of the writer per
   section, quoting them beside the figures it may use (the schema ``Rewrites`` is narrowed by
   ``rewrites_schema``, so a constrained decoder can only name those sentences and write no figure; the call
   itself is the pipeline's, memos.pipeline.reader_text).
3. ``apply_rewrites``: a rewrite replaces its sentence only when code finds nothing in it to withhold;
   otherwise the sentence stays withheld. Code decides, never the writer.

``tally`` counts what each step repaired, for the run page, the version's note and the measurements.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, cast

from pydantic import BaseModel, ConfigDict, Field, JsonValue, create_model

from agents.text.figures import Ids, segments
from agents.text.patterns import Prose, patterned
from agents.text.reader import paragraph
from agents.text.resolution import Printed, resolve_typed
from agents.text.scripts import Language, slips
from agents.text.sentences import is_finished, sentences

MAX_FAULTS = 8  # sentences one re-ask quotes; a section with more is asked about its first ones
Sentence = Annotated[str, Field(min_length=1, max_length=280)]


class Rewrite(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    number: int = Field(ge=1, le=MAX_FAULTS, description="the number of the quoted sentence")
    text: Sentence


class Rewrites(BaseModel):
    """The writer's answer to a re-ask: a rewrite of each quoted sentence it can write without a typed
    figure (a sentence it leaves out stays withheld)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rewrites: list[Rewrite] = Field(max_length=MAX_FAULTS)


@lru_cache(maxsize=128)
def rewrites_schema(count: int, prose: Prose) -> type[Rewrites]:
    """``Rewrites`` for ``count`` quoted sentences, its text under ``prose``'s pattern."""
    numbered: dict[str, JsonValue] = {"type": "integer", "enum": list(range(1, count + 1))}
    rewrite: Any = patterned(
        Rewrite,
        prose,
        ["text"],
        class_name="NumberedRewrite",
        number=(int, Field(ge=1, le=count, json_schema_extra=numbered)),
    )
    schema = create_model(
        "NumberedRewrites",
        __base__=Rewrites,
        rewrites=(list[rewrite], Field(max_length=count)),
    )
    return cast(type[Rewrites], schema)


@dataclass(frozen=True)
class Writer:
    """What a writer's prose is checked against: the ids a reference may name, the facts a typed number may
    be resolved to, the brief's own numbers and its language."""

    known: Ids
    facts: tuple[Printed, ...] = ()
    keep: frozenset[str] = frozenset()
    language: Language | None = None

    def withholds(self, sentence: str) -> bool:
        if any(part.kind == "removed" for part in segments(sentence, self.known, self.keep)):
            return True
        return self.language is not None and bool(slips(sentence, self.language))

    def resolve(self, text: str) -> str:
        return resolve_typed(text, self.facts, keep=self.keep).text


@dataclass(frozen=True)
class Fault:
    """A sentence code would withhold: which text of the section it is in and where."""

    text: int
    sentence: int
    words: str


class SectionRepair(BaseModel):
    """What became of one section's sentences (the counts a reader's note and the measurements use)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    section: str
    sentences: int  # sentences the model wrote (repeats included)
    typed: int  # withheld as the model wrote them
    resolved: int  # made whole by code's resolution of a typed number
    reasked: int  # made whole by the writer's rewrite
    withheld: int  # still withheld
    repeated: int = 0  # said twice, shown once
    asked: bool = False  # whether a re-ask call was made
    empty: bool = False  # nothing of the section could be shown
    bound: int = 0  # items code wrote from the model's binding instead (a memo's falsifiers)
    written: list[str] = []  # the section as the model wrote it, for a recount

    def recounted(self, final: Sequence[str], writer: Writer, *, bound: int = 0) -> SectionRepair:
        """The same section after code changed it again (``bound`` items written from bindings)."""
        again = tally(
            self.section,
            self.written,
            final,
            writer,
            resolved=self.resolved,
            reasked=self.reasked,
            asked=self.asked,
        )
        return again.model_copy(update={"bound": bound})


def split(text: str) -> list[str]:
    return [sentence for sentence in sentences(text) if sentence.strip()]


def resolve(texts: Sequence[str], writer: Writer) -> tuple[list[str], int]:
    """The texts with the typed numbers code can back written as references, and how many withheld
    sentences that made whole."""
    out: list[str] = []
    repaired = 0
    for text in texts:
        shown: list[str] = []
        for sentence in sentences(text):
            fixed = writer.resolve(sentence) if writer.withholds(sentence) else sentence
            if fixed != sentence and not writer.withholds(fixed):
                repaired += 1
            shown.append(fixed)
        out.append("".join(shown))
    return out, repaired


def faults(texts: Sequence[str], writer: Writer) -> list[Fault]:
    """The sentences code would still withhold, in order (at most ``MAX_FAULTS``)."""
    found: list[Fault] = []
    seen: set[str] = set()
    for index, text in enumerate(texts):
        for position, sentence in enumerate(sentences(text)):
            words = sentence.strip()
            if not words or words in seen:
                continue  # a repeat is collapsed for the reader: nothing to ask about
            seen.add(words)
            if writer.withholds(sentence):
                found.append(Fault(index, position, words))
    return found[:MAX_FAULTS]


def quoted(found: Sequence[Fault]) -> str:
    """The faulty sentences as the re-ask quotes them, numbered from 1."""
    return "\n".join(f"{number}. {fault.words}" for number, fault in enumerate(found, start=1))


def apply_rewrites(
    texts: Sequence[str], found: Sequence[Fault], answer: Rewrites, writer: Writer
) -> tuple[list[str], int]:
    """The texts with each faulty sentence replaced by its rewrite where code finds nothing in the rewrite
    (after resolving it) to withhold, and how many were replaced."""
    pieces = [sentences(text) for text in texts]
    replaced = 0
    for rewrite in answer.rewrites:
        if not 1 <= rewrite.number <= len(found):
            continue
        fault = found[rewrite.number - 1]
        candidate = writer.resolve(rewrite.text.strip())
        if not candidate or writer.withholds(candidate) or len(split(candidate)) > 2:
            continue
        if not is_finished(candidate):
            candidate += "."  # it stands where a sentence stood: the next one must not run into it
        # Wherever the model wrote that sentence: a repeat now repeats the rewrite, and collapses.
        for parts in pieces:
            for position, original in enumerate(parts):
                if original.strip() == fault.words:
                    parts[position] = candidate + (original[len(original.rstrip()) :] or " ")
        replaced += 1
    return ["".join(parts).rstrip() for parts in pieces], replaced


def tally(
    section: str,
    written: Sequence[str],
    final: Sequence[str],
    writer: Writer,
    *,
    resolved: int = 0,
    reasked: int = 0,
    asked: bool = False,
) -> SectionRepair:
    """One section's counts: as the model wrote it (``written``) and as the reader gets it (``final``)."""
    before = [
        paragraph(text, writer.known, writer.keep, writer.language, withholds=writer.withholds)
        for text in written
    ]
    after = [
        paragraph(text, writer.known, writer.keep, writer.language, withholds=writer.withholds)
        for text in final
    ]
    return SectionRepair(
        section=section,
        sentences=sum(item.sentences for item in before),
        typed=sum(item.withheld for item in before),
        resolved=resolved,
        reasked=reasked,
        withheld=sum(item.withheld for item in after),
        repeated=sum(item.repeated for item in after),
        asked=asked,
        empty=all(item.empty for item in after),  # no text at all (no catalyst in the window) included
        written=list(written),
    )


def repaired_line(repairs: Sequence[SectionRepair]) -> str:
    """What code repaired before withholding anything, in one clause for a page ("" when nothing)."""
    resolved = sum(repair.resolved for repair in repairs)
    reasked = sum(repair.reasked for repair in repairs)
    bound = sum(repair.bound for repair in repairs)
    parts = []
    if resolved:
        parts.append(f"code put the cited fact in place of a typed number in {_count(resolved, 'sentence')}")
    if reasked:
        parts.append(f"the writer, asked again, rewrote {_count(reasked, 'sentence')} without one")
    if bound:
        parts.append(f"code wrote {_count(bound, 'falsifier')} from the metric the model bound it to")
    if not parts:
        return ""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
