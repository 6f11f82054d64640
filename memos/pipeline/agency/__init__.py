"""The agency (seed 004 under seed 003's rules): its run engine side (``workflow``: the ``WORKFLOW``
declaration, the plan, one module per stage body, the debate and its turns) and its desk side (``desk``: its
pages, its version page, its command). The registry names this package (memos.pipeline.registry.PACKAGES);
importing it loads nothing, so its Django-free ``settings`` module can be read while the desk's settings
load."""
