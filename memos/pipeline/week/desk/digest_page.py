"""The digest on its version's page: the frozen digest for every reader (printed too), and, for each reader,
the new versions it links with their vote's state and, for a committee member who may vote, the vote's form
(the same rules as on each version's page: memos.services.review)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from pydantic import ValidationError

from agents.week.outputs import DigestOutput
from memos.models import ArtefactVersion, Vote
from memos.services import review
from memos.services.access import visible_versions


def digest_of(version: ArtefactVersion) -> DigestOutput | None:
    try:
        return DigestOutput.model_validate(version.content)
    except ValidationError:
        return None


def page_context(version: ArtefactVersion) -> dict[str, Any]:
    return {"digest": digest_of(version)}


def linked_ids(digest: DigestOutput) -> list[tuple[str, int]]:
    """(what it is, version id) of every new version the week made, in the digest's order."""
    found: list[tuple[str, int]] = []
    if digest.screen.part is not None and digest.screen.part.version_id is not None:
        found.append(("the week's screen", digest.screen.part.version_id))
    for look in digest.looks:
        if look.part is not None and look.part.version_id is not None:
            found.append((f"the closer look at {look.symbol}", look.part.version_id))
    for deck in digest.decks:
        if deck.part is not None and deck.part.version_id is not None:
            found.append((deck.title, deck.part.version_id))
    return found


@dataclass(frozen=True)
class Row:
    what: str
    version: ArtefactVersion
    ballot: review.Ballot


def votes_context(
    reader: User, version: ArtefactVersion, previous: ArtefactVersion | None
) -> dict[str, Any] | None:
    digest = digest_of(version)
    if digest is None:
        return None
    links = linked_ids(digest)
    seen = {
        v.pk: v
        for v in visible_versions(reader)
        .filter(pk__in=[pk for _, pk in links])
        .select_related("run", "brief")
    }
    rows = [Row(what, seen[pk], review.ballot(reader, seen[pk])) for what, pk in links if pk in seen]
    return {
        "rows": rows,
        "hidden": len(links) - len(rows),
        "back_to": version.pk,
        "choices": [c for c in Vote.Choice.choices if c[0] != Vote.Choice.RECUSED],
    }
