"""A worker parses the bundled price files before it forks (memos.pipeline.worker.warm_up): each work-horse
finds them parsed, and a file that cannot be read stops nothing until a run needs it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings

from agents.data.errors import MalformedData
from agents.data.prices import _parsed_file, load_price_csv
from memos.pipeline.data_sources import warm_prices

BUNDLED = Path(settings.SNAPSHOT_DIR) / "prices" / "daily" / "AAPL_2012-2017_stocknet.csv"


def test_the_bundled_prices_are_parsed_ahead_and_a_broken_file_waits_for_its_reader(tmp_path: Path) -> None:
    daily = tmp_path / "prices" / "daily"
    daily.mkdir(parents=True)
    shutil.copy(BUNDLED, daily / BUNDLED.name)
    (tmp_path / "stocknet" / "price").mkdir(parents=True)
    (tmp_path / "stocknet" / "price" / "BROKEN.csv").write_text("date,open\nnot a day,1\n")
    _parsed_file.cache_clear()
    with override_settings(SNAPSHOT_DIR=str(tmp_path)):
        warm_prices()  # the broken file raises nothing here
    assert _parsed_file.cache_info().currsize == 1
    load_price_csv(daily / BUNDLED.name)
    assert _parsed_file.cache_info().hits == 1  # the run's read found it parsed
    with pytest.raises(MalformedData, match=r"BROKEN\.csv"):
        load_price_csv(tmp_path / "stocknet" / "price" / "BROKEN.csv")
