"""``manage.py week``: the same as ``manage.py run week`` (its options: memos.pipeline.week.desk.command)."""

from memos.management.run_command import command_for

Command = command_for("week")
