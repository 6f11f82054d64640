# A version line per artefact: memo v1, v2 and deck v1, v2 side by side on one brief.
#
# Versions frozen before the lines keep their numbers: migration 0008's trigger keeps every frozen column as
# it is, and the numbers were announced (e-mails, audit rows saying "superseded by v3"). A line of such a
# brief may start at v2; the next version of it takes the line's highest number plus one.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memos", "0012_fact_store_changes"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="artefactversion",
            name="one_version_number_per_brief",
        ),
        migrations.AddConstraint(
            model_name="artefactversion",
            constraint=models.UniqueConstraint(
                fields=("brief", "kind", "number"), name="one_version_number_per_line"
            ),
        ),
        migrations.AlterField(
            model_name="artefactversion",
            name="number",
            field=models.PositiveIntegerField(
                help_text="v1, v2, ... per brief and kind: each kind is a line"
            ),
        ),
    ]
