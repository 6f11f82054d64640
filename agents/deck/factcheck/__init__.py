"""T5, the deterministic fact-check: every figure a rendered deck prints, traced back to the fact store.

``extract`` reads a rendered PPTX or PDF back as text, slide by slide, and finds the figure-like tokens in
it; ``check`` matches them to the figures the embedded deck placed on each slide and compares each with
what the fact store says it must read. Nothing here trusts the file: the embedded deck says which fact a
slide cites, the lookup (the fact store) says what that fact is.
"""
