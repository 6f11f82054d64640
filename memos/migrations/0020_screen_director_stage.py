"""The screen's managing director has a stage named after it: "review" already means the committee's review.

Screen runs made before this keep their rows and resume where they were: their stage names move with them.
The ledger's rows keep the stage they were paid in (an LLM call's request hash does not include it).
"""

from django.db import migrations

OLD, NEW = "review", "director"


def rename(apps, schema_editor, before, after):  # type: ignore[no-untyped-def]
    Run = apps.get_model("memos", "Run")
    AgentStep = apps.get_model("memos", "AgentStep")
    StageClaim = apps.get_model("memos", "StageClaim")
    Run.objects.filter(workflow="screen", stage=before).update(stage=after)
    AgentStep.objects.filter(run__workflow="screen", stage=before).update(stage=after)
    StageClaim.objects.filter(run__workflow="screen", stage=before).update(stage=after)


class Migration(migrations.Migration):
    dependencies = [("memos", "0019_raw_responses_refresh_and_memo_schedule")]

    operations = [
        migrations.RunPython(
            lambda apps, editor: rename(apps, editor, OLD, NEW),
            lambda apps, editor: rename(apps, editor, NEW, OLD),
        )
    ]
