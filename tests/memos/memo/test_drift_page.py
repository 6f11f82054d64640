"""A memo whose recommendation flipped against the brief's memo before it says so at the top of its
version page, both theses quoted; the first memo of a brief, and a memo that says the same again, show
nothing."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.test import Client

from memos.models import ArtefactVersion, Run
from memos.pipeline.workflows import Artefact
from memos.services.versions import freeze
from tests.memos.pipeline_support import analyst, finished_run, load_desk_data

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_flipped_recommendation_is_flagged_with_both_sides_quoted() -> None:
    load_desk_data("AAPL")
    owner = analyst()
    run = finished_run(owner)
    first = ArtefactVersion.objects.get(run=run)
    client = Client()
    client.force_login(owner)
    assert 'id="drift"' not in client.get(f"/versions/{first.pk}/").content.decode()  # nothing before it

    stated = first.content["firewall"]["final"]
    flipped_to = "BUY" if stated == "SELL" else "SELL"
    verb = "flipped" if stated in ("BUY", "SELL") else "changed"  # HOLD to SELL is a change, not a flip
    content = {**first.content, "firewall": {**first.content["firewall"], "final": flipped_to}}
    sections = {**first.sections, "Headline thesis": "Demand is rolling over."}
    again = Run.objects.create(brief=first.brief, created_by=owner, status=Run.Status.DONE, workflow="memo")
    with transaction.atomic():
        second = freeze(
            run=again,
            artefact=Artefact(
                kind="memo",
                title=first.title,
                content=content,
                sections=sections,
                evaluated=True,
                cited=tuple(str(source["id"]) for source in first.sources),
            ),
        )
    page = client.get(f"/versions/{second.pk}/").content.decode()
    panel = page[page.index('id="drift"') : page.index("</section>", page.index('id="drift"'))]
    assert f"The recommendation {verb} from {stated} (v1) to {flipped_to} (v2)." in panel
    assert "Demand is rolling over." in panel
    assert first.sections["Headline thesis"][:40] in panel.replace("&#x27;", "'")
    assert page.index('id="drift"') < page.index('id="review"')  # flagged before anything else is read
