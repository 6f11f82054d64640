"""Text helpers every workflow shares: untrusted text normalised and fenced (``untrusted``), figures a model
typed found and withheld and ``[[fact id]]`` references resolved (``figures``), text in another script than
the brief's found (``scripts``), sentences split, fitted and repaired when an answer was cut at its bound
(``sentences``), text made safe for a renderer to draw (``cleaning``) and for PostgreSQL to store
(``storable``)."""
