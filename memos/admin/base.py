"""What the read-only admin pages share: nothing is added or changed there, and every stored field is shown
as text. The fact store's and the runs' pages build on ``ReadOnlyAdmin``; the review's records, refinement
schedules and judge calibrations on ``RecordAdmin``, which only superusers see at all. A page that may delete
says so by overriding ``has_delete_permission``."""

from __future__ import annotations

from typing import Any, TypeVar

from django.contrib import admin
from django.db import models
from django.http import HttpRequest

M = TypeVar("M", bound=models.Model)


def superuser(request: HttpRequest) -> bool:
    return bool(request.user.is_active and request.user.is_superuser)


def stored_fields(model: type[models.Model]) -> list[str]:
    """Every stored field of a model, read from it so a field added later is shown (read-only) too."""
    return [f.name for f in model._meta.get_fields() if f.concrete and not f.auto_created]


class ReadOnlyAdmin(admin.ModelAdmin[M]):
    """Rows that code wrote with their provenance: listed and opened, never added, changed or deleted here
    (Django drops the bulk delete action along with the permission, and refuses the POSTs with a 403)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        # Shown as text, not as disabled inputs: no form field is built for a page that saves nothing.
        return [*stored_fields(self.model), *super().get_readonly_fields(request, obj)]


class RecordAdmin(ReadOnlyAdmin[M]):
    """A record of the review or the loop: read-only, and only superusers see it at all (model permissions
    handed to a staff member do not open it)."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return superuser(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return superuser(request)


class SuperuserAdmin(admin.ModelAdmin[M]):
    """Pages only superusers open and change (the governed versions, the review policy, gold scores): model
    permissions handed to a staff member do not open them. What may be added or deleted each page says."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return superuser(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return superuser(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return superuser(request)
