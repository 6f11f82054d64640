"""Account bookkeeping that is not a user: when the demo users were seeded, and password-reset requests."""

from __future__ import annotations

from typing import ClassVar

from django.db import models
from django.utils import timezone


class DemoSeeding(models.Model):
    """One row once the demo users have been created (memos.services.accounts.ensure_demo_users).

    It outlives the demo users themselves, so a restart neither re-creates a demo user an admin deleted nor
    touches one an admin changed. Emptying the database removes it too, and seeding starts afresh.
    """

    seeded_at = models.DateTimeField(auto_now_add=True)
    users = models.JSONField(default=list, help_text="the demo users created then")

    class Meta:
        verbose_name = "demo seeding"

    def __str__(self) -> str:
        return f"demo users seeded {self.seeded_at:%Y-%m-%d %H:%M}"


class PasswordResetRequest(models.Model):
    """One password-reset request, counted by memos.services.password_resets per address and per e-mail
    address typed, whether or not an account has it. Both are kept as keyed hashes (an address a visitor
    typed is not stored as it is), and rows older than the throttle's window are deleted as new ones come."""

    address_key = models.CharField(max_length=64, help_text="keyed hash of the client's address")
    account_key = models.CharField(max_length=64, help_text="keyed hash of the e-mail address typed")
    requested_at = models.DateTimeField(default=timezone.now)
    # Refused requests sent no mail: they count against the address that made them, never toward the
    # e-mail address's own ceiling (else one stranger's refused flood would lock its owner out).
    refused = models.BooleanField(default=False, db_default=False)

    class Meta:
        verbose_name = "password reset request"
        indexes: ClassVar = [
            models.Index(fields=["address_key", "requested_at"], name="reset_by_address"),
            models.Index(fields=["account_key", "requested_at"], name="reset_by_account"),
            models.Index(fields=["requested_at"], name="reset_by_time"),
        ]

    def __str__(self) -> str:
        return f"password reset requested {self.requested_at:%Y-%m-%d %H:%M}"
