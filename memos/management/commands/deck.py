"""``manage.py deck``: the same as ``manage.py run deck`` (its options: memos.pipeline.deck.desk.command)."""

from memos.management.run_command import command_for

Command = command_for("deck")
