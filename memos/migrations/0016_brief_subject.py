"""A brief is about a company or a watchlist of symbols, exactly one (memos.models.runs.Brief): the sector
screen's briefs fit the same model, and memos.services.runs.start_run matches a brief to its workflow."""

import django.contrib.postgres.fields
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memos", "0015_version_lines_and_files"),
    ]

    operations = [
        migrations.AlterField(
            model_name="brief",
            name="company",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="briefs",
                to="memos.company",
            ),
        ),
        migrations.AddField(
            model_name="brief",
            name="symbols",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.CharField(max_length=16),
                blank=True,
                default=list,
                help_text="a watchlist: the symbols a screen covers (a brief about a company has none)",
                size=200,
            ),
        ),
        migrations.AddConstraint(
            model_name="brief",
            constraint=models.CheckConstraint(
                condition=models.Q(("company__isnull", False), ("symbols", []))
                | models.Q(("company__isnull", True), models.Q(("symbols", []), _negated=True)),
                name="a_brief_is_about_a_company_or_a_watchlist",
            ),
        ),
    ]
