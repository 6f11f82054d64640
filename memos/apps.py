from django.apps import AppConfig


class MemosConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "memos"
    verbose_name = "Analyst Desk"

    def ready(self) -> None:
        # Prompts are validated at start-up: a broken prompt file stops the process with its name, before
        # any run can reach it.
        from memos.pipeline.prompts import templates  # here: it needs the app registry ready

        templates()
