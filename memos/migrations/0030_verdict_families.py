from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memos", "0029_version_keeps_its_brief")]

    operations = [
        migrations.AddField(
            model_name="run",
            name="verdict_families",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="each verdict's judge and the work it judges, with their model families, as the run "
                "started (memos.pipeline.judge_families)",
            ),
        ),
        migrations.AddField(
            model_name="artefactversion",
            name="verdict_families",
            field=models.JSONField(
                blank=True, default=list, help_text="its verdicts' model families, from its run (seed 003's badge)"
            ),
        ),
    ]
