"""The stocknet universe (``data/snapshot/stocknet/``, MIT; Xu & Cohen, ACL 2018): 88 stocks in 9 sectors with
daily prices: upstream's ``StockTable`` (``Sector<TAB>Symbol<TAB>Company``, symbols with a leading ``$``) read
here, and ``price/<SYMBOL>.csv`` (Yahoo daily bars), read as any folder of price files is
(agents.data.prices.PriceFolders)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agents.data.errors import MalformedData

# Upstream spells one sector "Basic Matierials"; the desk shows it spelled right (the file stays unchanged).
SECTOR_SPELLING = {"Basic Matierials": "Basic Materials"}


@dataclass(frozen=True)
class Listing:
    symbol: str
    sector: str
    name: str


class StocknetUniverse:
    def __init__(self, root: Path) -> None:
        self.root = root  # the stocknet folder: StockTable, price/, tweets/

    def listings(self) -> list[Listing]:
        """Every row of the StockTable, in its order."""
        path = self.root / "StockTable"
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise MalformedData(f"{path} could not be read: {exc}") from exc
        found = []
        for number, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            cells = [cell.strip() for cell in line.split("\t")]
            if len(cells) != 3 or not cells[1].startswith("$"):
                raise MalformedData(f"{path} line {number} is not 'Sector<TAB>$SYMBOL<TAB>Company'")
            sector, symbol, name = cells
            found.append(Listing(symbol[1:].upper(), SECTOR_SPELLING.get(sector, sector), name))
        return found
