"""The deck's two renderers (seed 001 T6): PPTX (``pptx`` draws what ``pptx_layout`` places) and PDF
(``pdf``, through the safe WeasyPrint wrapper of agents.render.pdf), both embedding the deck spec
(``embedded``) that the fact-check reads back.

Nothing is re-exported here, so importing one renderer never loads another's library (WeasyPrint is slow to
import and needs Pango).
"""
