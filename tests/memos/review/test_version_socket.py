"""The version page's WebSocket: access is checked at connect, and every change to the review reaches each
page as its own user may see it (while the vote is open, everyone gets the sealed tally: the turnout, and a
member their own vote in their form)."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet
from django.test import Client

from agency.asgi import application
from memos.live.events import version_group
from memos.models import ArtefactVersion, Motion, ReviewPolicy, Run
from memos.services import review
from memos.services.accounts import Roles, ensure_groups
from memos.services.versions import content_hash, record
from memos.views.version_socket import CLOSED_NOT_VISIBLE, CLOSED_SIGNED_OUT, VersionConsumer, review_context
from memos.views.versions import page_context
from tests.memos.factories import run_for
from tests.memos.socket_support import refused

pytestmark = pytest.mark.django_db(transaction=True)

SEALED = "Sealed until the vote closes."
SITE = b"http://127.0.0.1:8000"


def person(username: str, role: str | None) -> User:
    user = User.objects.create_user(username, f"{username}@desk.example", password=f"{username}-secret-pass")
    if role:
        user.groups.add(ensure_groups()[role])
    return user


def frozen_version(owner: User) -> ArtefactVersion:
    """v1 of a finished run's memo, with an evaluator's verdict and an open motion, as freezing leaves it."""
    run = run_for(owner, status=Run.Status.DONE)
    sections = {"Headline thesis": "Services carry the margin.", "Risk budget": "A starter position."}
    text = "\n\n".join(f"## {name}\n{body}" for name, body in sections.items())
    version = ArtefactVersion.objects.create(
        brief=run.brief,
        run=run,
        number=1,
        kind="memo",
        title="AAPL memo",
        content={"memo": sections},
        rendered_text=text,
        content_hash=content_hash("memo", {"memo": sections}, text),
        evaluated=True,
        score=0.8,
        score_label="calibrated J+",
        sections=sections,
        changelog="first version of this brief (memo); calibrated J+ 0.8",
    )
    Motion.objects.create(version=version, min_votes=2, approval_share=0.5)
    record(version, "motion_opened", detail={"min_votes": 2, "approval_share": 0.5})
    return version


@pytest.fixture
def cast(alice: User, bob: User, charlie: User) -> dict[str, Any]:
    """alice the analyst started the brief, bob and carol sit on the committee, rev reviews, boss is an
    executive, charlie is an outsider."""
    ReviewPolicy.objects.update_or_create(pk=1, defaults={"min_votes": 2, "approval_share": 0.5})
    return {
        "alice": alice,
        "bob": bob,
        "carol": person("carol", Roles.COMMITTEE),
        "rev": person("rev", Roles.REVIEWER),
        "boss": person("boss", Roles.EXECUTIVE),
        "charlie": charlie,
        "version": frozen_version(alice),
    }


def communicator(version: ArtefactVersion, user: Any) -> WebsocketCommunicator:
    socket = WebsocketCommunicator(VersionConsumer.as_asgi(), f"/ws/versions/{version.pk}/")
    socket.scope["user"] = user
    socket.scope["url_route"] = {"kwargs": {"version_id": version.pk}}
    return socket


async def opened(version: ArtefactVersion, user: User) -> tuple[WebsocketCommunicator, dict[str, Any]]:
    """A socket let in, and the page as it stands, which the consumer sends first."""
    socket = communicator(version, user)
    connected, code = await socket.connect(timeout=5)
    assert connected, code
    return socket, await socket.receive_json_from(timeout=5)


async def vote(member: User, version: ArtefactVersion, choice: str, rationale: str = "") -> None:
    await sync_to_async(review.cast_vote)(version=version, member=member, choice=choice, rationale=rationale)


async def test_a_member_who_has_not_voted_gets_the_turnout_when_another_votes(cast: dict[str, Any]) -> None:
    version = cast["version"]
    socket, first = await opened(version, cast["bob"])
    assert first["kind"] == "review" and first["version_id"] == str(version.pk)
    assert SEALED in first["review"] and 'id="vote-form"' in first["review"]

    await vote(cast["carol"], version, "reject", "the thesis leans on one quarter")

    changed = await socket.receive_json_from(timeout=5)
    assert SEALED in changed["review"] and "1 of 2 members have voted; 0 recused" in changed["review"]
    assert "reject" not in changed["history"] and "one quarter" not in changed["review"]
    assert "carol</strong>: voted" in changed["history"]  # that someone voted shows; how does not
    await socket.disconnect()


async def test_after_voting_a_member_sees_their_own_vote_and_still_only_the_turnout(
    cast: dict[str, Any],
) -> None:
    version = cast["version"]
    socket, _ = await opened(version, cast["bob"])

    await vote(cast["bob"], version, "approve")
    mine = await socket.receive_json_from(timeout=5)
    assert SEALED in mine["review"] and "Change your vote (now: approve)" in mine["review"]
    assert "<strong>1</strong> approve" not in mine["review"]

    await vote(cast["carol"], version, "recused", "I hold the stock")
    theirs = await socket.receive_json_from(timeout=5)
    assert "1 of 2 members have voted; 1 recused" in theirs["review"]
    assert "I hold the stock" not in theirs["review"] and "(recused)" not in theirs["history"]
    await socket.disconnect()


async def test_each_page_gets_its_own_view_of_one_change(cast: dict[str, Any]) -> None:
    """One vote, three pages: the member who voted sees their own vote, the one who has not the turnout, the
    reviewer the turnout and the approve form; nobody sees a choice, and nobody gets another's page."""
    version = cast["version"]
    await vote(cast["bob"], version, "approve")
    voted, _ = await opened(version, cast["bob"])
    waiting, _ = await opened(version, cast["carol"])
    reviewer, _ = await opened(version, cast["rev"])

    await vote(cast["bob"], version, "abstain", "I need the segment data first")

    seen = {
        name: await socket.receive_json_from(timeout=5)
        for name, socket in (("bob", voted), ("carol", waiting), ("rev", reviewer))
    }
    assert "Change your vote (now: abstain)" in seen["bob"]["review"]
    assert 'id="vote-form"' in seen["bob"]["review"]
    assert SEALED in seen["carol"]["review"] and "segment data" not in seen["carol"]["review"]
    assert SEALED in seen["rev"]["review"] and 'id="approve-form"' in seen["rev"]["review"]
    assert 'id="vote-form"' not in seen["rev"]["review"]
    for page in seen.values():
        assert "<strong>1</strong> abstain" not in page["review"] and "(abstain)" not in page["history"]
    for socket in (voted, waiting, reviewer):
        await socket.disconnect()


async def test_an_approval_and_a_publication_change_the_status_and_the_forms_live(
    cast: dict[str, Any],
) -> None:
    version = cast["version"]
    await vote(cast["bob"], version, "approve")
    await vote(cast["carol"], version, "approve")
    reviewer, first = await opened(version, cast["rev"])
    assert "2 of 2 members have voted" in first["review"] and "quorum met" in first["review"]

    await sync_to_async(review.approve)(version=version, reviewer=cast["rev"])
    approved = await reviewer.receive_json_from(timeout=5)
    assert approved["status"] == "approved" and ">Approved<" in approved["badge"]
    assert 'id="publish-form"' in approved["review"] and 'id="approve-form"' not in approved["review"]
    # The vote closed with the approval: its choices show now.
    assert (
        "quorum and threshold met" in approved["review"] and "carol</strong>: approve" in approved["review"]
    )

    await sync_to_async(review.publish)(version=version, reviewer=cast["rev"])
    published = await reviewer.receive_json_from(timeout=5)
    assert published["status"] == "published" and 'id="publish-form"' not in published["review"]
    await reviewer.disconnect()


# Who may open the socket of an unpublished version: the same people as its page (services.access).
SOCKET_ACCESS = {
    "alice (its analyst)": True,
    "bob (committee)": True,
    "rev (reviewer)": True,
    "admin (superuser)": True,
    "dana (another analyst)": False,
    "boss (executive)": False,
    "charlie (in no group)": False,
    "anonymous": False,
}


@pytest.mark.parametrize(("who", "let_in"), SOCKET_ACCESS.items())
async def test_the_socket_lets_in_exactly_who_may_read_the_unpublished_version(
    cast: dict[str, Any], admin_user: User, who: str, let_in: bool
) -> None:
    name = who.split(" ", maxsplit=1)[0]
    if name == "anonymous":
        user: Any = AnonymousUser()
    elif name == "admin":
        user = admin_user
    elif name == "dana":
        user = await sync_to_async(person)("dana", Roles.ANALYST)
    else:
        user = cast[name]
    socket = communicator(cast["version"], user)
    if let_in:
        connected, code = await socket.connect(timeout=5)
        assert connected, code
        assert (await socket.receive_json_from(timeout=5))["version_id"] == str(cast["version"].pk)
        await socket.disconnect()
    else:
        assert await refused(socket) == (False, CLOSED_NOT_VISIBLE)


async def test_an_executive_cannot_connect_to_an_unpublished_version_but_can_once_published(
    cast: dict[str, Any],
) -> None:
    version = cast["version"]
    assert await refused(communicator(version, cast["boss"])) == (False, CLOSED_NOT_VISIBLE)

    for member in ("bob", "carol"):
        await vote(cast[member], version, "approve")
    await sync_to_async(review.approve)(version=version, reviewer=cast["rev"])
    await sync_to_async(review.publish)(version=version, reviewer=cast["rev"])

    socket, page = await opened(version, cast["boss"])
    assert page["status"] == "published" and "<form" not in page["review"]
    await socket.disconnect()


async def test_a_socket_whose_user_lost_the_version_is_closed_at_the_next_change(
    cast: dict[str, Any],
) -> None:
    version = cast["version"]
    socket, _ = await opened(version, cast["bob"])
    await sync_to_async(cast["bob"].groups.clear)()

    await vote(cast["carol"], version, "approve")

    output = await socket.receive_output(timeout=5)
    assert (output["type"], output["code"]) == ("websocket.close", CLOSED_NOT_VISIBLE)
    await socket.disconnect()


async def test_the_message_through_redis_names_the_version_and_nothing_else(cast: dict[str, Any]) -> None:
    """Votes and rendered pages never pass through the channel layer: only which version changed."""
    version = cast["version"]
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(version_group(version.pk), channel)
    try:
        await vote(cast["bob"], version, "reject", "too early to size")
        message = await layer.receive(channel)
    finally:
        await layer.group_discard(version_group(version.pk), channel)
    assert message == {"type": "version.changed", "version_id": str(version.pk)}


def test_the_sockets_context_follows_the_same_rules_as_the_page(
    cast: dict[str, Any], admin_user: User
) -> None:
    """The socket renders from review_context, the page from page_context: each person, the same answers."""
    version = cast["version"]
    review.cast_vote(version=version, member=cast["bob"], choice="approve")
    review.cast_vote(version=version, member=cast["carol"], choice="recused", rationale="I hold the stock")

    def comparable(context: dict[str, Any]) -> dict[str, Any]:
        return {key: list(value) if isinstance(value, QuerySet) else value for key, value in context.items()}

    for person_ in (cast["alice"], cast["bob"], cast["carol"], cast["rev"], admin_user):
        fresh = ArtefactVersion.objects.select_related("brief", "run").get(pk=version.pk)
        socket_view = comparable(review_context(person_, fresh))
        page_view = comparable(page_context(person_, fresh))
        assert socket_view == {key: page_view[key] for key in socket_view}, person_.username


# --- through the whole ASGI application, as a browser meets it


def signed_in(username: str) -> Client:
    client = Client()
    page = client.post("/accounts/login/", {"username": username, "password": f"{username}-secret-pass"})
    assert page.status_code == 302, page.content
    return client


def browser_socket(version: ArtefactVersion, client: Client) -> WebsocketCommunicator:
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"origin", SITE),
        (b"cookie", f"{settings.SESSION_COOKIE_NAME}={session}".encode()),
    ]
    return WebsocketCommunicator(application, f"/ws/versions/{version.pk}/", headers=headers)


async def test_the_route_lets_in_a_signed_in_member_and_a_logout_closes_the_socket(
    cast: dict[str, Any],
) -> None:
    version = cast["version"]
    client = await sync_to_async(signed_in)("bob")
    socket = browser_socket(version, client)
    connected, code = await socket.connect(timeout=5)
    assert connected, code
    assert SEALED in (await socket.receive_json_from(timeout=5))["review"]

    await sync_to_async(client.post)("/accounts/logout/")

    output = await socket.receive_output(timeout=5)
    assert (output["type"], output["code"]) == ("websocket.close", CLOSED_SIGNED_OUT)
    await socket.disconnect()
