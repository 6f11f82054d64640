"""Text helpers every workflow shares: untrusted text normalised and fenced (``untrusted``), figures a model
typed found and withheld and ``[[fact id]]`` references resolved (``figures``), sentences split, fitted and
repaired when an answer was cut at its bound (``sentences``), and text made safe for a renderer to draw
(``cleaning``)."""
