"""One run engine for every workflow: runs name their workflow and carry a fencing token (``lease``) and a
count of claims of their current stage; steps belong to a stage (the seed's "layer" means macro, meso,
micro) and name the kind of their output; every claim of a stage is recorded; ledger rows carry the id
that makes a retried write idempotent; a run reserves tokens for calls in flight."""

import django.db.models.deletion
from django.db import migrations, models

# What each step of a memo run written before this migration is, by its stage and key.
_KIND_BY_STAGE = {"data": "evidence", "specialists": "specialist", "evaluation": "evaluation", "memo": "memo"}


def name_step_kinds(apps, schema_editor):
    AgentStep = apps.get_model("memos", "AgentStep")
    for stage, kind in _KIND_BY_STAGE.items():
        AgentStep.objects.filter(stage=stage).update(kind=kind)
    AgentStep.objects.filter(stage="synthesis", key="audit").update(kind="audit")
    AgentStep.objects.filter(stage="synthesis", key__startswith="iteration-").update(kind="iteration")


class Migration(migrations.Migration):
    dependencies = [
        ("memos", "0003_agent_steps"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="agentstep", name="one_step_per_run_layer_key"),
        migrations.RenameField(model_name="agentstep", old_name="layer", new_name="stage"),
        migrations.AlterField(
            model_name="agentstep",
            name="stage",
            field=models.CharField(max_length=40),
        ),
        migrations.AddField(
            model_name="agentstep",
            name="kind",
            field=models.CharField(
                default="", help_text="the output type of this step in its workflow", max_length=40
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="agentstep",
            name="summary",
            field=models.CharField(blank=True, help_text="one line for the step's card", max_length=200),
        ),
        migrations.AlterField(
            model_name="agentstep",
            name="position",
            field=models.PositiveSmallIntegerField(default=0, help_text="order within the stage"),
        ),
        migrations.AddConstraint(
            model_name="agentstep",
            constraint=models.UniqueConstraint(
                fields=("run", "stage", "key"), name="one_step_per_run_stage_key"
            ),
        ),
        migrations.RunPython(name_step_kinds, migrations.RunPython.noop),
        migrations.AddField(
            model_name="run",
            name="workflow",
            field=models.CharField(
                choices=[
                    ("memo", "Investment memo"),
                    ("deck", "C-suite deck"),
                    ("agency", "Debated moves"),
                    ("screen", "Sector screen"),
                ],
                default="memo",
                max_length=20,
            ),
        ),
        migrations.AddField(
            model_name="run",
            name="lease",
            field=models.PositiveIntegerField(default=0, help_text="fencing token of the latest stage claim"),
        ),
        migrations.AddField(
            model_name="run",
            name="stage_attempts",
            field=models.PositiveSmallIntegerField(default=0, help_text="claims of the current stage"),
        ),
        migrations.AddField(
            model_name="run",
            name="tokens_reserved",
            field=models.PositiveIntegerField(
                default=0,
                help_text="tokens set aside for calls in flight, so parallel calls cannot overrun the budget",
            ),
        ),
        migrations.AlterField(
            model_name="run",
            name="stage",
            field=models.CharField(blank=True, help_text="the stage running or queued next", max_length=40),
        ),
        migrations.AddField(
            model_name="llmcall",
            name="attempt_id",
            field=models.UUIDField(blank=True, editable=False, null=True, unique=True),
        ),
        migrations.CreateModel(
            name="StageClaim",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("stage", models.CharField(max_length=40)),
                ("lease", models.PositiveIntegerField()),
                (
                    "worker",
                    models.CharField(help_text="host and process id of the claiming worker", max_length=120),
                ),
                ("claimed_at", models.DateTimeField(auto_now_add=True)),
                ("released_at", models.DateTimeField(blank=True, null=True)),
                (
                    "outcome",
                    models.CharField(
                        choices=[
                            ("running", "Running"),
                            ("finished", "Stage finished"),
                            ("failed", "Run failed"),
                            ("error", "Error, to be resumed"),
                            ("lost", "Lost its lease"),
                            ("abandoned", "Worker vanished"),
                        ],
                        default="running",
                        max_length=12,
                    ),
                ),
                ("error", models.TextField(blank=True)),
                (
                    "run",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="claims", to="memos.run"
                    ),
                ),
            ],
            options={
                "ordering": ["run", "lease"],
                "constraints": [
                    models.UniqueConstraint(fields=("run", "lease"), name="one_claim_per_run_lease")
                ],
            },
        ),
    ]
