"""The investment memo (seed 000, "Critiqued Fan-In"): its run engine side (``workflow``: the ``WORKFLOW``
declaration, the plan, one module per stage body, its profiles and its rehearsal script) and its desk side
(``desk``: its pages, files, export, schedules, actions and command). The registry names this package
(memos.pipeline.registry.PACKAGES); importing it loads nothing, so its Django-free ``settings`` module can
be read while the desk's settings load."""
