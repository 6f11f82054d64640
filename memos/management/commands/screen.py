"""``manage.py screen``: the same as ``manage.py run screen`` (its options:
memos.pipeline.screen.desk.command)."""

from memos.services.surfaces import command_for

Command = command_for("screen")
