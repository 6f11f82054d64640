"""``manage.py analyze``: the same as ``manage.py run memo`` (its options:
memos.pipeline.memo.desk.command)."""

from memos.management.run_command import command_for

Command = command_for("memo")
