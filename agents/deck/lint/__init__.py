"""T7, the render lint: overflow measured with the font's own metrics, walls of text, off-slide and
overlapping shapes, placeholders, empty charts (``checks``), with the findings' rules in ``findings``."""
