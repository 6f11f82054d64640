"""The weekly sector screen (seed 002): its run engine side (``workflow``: the ``WORKFLOW`` declaration, the
plan, one module per stage body, its profiles) and its desk side (``desk``: the dashboard, the report and
its PDF, the weekly schedule, its command). The registry names this package
(memos.pipeline.registry.PACKAGES); importing it loads nothing, so its Django-free ``settings`` module can
be read while the desk's settings load."""
