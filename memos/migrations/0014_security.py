# Security under a real deployment (issue 16, section 3):
# - PasswordResetRequest: the password-reset throttle's counts (memos.services.password_resets).
# - RubricVersion.model_written_anchors: anchors adopted from a run's proposal are a model's words, fenced as
#   untrusted in the judge's prompt (memos.pipeline.deck.judging) until an admin saves an edited version.
#   Versions adopted before this migration are marked from their notes ("anchors adopted from run ...: keys"),
#   carrying their base version's marks, as memos.services.rubric_proposals marks new ones.

import django.utils.timezone
from django.db import migrations, models

ADOPTED_NOTE = "anchors adopted from run "
# The immutability trigger of migration 0007 refuses any change to a version's columns; the marks are what
# the versions were when they were made, so they are written with the trigger off, in this transaction only.
TRIGGER = "memos_rubricversion_immutable"


def mark_adopted_anchors(apps, schema_editor):
    RubricVersion = apps.get_model("memos", "RubricVersion")
    marks = {}
    for row in RubricVersion.objects.order_by("name", "version"):
        if row.note.startswith(ADOPTED_NOTE) and ": " in row.note:
            adopted = {key.strip() for key in row.note.split(": ", 1)[1].split(",") if key.strip()}
            marks[row.pk] = sorted(set(marks.get(row.based_on_id, [])) | adopted)
        else:  # a file's version, or an admin's edit: their words
            marks[row.pk] = []
    marked = {pk: keys for pk, keys in marks.items() if keys}
    if not marked:
        return
    table = schema_editor.quote_name(RubricVersion._meta.db_table)
    schema_editor.execute(f"ALTER TABLE {table} DISABLE TRIGGER {TRIGGER}")
    for pk, keys in marked.items():
        RubricVersion.objects.filter(pk=pk).update(model_written_anchors=keys)
    schema_editor.execute(f"ALTER TABLE {table} ENABLE TRIGGER {TRIGGER}")


class Migration(migrations.Migration):
    dependencies = [("memos", "0013_review_rules")]

    operations = [
        migrations.CreateModel(
            name="PasswordResetRequest",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "address_key",
                    models.CharField(help_text="keyed hash of the client's address", max_length=64),
                ),
                (
                    "account_key",
                    models.CharField(help_text="keyed hash of the e-mail address typed", max_length=64),
                ),
                ("requested_at", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                "verbose_name": "password reset request",
                "indexes": [
                    models.Index(fields=["address_key", "requested_at"], name="reset_by_address"),
                    models.Index(fields=["account_key", "requested_at"], name="reset_by_account"),
                    models.Index(fields=["requested_at"], name="reset_by_time"),
                ],
            },
        ),
        migrations.AddField(
            model_name="rubricversion",
            name="model_written_anchors",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="dimension keys whose anchor at 5 was adopted from a run's proposal (model-written) "
                "and not since saved by an admin: the judge reads them fenced, as untrusted text",
            ),
        ),
        migrations.RunPython(mark_adopted_anchors, migrations.RunPython.noop),
    ]
