"""The desk's week, as code decides it: which flagged names get a closer look, the question each is asked,
and the digest's typed parts (no Django, no model)."""
