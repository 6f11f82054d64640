"""What any workflow renders with: HTML to PDF through a fetcher that refuses everything but inline data and
the app's own static files (``pdf``), SVG charts drawn by code from exact values (``charts``), and the fonts
both use (``fonts``).

Nothing is re-exported here, so importing one renderer never loads another's library (WeasyPrint is slow
to import and needs Pango).
"""
