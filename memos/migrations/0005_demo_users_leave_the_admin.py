"""Earlier versions made the demo analyst staff, which let it read every analyst's runs in the admin. The
admin is for the admin group now: the non-admin demo users of an existing install lose the staff flag
(only theirs, by name; an account an admin made staff on purpose is not touched)."""

from django.db import migrations

DEMO_NON_ADMINS = ("analyst", "committee", "reviewer", "executive")


def leave_the_admin(apps, schema_editor):
    User = apps.get_model("auth", "User")
    demoted = User.objects.filter(username__in=DEMO_NON_ADMINS, is_superuser=False, is_staff=True)
    demoted.update(is_staff=False)


class Migration(migrations.Migration):
    dependencies = [
        ("memos", "0004_run_engine"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(leave_the_admin, migrations.RunPython.noop)]
