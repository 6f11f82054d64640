"""What the review's tests share: a version frozen the way a finishing run freezes it (its motion opened, its
notices written), and a person's view of its review panel and history, as their page and their socket show
them."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client

from memos.models import ArtefactVersion, Brief, Company, Run
from memos.pipeline.workflows import Artefact
from memos.services.accounts import ensure_groups
from memos.services.versions import freeze
from memos.views.version_socket import render_event
from tests.memos.factories import company


def member(username: str, *roles: str, email: str = "") -> User:
    """A desk user in these roles' groups (none: an outsider)."""
    groups = ensure_groups()
    user = User.objects.create_user(
        username, email or f"{username}@desk.example", password=f"{username}-secret-pass"
    )
    for role in roles:
        user.groups.add(groups[role])
    return user


def frozen(
    owner: User,
    *,
    brief: Brief | None = None,
    started_by: User | None = None,
    kind: str = "memo",
    scores: dict[str, Any] | None = None,
    evaluated: bool = True,
    thesis: str = "Services keep growing.",
) -> ArtefactVersion:
    """The next version of ``brief`` (a new AAPL brief of ``owner``'s by default), frozen by a finished run
    that ``started_by`` (the owner by default) started, as the run's finishing transaction freezes it."""
    if brief is None:
        apple = Company.objects.filter(ticker="AAPL").first() or company()
        brief = Brief.objects.create(company=apple, question="Is the services mix durable?", owner=owner)
    run = Run.objects.create(
        brief=brief, created_by=started_by or owner, workflow=kind, status=Run.Status.DONE
    )
    with transaction.atomic():
        return freeze(
            run=run,
            artefact=Artefact(
                kind=kind,
                title=f"AAPL {kind}: Is the services mix durable?",
                content={"headline_thesis": thesis},
                sections={"Headline thesis": thesis},
                evaluated=evaluated,
                score=6.0 if evaluated else None,
                score_label="calibrated J+" if evaluated else "",
                scores=scores or {},
            ),
        )


def page_of(user: User, version: ArtefactVersion) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(f"/versions/{version.pk}/")
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def tally_of(html: str) -> str:
    """The review panel's tally block (the turnout while the vote is open, the choices once it closed)."""
    found = re.search(r'<div id="tally".*?</div>', html, re.DOTALL)
    assert found, "no tally block"
    return found.group(0)


def history_of(html: str) -> str:
    found = re.search(r'<ol class="history" id="history-list">.*?</ol>', html, re.DOTALL)
    assert found, "no history"
    return found.group(0)


def seen_by(user: User, version: ArtefactVersion) -> dict[str, str]:
    """What ``user`` is shown of the review, on their page and through their socket."""
    page = page_of(user, version)
    event = render_event(user, version.pk)
    assert event is not None
    return {
        "page tally": tally_of(page),
        "page history": history_of(page),
        "socket tally": tally_of(event.review),
        "socket history": event.history,
        "page review": page.split('id="review"', 1)[1].split("</section>", 1)[0],
    }
