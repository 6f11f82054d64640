"""Groups, their permissions, and the demo users the embedded default starts with."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import Group, Permission, User
from django.db import transaction


class Roles:
    ADMIN = "admin"
    ANALYST = "analyst"
    COMMITTEE = "committee"
    REVIEWER = "reviewer"
    EXECUTIVE = "executive"
    ALL = (ADMIN, ANALYST, COMMITTEE, REVIEWER, EXECUTIVE)


_VIEW_DATA = ["view_company", "view_factrecord", "view_sourcedocument"]
GROUP_PERMISSIONS: dict[str, list[str]] = {
    Roles.ADMIN: [],  # admins are superusers
    Roles.ANALYST: [*_VIEW_DATA, "view_brief", "add_brief", "view_run", "add_run", "view_llmcall"],
    Roles.COMMITTEE: [*_VIEW_DATA, "view_brief", "view_run"],
    Roles.REVIEWER: [*_VIEW_DATA, "view_brief", "view_run"],
    Roles.EXECUTIVE: [],
}


@dataclass(frozen=True)
class DemoUser:
    username: str
    password: str
    group: str


# Local demo only: these logins exist on the embedded default so a reviewer can try every role.
DEMO_USERS = [
    DemoUser("admin", "admin-demo-pass", Roles.ADMIN),
    DemoUser("analyst", "analyst-demo-pass", Roles.ANALYST),
    DemoUser("committee", "committee-demo-pass", Roles.COMMITTEE),
    DemoUser("reviewer", "reviewer-demo-pass", Roles.REVIEWER),
    DemoUser("executive", "executive-demo-pass", Roles.EXECUTIVE),
]


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


def ensure_demo_users() -> list[DemoUser]:
    """Create the demo users once; a password an admin changed later is left alone."""
    groups = ensure_groups()
    with transaction.atomic():
        for demo in DEMO_USERS:
            user, created = User.objects.get_or_create(username=demo.username)
            if created:
                user.set_password(demo.password)
            user.is_staff = demo.group in {Roles.ADMIN, Roles.ANALYST}
            user.is_superuser = demo.group == Roles.ADMIN
            user.save()
            user.groups.add(groups[demo.group])
    return DEMO_USERS
