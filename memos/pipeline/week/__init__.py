"""The desk's week (issue 33): the watchlist screened after Friday's close, a closer look at the names that
moved on their own, the decks the committee follows refreshed, and one digest, as one run that starts the
other workflows' runs as its parts and waits on them through the engine. Its run engine side
(``workflow``), and its desk side (``desk``: the digest's page and e-mail, the schedule, ``manage.py week``).
The registry names this package (memos.pipeline.packages.PACKAGES); importing it loads nothing, so its
Django-free ``settings`` module can be read while the desk's settings load."""
