"""Groups, demo users (created once, on loopback only) and login throttling."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from django.db import connection
from django.test import Client, override_settings
from django.utils import timezone

from memos.models import DemoSeeding, ReviewPolicy
from memos.services.accounts import DEMO_USERS, Roles, ensure_demo_users, ensure_groups

pytestmark = pytest.mark.django_db

# pytest-django adds "testserver" to ALLOWED_HOSTS; demo users exist only on a site served on loopback.
LOOPBACK = ["127.0.0.1", "localhost"]


def log_in(client: Client, username: str, password: str) -> int:
    return client.post("/accounts/login/", {"username": username, "password": password}).status_code


def test_it_creates_the_five_groups_and_a_demo_user_in_each() -> None:
    seed = ensure_demo_users(allowed_hosts=LOOPBACK)
    assert seed.created == [demo.username for demo in DEMO_USERS]
    assert set(Group.objects.values_list("name", flat=True)) == set(Roles.ALL)
    for demo in DEMO_USERS:
        user = User.objects.get(username=demo.username)
        assert user.check_password(demo.password)
        assert list(user.groups.values_list("name", flat=True)) == [demo.group]


def test_only_the_admin_demo_user_is_staff_and_a_superuser() -> None:
    ensure_demo_users(allowed_hosts=LOOPBACK)
    assert list(User.objects.filter(is_staff=True).values_list("username", flat=True)) == ["admin"]
    assert list(User.objects.filter(is_superuser=True).values_list("username", flat=True)) == ["admin"]


def test_no_group_is_handed_a_permission_that_only_the_admin_reads() -> None:
    ensure_demo_users(allowed_hosts=LOOPBACK)
    analyst = User.objects.get(username="analyst")
    assert not analyst.has_perm("memos.add_run")
    assert not analyst.has_perm("memos.view_llmcall")
    assert not Permission.objects.filter(group__isnull=False).exists()


def test_it_takes_back_the_permissions_an_older_version_handed_to_analysts() -> None:
    analysts = ensure_groups()[Roles.ANALYST]
    analysts.permissions.set(Permission.objects.filter(codename__in=["add_run", "view_llmcall"]))
    ensure_groups()
    assert not analysts.permissions.exists()


def test_no_demo_user_is_created_when_the_site_serves_a_real_host_name() -> None:
    seed = ensure_demo_users(allowed_hosts=["127.0.0.1", "desk.example.com"])
    assert not User.objects.exists()
    assert "desk.example.com" in seed.skipped and "loopback" in seed.skipped
    # The groups are there all the same: the admin puts real accounts in them.
    assert set(Group.objects.values_list("name", flat=True)) == set(Roles.ALL)


@pytest.mark.parametrize(
    ("configured", "named"),
    [
        ({"SITE_URL": "https://desk.example.com"}, "SITE_URL is https://desk.example.com"),
        ({"SITE_URL": "http://10.0.0.5:8000"}, "SITE_URL is http://10.0.0.5:8000"),
        ({"CLIENT_IP_HEADER": "HTTP_X_FORWARDED_FOR"}, "DJANGO_CLIENT_IP_HEADER"),
        ({"SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https")}, "DJANGO_SECURE_PROXY_SSL_HEADER"),
        ({"CSRF_TRUSTED_ORIGINS": ["https://desk.example.com"]}, "https://desk.example.com"),
    ],
)
def test_no_demo_user_is_created_once_a_public_address_or_a_proxy_is_configured(
    configured: dict[str, object], named: str
) -> None:
    # Every host name is loopback, yet the site is reached from elsewhere: through its public URL or a proxy.
    with override_settings(**configured):
        seed = ensure_demo_users(allowed_hosts=LOOPBACK)
    assert not User.objects.exists()
    assert named in seed.skipped and "loopback" in seed.skipped


@pytest.mark.parametrize("hosts", [["::1"], ["[::1]", "localhost"], ["127.0.0.1"]])
def test_loopback_names_and_addresses_count_as_loopback(hosts: list[str]) -> None:
    assert ensure_demo_users(allowed_hosts=hosts).created


@pytest.mark.parametrize("hosts", [[], ["*"], [".example.com"], ["localhost", "10.0.0.5"]])
def test_a_wildcard_or_any_other_host_counts_as_public(hosts: list[str]) -> None:
    assert ensure_demo_users(allowed_hosts=hosts).skipped
    assert not User.objects.exists()


def test_a_restart_keeps_the_password_groups_and_flags_an_admin_changed() -> None:
    ensure_demo_users(allowed_hosts=LOOPBACK)
    analyst = User.objects.get(username="analyst")
    analyst.set_password("a-new-long-password")
    analyst.is_staff = True
    analyst.save()
    analyst.groups.set([Group.objects.get(name=Roles.EXECUTIVE)])
    admin = User.objects.get(username="admin")
    admin.is_superuser = False
    admin.save()

    seed = ensure_demo_users(allowed_hosts=LOOPBACK)

    assert seed.created == [] and "seeded before" in seed.skipped
    analyst.refresh_from_db()
    assert analyst.check_password("a-new-long-password") and analyst.is_staff
    assert list(analyst.groups.values_list("name", flat=True)) == [Roles.EXECUTIVE]
    assert not User.objects.get(username="admin").is_superuser


def test_a_demo_user_an_admin_deleted_is_not_created_again() -> None:
    ensure_demo_users(allowed_hosts=LOOPBACK)
    User.objects.filter(username__in=["admin", "analyst"]).delete()
    ensure_demo_users(allowed_hosts=LOOPBACK)
    assert not User.objects.filter(username__in=["admin", "analyst"]).exists()
    assert User.objects.count() == len(DEMO_USERS) - 2


def test_the_demo_committee_has_the_three_members_the_default_quorum_needs() -> None:
    ensure_demo_users(allowed_hosts=LOOPBACK)
    members = User.objects.filter(groups__name=Roles.COMMITTEE).values_list("username", flat=True)
    assert sorted(members) == ["committee", "committee2", "committee3"]
    assert ReviewPolicy.objects.get(pk=1).min_votes == 3


def test_a_demo_user_a_later_version_adds_is_created_once_on_the_next_start() -> None:
    """An install seeded before the second and third committee members existed gets them, once."""
    DemoSeeding.objects.create(pk=1, users=["admin", "analyst", "committee", "reviewer", "executive"])
    seed = ensure_demo_users(allowed_hosts=LOOPBACK)
    assert seed.created == ["committee2", "committee3"]
    User.objects.filter(username="committee3").delete()
    assert ensure_demo_users(allowed_hosts=LOOPBACK).created == []
    assert not User.objects.filter(username="committee3").exists()


def test_a_user_who_already_has_a_demo_name_is_left_alone() -> None:
    User.objects.create_user(username="analyst", password="someone-elses-password")
    seed = ensure_demo_users(allowed_hosts=LOOPBACK)
    assert "analyst" not in seed.created
    analyst = User.objects.get(username="analyst")
    assert analyst.check_password("someone-elses-password") and not analyst.groups.exists()


def test_wrong_passwords_lock_the_account_and_then_the_right_one_is_refused(
    client: Client, alice: User
) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert log_in(client, "alice", "wrong") == 200  # the form again, with its error
    locked = client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
    assert locked.status_code == 429
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    assert "Too many login attempts" in locked.content.decode()
    assert f"locked for {minutes} minutes" in " ".join(locked.content.decode().split())

    right = client.post("/accounts/login/", {"username": "alice", "password": "alice-secret-pass"})

    assert right.status_code == 429
    assert "_auth_user_id" not in client.session


def test_the_lock_lifts_after_the_cool_off(client: Client, alice: User) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT):
        log_in(client, "alice", "wrong")
    assert log_in(client, "alice", "alice-secret-pass") == 429
    cool_off: timedelta = settings.AXES_COOLOFF_TIME
    # The clock moves on: axes' attempt rows are dated as if the cool-off had passed. (SQL rather than
    # axes.models, which ships no type information for mypy.)
    expired = timezone.now() - cool_off - timedelta(seconds=1)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE axes_accessattempt SET attempt_time = %s", [expired])

    assert log_in(client, "alice", "alice-secret-pass") == 302
    assert client.session["_auth_user_id"] == str(alice.pk)


def test_one_users_lock_does_not_stop_another_user_logging_in(client: Client, alice: User, bob: User) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT):
        log_in(client, "alice", "wrong")
    assert log_in(client, "bob", "bob-secret-pass") == 302


def test_a_good_login_before_the_limit_starts_the_count_again(client: Client, alice: User) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        log_in(client, "alice", "wrong")
    assert log_in(client, "alice", "alice-secret-pass") == 302
    client.logout()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert log_in(client, "alice", "wrong") == 200
    assert log_in(client, "alice", "alice-secret-pass") == 302


# Behind a reverse proxy every request arrives from the proxy's address; the client's is in the header the
# proxy sets (DJANGO_CLIENT_IP_HEADER), counted from the right past the trusted proxies.
PROXY = "127.0.0.1"
BEHIND_ONE_PROXY = {"CLIENT_IP_HEADER": "HTTP_X_FORWARDED_FOR", "TRUSTED_PROXY_COUNT": 1}


def log_in_from(client: Client, password: str, *, forwarded_for: str) -> int:
    response = client.post(
        "/accounts/login/",
        {"username": "alice", "password": password},
        REMOTE_ADDR=PROXY,
        HTTP_X_FORWARDED_FOR=forwarded_for,
    )
    return response.status_code


def test_behind_the_proxy_wrong_passwords_lock_only_the_client_address_that_sent_them(alice: User) -> None:
    attacker, analyst_at_home = Client(), Client()
    with override_settings(**BEHIND_ONE_PROXY):
        for _ in range(settings.AXES_FAILURE_LIMIT):
            log_in_from(attacker, "wrong", forwarded_for="203.0.113.7")
        assert log_in_from(attacker, "alice-secret-pass", forwarded_for="203.0.113.7") == 429
        assert log_in_from(analyst_at_home, "alice-secret-pass", forwarded_for="198.51.100.9") == 302
    assert analyst_at_home.session["_auth_user_id"] == str(alice.pk)


def test_behind_one_proxy_an_address_the_client_wrote_into_the_header_itself_is_not_trusted(
    client: Client, alice: User
) -> None:
    # The proxy appends the address it saw; whatever the client sent before it is the client's own story.
    with override_settings(**BEHIND_ONE_PROXY):
        for forged in range(settings.AXES_FAILURE_LIMIT):
            log_in_from(client, "wrong", forwarded_for=f"10.0.0.{forged}, 203.0.113.7")
        assert log_in_from(client, "alice-secret-pass", forwarded_for="10.9.9.9, 203.0.113.7") == 429


def test_without_a_configured_proxy_a_forwarded_for_header_is_ignored(client: Client, alice: User) -> None:
    # A header any client can write must not let it start a fresh count with every request.
    for forged in range(settings.AXES_FAILURE_LIMIT):
        log_in_from(client, "wrong", forwarded_for=f"203.0.113.{forged}")
    assert log_in_from(client, "alice-secret-pass", forwarded_for="198.51.100.9") == 429


def test_a_malformed_proxy_header_counts_as_the_proxy_itself(client: Client, alice: User) -> None:
    with override_settings(**BEHIND_ONE_PROXY):
        for junk in ("not-an-address", "", "203.0.113.7:443"):
            log_in_from(client, "wrong", forwarded_for=junk)
        log_in_from(client, "wrong", forwarded_for="unknown")
        log_in_from(client, "wrong", forwarded_for="203.0.113.7, garbage")
        assert log_in_from(client, "alice-secret-pass", forwarded_for="") == 429
        assert log_in_from(client, "alice-secret-pass", forwarded_for="198.51.100.9") == 302
