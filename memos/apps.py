from django.apps import AppConfig


class MemosConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "memos"
    verbose_name = "Analyst Desk"
