"""URL converters for the ids agents cite: ``AAPL:revenue:FY2024``, ``AAPL:beta:2017-09-01``, ``news:6f…``."""

from __future__ import annotations


class EvidenceIdConverter:
    # Colons separate ticker, metric and period; tickers carry dots and dashes (BRK.B, BRK-B). No slash.
    regex = r"[A-Za-z0-9][A-Za-z0-9._:\-]*"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value
