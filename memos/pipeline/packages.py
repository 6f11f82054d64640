"""The workflows this desk runs: one line each, the package that holds it, in the order the brief form offers
them. This line is all that adding a workflow changes outside its package (memos.pipeline.registry loads
each package's ``workflow`` module; agency.settings reads each package's ``settings`` module).

Django-free, like the packages' ``__init__`` and ``settings`` modules: the desk's settings read it before
Django has loaded an app.
"""

PACKAGES = (
    "memos.pipeline.memo",
    "memos.pipeline.deck",
    "memos.pipeline.agency",
    "memos.pipeline.screen",
    "memos.pipeline.week",
)
