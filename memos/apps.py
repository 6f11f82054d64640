from django.apps import AppConfig


class MemosConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "memos"
    verbose_name = "Analyst Desk"

    def ready(self) -> None:
        # Imported here: they need the app registry ready.
        from django.contrib.auth.signals import user_logged_out

        from memos.live.signals import close_sockets_on_logout
        from memos.pipeline import hooks
        from memos.pipeline.prompts import load_at_start
        from memos.pipeline.registry import check_rubric_files
        from memos.services import notifications, surfaces, version_files, versions

        # Prompts and rubrics are validated at start-up: a broken prompt or rubric file stops the process
        # with its name, before any run can reach it.
        load_at_start()
        check_rubric_files()
        # The engine never imports the services: what a run needs of them is handed to it here.
        hooks.install(
            hooks.EngineHooks(
                prepare=versions.prepare_for_engine,
                freeze=versions.freeze_for_engine,
                before_exit=lambda: (notifications.wait_for_mail(), version_files.wait_for_prints()),
                week_part=surfaces.week_part,
            )
        )
        # A logout closes the run-page sockets of the session it ends (memos.views.run_socket).
        user_logged_out.connect(close_sockets_on_logout, dispatch_uid="memos.close_sockets_on_logout")
