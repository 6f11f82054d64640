"""``manage.py quant`` prints the profile (table or JSON) and turns bad input into one line and exit 2."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.agents.data import shared_file

KO = str(shared_file("prices/daily/KO_2012-2017_stocknet.csv"))
SPY = str(shared_file("prices/daily/SPY_1999-2020_pandas-ta.csv"))
XLP = str(shared_file("prices/daily/XLP.csv"))
KEYS = {
    "return_1w",
    "return_1m",
    "return_3m",
    "return_ytd",
    "beta",
    "alpha_1w",
    "beta_sector",
    "alpha_1w_sector",
    "sma50_distance_pct",
    "sma200_distance_pct",
    "rsi14",
    "bb_position",
    "volume_ratio",
    "atr_pct",
    "volatility_annualised",
}


def _quant(*args: str) -> tuple[str, str, int]:
    out, err = StringIO(), StringIO()
    try:
        call_command("quant", *args, stdout=out, stderr=err)
    except SystemExit as exit_info:
        return out.getvalue(), err.getvalue(), int(exit_info.code or 0)
    return out.getvalue(), err.getvalue(), 0


def test_json_has_exactly_the_documented_keys() -> None:
    out, _, code = _quant(KO, "--benchmark", SPY, "--sector", XLP, "--as-of", "2017-06-30", "--json")
    assert code == 0
    payload = json.loads(out)
    assert set(payload) >= KEYS
    assert (payload["ticker"], payload["as_of"], payload["sector"]) == ("KO", "2017-06-30", "XLP")
    assert all(isinstance(payload[key], float) for key in KEYS)
    assert 0 < payload["rsi14"] < 100


def test_table_shows_every_metric() -> None:
    out, _, code = _quant(KO, "--benchmark", SPY, "--as-of", "2017-07-04")
    assert code == 0
    assert "KO  as of 2017-07-03" in out and "rsi14" in out and "beta_sector" in out
    assert "note: 2017-07-04 is not a trading session; using 2017-07-03" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent/prices.csv", "--benchmark", SPY], "no such price file"),
        ([KO, "--benchmark", SPY, "--as-of", "2019-01-02"], "outside KO's prices"),
        ([KO, "--benchmark", SPY, "--as-of", "30/06/2017"], "--as-of must be a date"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_2(args: list[str], message: str) -> None:
    out, err, code = _quant(*args)
    assert code == 2 and out == ""
    assert message in err and err.strip().count("\n") == 0


def test_a_file_that_is_not_prices_is_refused(tmp_path: Path) -> None:
    garbage = tmp_path / "notes.csv"
    garbage.write_bytes(b"\x00\x01binary\xff")
    out, err, code = _quant(str(garbage), "--benchmark", SPY)
    assert code == 2 and out == "" and "quant:" in err
