"""The consulting agency (seed 004 under seed 003's rules): what its roles answer, who they are, and the
rules code applies to their answers (merging duplicate moves, checking a debate turn, ranking the scores).

Named ``consulting`` so that nobody confuses it with ``agency/``, the Django project package. Plain Python
over pydantic: it never imports ``memos`` or ``django``.
"""
