"""django-rq's dashboard, for superusers only."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import admin
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseBase
from django.urls import URLPattern, reverse
from django_rq.admin import QueueAdmin
from django_rq.models import Dashboard

from memos.admin.base import superuser


def _superusers_only(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    @wraps(view)
    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), reverse("admin:login"))
        if not superuser(request):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return guarded


class SuperuserQueueAdmin(QueueAdmin):
    """django-rq's dashboard lists every job's arguments and can empty queues, delete and requeue jobs;
    django-rq lets any staff user in. Here every one of its URLs, including the JSON stats that it would
    otherwise open to staff or an API token, is for superusers only."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return superuser(request)

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return superuser(request)

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return superuser(request)

    def get_urls(self) -> list[URLPattern]:
        urls: list[URLPattern] = super().get_urls()  # type: ignore[no-untyped-call]  # django_rq is untyped
        return [
            URLPattern(url.pattern, _superusers_only(url.callback), url.default_args, url.name)
            for url in urls
            if _works_here(url)
        ]


# The Dashboard "model" has no table, so the object pages ModelAdmin adds for it (history, change, delete and
# the catch-all redirect to them) can only fail; the scheduler page needs rq-scheduler, not installed here.
_UNUSABLE_RQ_PAGES = {
    "django_rq_dashboard_history",
    "django_rq_dashboard_delete",
    "django_rq_dashboard_change",
    "django_rq_scheduler_jobs",
}


def _works_here(url: URLPattern) -> bool:
    if url.name in _UNUSABLE_RQ_PAGES:
        return False
    return not (url.name is None and "object_id" in str(url.pattern))


# django_rq (earlier in INSTALLED_APPS) registered its own QueueAdmin; this one replaces it.
if admin.site.is_registered(Dashboard):
    admin.site.unregister(Dashboard)
admin.site.register(Dashboard, SuperuserQueueAdmin)
