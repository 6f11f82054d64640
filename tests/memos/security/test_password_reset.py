"""Password reset (Django's flow at /accounts/password_reset/): the e-mailed link goes to SITE_URL whatever
Host the request named, and requests are throttled per address and per e-mail address, with a message that
says so and nothing that tells whether an account exists."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db

RESET = "/accounts/password_reset/"
SITE = {"SITE_URL": "https://desk.example.com", "ALLOWED_HOSTS": ["desk.example.com", "attacker.example"]}


def ask(email: str, *, address: str = "203.0.113.7", host: str = "desk.example.com", via: str = "") -> Any:
    """One request from ``address`` (or, ``via`` a proxy at that address, from the client it names)."""
    return Client().post(
        RESET, {"email": email}, REMOTE_ADDR=address, HTTP_HOST=host, HTTP_X_FORWARDED_FOR=via
    )


def refusal(response: Any) -> list[str]:
    """The form's own errors on a refused request (a sent one renders only the e-mail's templates)."""
    errors: list[str] = response.context["form"].non_field_errors() if response.status_code == 429 else []
    return errors


@override_settings(**SITE)
def test_the_link_goes_to_the_site_url_whatever_host_the_request_named(alice: User) -> None:
    response = ask("alice@example.org", host="attacker.example")

    assert response.status_code == 302 and response["Location"] == "/accounts/password_reset/done/"
    [sent] = mail.outbox
    assert sent.to == ["alice@example.org"]
    assert "attacker.example" not in f"{sent.subject}\n{sent.body}"
    [link] = [line for line in sent.body.splitlines() if "/accounts/reset/" in line]
    assert link.startswith("https://desk.example.com/accounts/reset/")
    # The link works: it opens the form that sets a new password.
    opened = Client().get(link.removeprefix("https://desk.example.com"), HTTP_HOST="desk.example.com")
    assert opened.status_code == 302 and opened["Location"].endswith("/set-password/")


@override_settings(**SITE)
def test_one_address_asking_for_many_accounts_is_stopped_and_told_so(alice: User, bob: User) -> None:
    limit = settings.PASSWORD_RESET_PER_ADDRESS
    for index in range(limit):
        assert ask(f"someone{index}@example.org").status_code == 302
    refused = ask("alice@example.org")

    assert refused.status_code == 429
    minutes = settings.PASSWORD_RESET_WINDOW_MINUTES
    assert refusal(refused) == [
        f"Too many password reset requests from your address. Try again in {minutes} minutes."
    ]
    assert mail.outbox == []  # alice's reset was the refused one
    assert ask("bob@example.org", address="198.51.100.9").status_code == 302
    assert [sent.to for sent in mail.outbox] == [["bob@example.org"]]


@override_settings(**SITE)
def test_one_account_asked_for_from_many_addresses_is_stopped_and_told_so(alice: User) -> None:
    ceiling = settings.PASSWORD_RESET_PER_ACCOUNT_ALL
    for index in range(ceiling):
        assert ask("alice@example.org", address=f"198.51.100.{index}").status_code == 302
    refused = ask("Alice@Example.org ", address="192.0.2.1")

    assert refused.status_code == 429
    minutes = settings.PASSWORD_RESET_WINDOW_MINUTES
    assert refusal(refused) == [
        f"Too many password reset requests for this e-mail address. Try again in {minutes} minutes."
    ]
    assert len(mail.outbox) == ceiling


@override_settings(**SITE)
def test_a_stranger_asking_for_someones_reset_again_and_again_does_not_lock_its_owner_out(
    alice: User,
) -> None:
    """Issue 31 L8: the e-mail address's limit was one for every address, so a stranger who used it up
    refused its owner's own request. Now the stranger uses up only the stranger's share."""
    stranger, owner = "203.0.113.66", "198.51.100.7"
    for _ in range(settings.PASSWORD_RESET_PER_ACCOUNT):
        assert ask("alice@example.org", address=stranger).status_code == 302
    for _ in range(20):  # refused, and a refused flood adds nothing toward the address's own ceiling
        assert ask("alice@example.org", address=stranger).status_code == 429
    assert ask("alice@example.org", address=owner).status_code == 302
    assert len(mail.outbox) == settings.PASSWORD_RESET_PER_ACCOUNT + 1
    assert mail.outbox[-1].to == ["alice@example.org"]


@override_settings(**SITE)
def test_nothing_in_the_answers_tells_whether_the_account_exists(alice: User) -> None:
    def answers(email: str, first_address: int) -> list[tuple[int, str, list[str]]]:
        seen = []
        for index in range(settings.PASSWORD_RESET_PER_ACCOUNT + 2):
            response = ask(email, address=f"198.51.100.{first_address + index}")
            seen.append((response.status_code, response.get("Location", ""), refusal(response)))
        return seen

    assert answers("alice@example.org", 0) == answers("nobody@example.org", 100)
    assert all(sent.to == ["alice@example.org"] for sent in mail.outbox)


@override_settings(**SITE, CLIENT_IP_HEADER="HTTP_X_FORWARDED_FOR", TRUSTED_PROXY_COUNT=1)
def test_behind_the_proxy_the_count_is_the_clients_not_the_proxys(alice: User) -> None:
    for index in range(settings.PASSWORD_RESET_PER_ADDRESS):
        ask(f"someone{index}@example.org", address="127.0.0.1", via="203.0.113.7")
    assert ask("x@example.org", address="127.0.0.1", via="203.0.113.7").status_code == 429
    assert ask("x@example.org", address="127.0.0.1", via="198.51.100.9").status_code == 302
