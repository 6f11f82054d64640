"""Account bookkeeping that is not a user: when the demo users were seeded."""

from __future__ import annotations

from django.db import models


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
