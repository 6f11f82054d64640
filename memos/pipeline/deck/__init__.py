"""The C-suite deck (seed 001): its run engine side (``workflow``: the ``WORKFLOW`` declaration, the plan,
one module per stage body, its profiles) and its desk side (``desk``: the deck viewer, the frozen PDF and
PPTX, the refinement schedule, the judge's calibration, its command). The registry names this package
(memos.pipeline.registry.PACKAGES); importing it loads nothing, so its Django-free ``settings`` module can
be read while the desk's settings load."""
