"""The admin, one module per feature; importing this package registers every page.

The admin is for the admin group (superusers). What code produced with its provenance (facts, source
documents, data loads, the LLM ledger, the review's records) is read here, never written; prompts and rubrics
are edited into new versions (memos.admin.governance).
"""

from memos.admin import (  # noqa: F401  # each registers its pages
    calibration,
    facts,
    governance,
    queues,
    review,
    runs,
    schedules,
)
