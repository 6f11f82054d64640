# A version line per artefact (memo v1, v2 and deck v1, v2 side by side on one brief) and the frozen files of
# a version (memos.models.versions.VersionFile), as immutable as the version itself.
#
# Versions frozen before the lines keep their numbers: migration 0008's trigger keeps every frozen column as
# it is, and the numbers were announced (e-mails, audit rows saying "superseded by v3"). A line of such a
# brief may start at v2; the next version of it takes the line's highest number plus one.

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

# The files of a version never change: memos_append_only() (0008) refuses every UPDATE and DELETE, and the
# checks tie the hash and the size the downloads (ETag) and the export (index.jsonl) give to the bytes.
FROZEN_FILES = """
CREATE TRIGGER memos_versionfile_frozen BEFORE UPDATE OR DELETE ON memos_versionfile
    FOR EACH ROW EXECUTE FUNCTION memos_append_only();
ALTER TABLE memos_versionfile ADD CONSTRAINT a_version_file_is_its_hash
    CHECK (sha256 = encode(sha256(body), 'hex') AND size = octet_length(body));
"""
THAWED_FILES = """
ALTER TABLE memos_versionfile DROP CONSTRAINT IF EXISTS a_version_file_is_its_hash;
DROP TRIGGER IF EXISTS memos_versionfile_frozen ON memos_versionfile;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memos", "0014_security"),
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
        migrations.AlterField(
            model_name="artefactversion",
            name="created_at",
            field=models.DateTimeField(default=django.utils.timezone.now, editable=False),
        ),
        migrations.CreateModel(
            name="VersionFile",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "name",
                    models.CharField(help_text="render.pdf, deck.pptx: its name in an export", max_length=40),
                ),
                ("content_type", models.CharField(max_length=100)),
                ("sha256", models.CharField(max_length=64)),
                ("size", models.PositiveIntegerField(help_text="bytes")),
                ("body", models.BinaryField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "version",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="files",
                        to="memos.artefactversion",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("version", "name"), name="one_file_per_version_and_name")
                ],
            },
        ),
        migrations.RunSQL(FROZEN_FILES, THAWED_FILES),
    ]
