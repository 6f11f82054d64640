"""The consulting agency (seed 004 under seed 003's rules): what its roles answer, who they are, and the
rules code applies to their answers (merging duplicate moves, checking a debate turn, ranking the scores).

One name everywhere: the workflow, its packages (``agents.agency``, ``memos.pipeline.agency``), its runs
(``Run.workflow == "agency"``), its versions (kind ``agency``), its prompts (``prompts/agency_*.md``) and
its templates. ``agency/`` at the top is the Django project, always imported whole as ``agency.``; this
package is always ``agents.agency``. Plain Python over pydantic: it never imports ``memos`` or ``django``.
"""
