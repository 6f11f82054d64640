"""``manage.py analyze``: the same as ``manage.py run memo`` (its options:
memos.pipeline.memo.desk.command)."""

from memos.services.surfaces import command_for

Command = command_for("memo")
