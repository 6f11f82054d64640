"""JSON already dumped, written to a jsonb column from its text.

psycopg dumps a dict it is given for a jsonb column with ``json.dumps``; a value the desk has just dumped
(to check it is storable, or to hash it) would be dumped a second time. A step's output or a version's
content of a megabyte, mostly floats, takes 10-20 ms a dump, on the run's path. PostgreSQL parses the text
either way.
"""

from __future__ import annotations

from django.db.models import JSONField
from django.db.models.expressions import RawSQL


def jsonb_text(dumped: str) -> RawSQL:
    """A value for a JSONField in ``update()`` or a model's insert: ``dumped`` (valid JSON) as it is. The
    model instance keeps the Python value; only the statement carries the text (a parameter, never SQL)."""
    return RawSQL("%s::jsonb", (dumped,), output_field=JSONField())
