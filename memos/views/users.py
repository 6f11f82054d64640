from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest


def user_of(request: HttpRequest) -> User:
    """The signed-in user of a view behind ``login_required``."""
    assert isinstance(request.user, User)  # login_required ran first
    return request.user
