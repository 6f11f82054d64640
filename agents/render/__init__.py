"""Renderers: HTML to PDF (``pdf``), and the deck and lint modules beside it.

Nothing is re-exported here, so importing one renderer never loads another's library (WeasyPrint is slow
to import and needs Pango).
"""
