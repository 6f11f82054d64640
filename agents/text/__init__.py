"""Text helpers every workflow shares: untrusted text normalised and fenced (``untrusted``), figures a model
typed found and withheld and ``[[fact id]]`` references resolved (``figures``), a typed number a given fact
backs written as that fact (``resolution``), the schema pattern that keeps figures out of a decoder's prose
(``patterns``), the re-ask and the counts of what was repaired (``repair``), a paragraph as a reader is
shown it, one line for what was withheld (``reader``), text in another script than the brief's found
(``scripts``), sentences split, fitted and repaired when an answer was cut at its bound (``sentences``), text
made safe for a renderer to draw (``cleaning``) and for PostgreSQL to store (``storable``)."""
