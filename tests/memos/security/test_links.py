"""A page links out only to the web (issue 31 L14): a URL that came with a figure, a feed item or a filing
is a link only when it is http(s); ``javascript:`` or ``data:`` is shown as text, never as an href."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.deck.outputs import DeckEvidence
from agents.text.untrusted import web_link
from memos.models import AgentStep, Brief, Company, Run
from tests.agents.deck.samples import figure

pytestmark = pytest.mark.django_db

HOSTILE = ("javascript:alert(document.cookie)", " JavaScript:alert(1)", "data:text/html,<script>1</script>")


def test_only_http_and_https_addresses_are_links() -> None:
    assert web_link("https://www.sec.gov/x") == "https://www.sec.gov/x"
    assert web_link(" http://example.org/a ") == "http://example.org/a"
    for url in (*HOSTILE, "/admin/", "ftp://example.org/", ""):
        assert web_link(url) == "", url


def test_a_figures_step_page_shows_a_hostile_source_address_as_no_link(alice: User) -> None:
    brief = Brief.objects.create(
        company=Company.objects.create(ticker="AAPL", name="Apple Inc."), owner=alice
    )
    run = Run.objects.create(brief=brief, created_by=alice, workflow="deck", status=Run.Status.DONE)
    good = figure("revenue", 2024)
    hostile = [
        good.model_copy(update={"fact_id": f"AAPL:x:{n}", "url": url}) for n, url in enumerate(HOSTILE)
    ]
    evidence = DeckEvidence(data_version="v", figures=[good, *hostile])
    step = AgentStep.objects.create(
        run=run,
        stage="data",
        key="figures",
        kind="figures",
        title="The figures",
        status=AgentStep.Status.DONE,
        output=evidence.model_dump(mode="json"),
    )
    client = Client()
    client.force_login(alice)
    page = client.get(f"/runs/{run.pk}/steps/{step.pk}/").content.decode()
    assert f'href="{good.url.replace("&", "&amp;")}"' in page
    for number in range(len(HOSTILE)):
        assert f"AAPL:x:{number}" in page  # shown, as text
    assert "javascript:" not in page.lower() and "data:text/html" not in page
