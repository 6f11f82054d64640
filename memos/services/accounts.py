"""Groups, their permissions, and the demo users the embedded default starts with."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import Group, Permission, User
from django.db import transaction

from memos.models import DemoSeeding


class Roles:
    ADMIN = "admin"
    ANALYST = "analyst"
    COMMITTEE = "committee"
    REVIEWER = "reviewer"
    EXECUTIVE = "executive"
    ALL = (ADMIN, ANALYST, COMMITTEE, REVIEWER, EXECUTIVE)


# Model permissions are read only by the Django admin, and the admin is for the admin group, whose members
# are superusers (they hold every permission). The product's pages decide by group in
# memos/services/access.py. So no group is handed a model permission: an analyst given `add_run` could
# start a run with any creator and any config through the admin, around the service that checks them.
# ensure_groups() also takes back permissions an older version handed out.
GROUP_PERMISSIONS: dict[str, list[str]] = {role: [] for role in Roles.ALL}


@dataclass(frozen=True)
class DemoUser:
    username: str
    password: str
    group: str


# Local demo only: these logins exist on the embedded default so a reviewer can try every role. Three
# committee members: the default review policy needs three votes before a version can be approved.
DEMO_USERS = [
    DemoUser("admin", "admin-demo-pass", Roles.ADMIN),
    DemoUser("analyst", "analyst-demo-pass", Roles.ANALYST),
    DemoUser("committee", "committee-demo-pass", Roles.COMMITTEE),
    DemoUser("committee2", "committee2-demo-pass", Roles.COMMITTEE),
    DemoUser("committee3", "committee3-demo-pass", Roles.COMMITTEE),
    DemoUser("reviewer", "reviewer-demo-pass", Roles.REVIEWER),
    DemoUser("executive", "executive-demo-pass", Roles.EXECUTIVE),
]

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


@dataclass(frozen=True)
class DemoSeed:
    """What ensure_demo_users() did: the users it created, or why it created none."""

    created: list[str] = field(default_factory=list)
    skipped: str = ""


def ensure_groups() -> dict[str, Group]:
    groups: dict[str, Group] = {}
    with transaction.atomic():
        for name, codenames in GROUP_PERMISSIONS.items():
            group, _ = Group.objects.get_or_create(name=name)
            group.permissions.set(
                Permission.objects.filter(content_type__app_label="memos", codename__in=codenames)
            )
            groups[name] = group
    return groups


def has_role(user: object, role: str) -> bool:
    """An active user in the role's group now: a role taken away, or the account deactivated, ends it at once
    (the review counts only current committee members; the desk starts runs only for active analysts)."""
    if not isinstance(user, User) or not user.is_active:
        return False
    return user.groups.filter(name=role).exists()


def non_loopback_hosts(allowed_hosts: Sequence[str]) -> list[str]:
    return [host for host in allowed_hosts if host.strip().lower() not in LOOPBACK_HOSTS]


def public_exposure(*, allowed_hosts: Sequence[str] | None = None) -> list[str]:
    """Why people on other machines may reach this site, each reason naming its setting: a host name that
    is not loopback, a public SITE_URL, a proxy in front (the client-address or HTTPS header it sets), an
    origin trusted for CSRF. Empty for the local demo. ``allowed_hosts`` stands in for ALLOWED_HOSTS (the
    test client adds its own name there)."""
    hosts = list(settings.ALLOWED_HOSTS if allowed_hosts is None else allowed_hosts)
    reasons: list[str] = []
    if not hosts or non_loopback_hosts(hosts):
        reasons.append(f"the site serves {', '.join(non_loopback_hosts(hosts)) or '(none)'}")
    if not _on_loopback(settings.SITE_URL):
        reasons.append(f"SITE_URL is {settings.SITE_URL}")
    if settings.CLIENT_IP_HEADER:
        reasons.append("a proxy is configured (DJANGO_CLIENT_IP_HEADER)")
    if settings.SECURE_PROXY_SSL_HEADER:
        reasons.append("a proxy is configured (DJANGO_SECURE_PROXY_SSL_HEADER)")
    origins = [origin for origin in settings.CSRF_TRUSTED_ORIGINS if not _on_loopback(origin)]
    if origins:
        reasons.append(f"DJANGO_CSRF_TRUSTED_ORIGINS names {', '.join(origins)}")
    return reasons


def _on_loopback(url: str) -> bool:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:  # a malformed URL is no proof of a loopback site
        return False
    return host in LOOPBACK_HOSTS or f"[{host}]" in LOOPBACK_HOSTS


def ensure_demo_users(*, allowed_hosts: Sequence[str] | None = None) -> DemoSeed:
    """Create each demo user once in a database's life, and only on a site served on loopback alone.

    Well-known passwords are fine on 127.0.0.1 and nowhere else: not on a public host name or SITE_URL, and
    not behind a proxy, which forwards other machines' requests from a loopback address. Once created, nothing
    here touches a demo user again: not its password, groups or staff flags, and not its existence (one an
    admin deleted stays deleted). A demo user a later version of the desk adds (the second and third
    committee members) is created on the next start, once, like the others.
    """
    groups = ensure_groups()
    exposure = public_exposure(allowed_hosts=allowed_hosts)
    if exposure:
        return DemoSeed(
            skipped=f"no demo users: {'; '.join(exposure)}, and demo logins are for a site served on "
            "loopback (127.0.0.1, localhost, ::1) only; create accounts with manage.py createsuperuser "
            "and the admin"
        )
    with transaction.atomic():
        # One row with a fixed key: two starts at once cannot both seed (the second's insert waits on the
        # first's and then finds it).
        seeding, _ = DemoSeeding.objects.select_for_update().get_or_create(pk=1)
        seeded_before = set(seeding.users)
        created: list[str] = []
        for demo in DEMO_USERS:
            if demo.username in seeded_before:
                continue  # created once already: deleted or changed since, it is an admin's to keep so
            # A user of that name not made by the seeding is someone's account: leave it alone.
            if User.objects.filter(username=demo.username).exists():
                continue
            # Only the admin works in the Django admin; every other role works in the product's pages.
            user = User.objects.create_user(
                username=demo.username,
                password=demo.password,
                is_staff=demo.group == Roles.ADMIN,
                is_superuser=demo.group == Roles.ADMIN,
            )
            user.groups.add(groups[demo.group])
            created.append(demo.username)
        if not created:
            return DemoSeed(skipped="demo users were seeded before; left as they are")
        seeding.users = [*seeding.users, *created]
        seeding.save(update_fields=["users"])
    return DemoSeed(created=created)
