import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import Group, User

from memos.services.accounts import DEMO_USERS, Roles, ensure_demo_users

pytestmark = pytest.mark.django_db


def test_it_creates_the_five_groups_and_a_demo_user_in_each() -> None:
    ensure_demo_users()
    assert set(Group.objects.values_list("name", flat=True)) == set(Roles.ALL)
    for demo in DEMO_USERS:
        assert authenticate(username=demo.username, password=demo.password) is not None
        assert User.objects.get(username=demo.username).groups.filter(name=demo.group).exists()


def test_running_it_again_keeps_a_password_an_admin_changed() -> None:
    ensure_demo_users()
    analyst = User.objects.get(username="analyst")
    analyst.set_password("a-new-long-password")
    analyst.save()
    ensure_demo_users()
    assert authenticate(username="analyst", password="a-new-long-password") is not None
    assert User.objects.filter(username="analyst").count() == 1


def test_only_the_admin_demo_user_is_a_superuser() -> None:
    ensure_demo_users()
    assert list(User.objects.filter(is_superuser=True).values_list("username", flat=True)) == ["admin"]
    analyst = User.objects.get(username="analyst")
    assert analyst.has_perm("memos.add_run")
    assert not User.objects.get(username="committee").has_perm("memos.add_run")
