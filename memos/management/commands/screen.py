"""``manage.py screen``: the same as ``manage.py run screen`` (its options:
memos.pipeline.screen.desk.command)."""

from memos.management.run_command import command_for

Command = command_for("screen")
