"""How news text and market questions name the demo companies, for linking untrusted text to a ticker.

SEC's registrant names ("NVIDIA CORP", "MICROSOFT CORP", "COCA COLA CO") are not how a headline or a
Polymarket question writes them, so the names are listed here by hand. Matching is whole-word and
case-sensitive (``agents.data.documents.mention_pattern``); the ticker itself always matches too.
"""

from __future__ import annotations

COMPANY_NAMES: dict[str, tuple[str, ...]] = {
    "AAPL": ("Apple",),
    "JPM": ("JPMorgan", "J.P. Morgan"),
    "KO": ("Coca-Cola",),
    "MSFT": ("Microsoft",),
    "NVDA": ("NVIDIA", "Nvidia"),
    "TSLA": ("Tesla",),
    "TSM": ("TSMC", "Taiwan Semiconductor"),
}
