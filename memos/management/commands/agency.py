"""``manage.py agency``: the same as ``manage.py run agency`` (its options:
memos.pipeline.agency.desk.command)."""

from memos.management.run_command import command_for

Command = command_for("agency")
