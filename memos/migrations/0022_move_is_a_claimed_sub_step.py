# Move's run, worker, lease and heartbeat_at now come from the abstract ClaimedSubStep
# (memos.models.substeps): the same columns, a generic help text and a related name written as a pattern
# ('%(class)ss' is still 'moves'). Nothing changes in the database, so this is state only.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memos', '0021_workflow_names_from_the_registry'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='move',
                    name='run',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='%(class)ss', to='memos.run'),
                ),
                migrations.AlterField(
                    model_name='move',
                    name='worker',
                    field=models.CharField(blank=True, help_text='who holds it (host:pid)', max_length=200),
                ),
            ],
        ),
    ]
