"""``manage.py quant`` prints the profile (table or JSON) and turns bad input into one line and exit 2.

No test here is marked for the database: the command must not need one.
"""

from __future__ import annotations

import json
from datetime import date
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from ta.momentum import RSIIndicator

from agents.data.prices import load_price_csv
from tests.agents.data import shared_file

KO = str(shared_file("prices/daily/KO_2012-2017_stocknet.csv"))
SPY = str(shared_file("prices/daily/SPY_1999-2020_pandas-ta.csv"))
XLP = str(shared_file("prices/daily/XLP.csv"))
METRICS = {
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
# tests/agents/quant/test_profile.py checks the profile against ta to this tolerance on the same KO file.
TOLERANCE = 1e-6


def _ta_rsi14(path: str, as_of: date) -> float:
    """ta's RSI(14) on the closes up to ``as_of``: the independent reference. Over 1,200 KO sessions its
    zero seed has decayed far below the tolerance, so it agrees with Wilder's seeding (see test_profile)."""
    closes = load_price_csv(Path(path)).until(as_of).bars["close"]
    return float(RSIIndicator(closes, window=14).rsi().iloc[-1])


def _quant(*args: str) -> tuple[str, str, int]:
    out, err = StringIO(), StringIO()
    try:
        call_command("quant", *args, stdout=out, stderr=err)
    except SystemExit as exit_info:
        return out.getvalue(), err.getvalue(), int(exit_info.code or 0)
    return out.getvalue(), err.getvalue(), 0


def test_json_has_exactly_the_documented_keys() -> None:
    out, err, code = _quant(KO, "--benchmark", SPY, "--sector", XLP, "--as-of", "2017-06-30", "--json")

    assert (code, err) == (0, "")
    payload = json.loads(out)
    assert set(payload) == METRICS | {"ticker", "as_of", "benchmark", "sector", "notes"}
    assert (payload["ticker"], payload["as_of"]) == ("KO", "2017-06-30")
    assert (payload["benchmark"], payload["sector"]) == ("SPY", "XLP")
    assert all(isinstance(payload[key], float) for key in METRICS)
    assert payload["rsi14"] == pytest.approx(_ta_rsi14(KO, date(2017, 6, 30)), abs=TOLERANCE)  # 46.742...
    assert payload["notes"] == []


def test_json_shows_missing_figures_as_null_with_the_reason() -> None:
    recent = str(shared_file("prices/recent_2026/XLK.csv"))
    benchmark = str(shared_file("prices/recent_2026/SPY.csv"))
    out, _, code = _quant(recent, "--benchmark", benchmark, "--json")
    payload = json.loads(out)
    assert code == 0 and payload["sma200_distance_pct"] is None and payload["sector"] is None
    assert "sma200_distance_pct needs 200 sessions; 100 known" in payload["notes"]


def test_table_shows_every_metric_with_its_unit() -> None:
    out, _, code = _quant(KO, "--benchmark", SPY, "--as-of", "2017-07-04")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("KO  as of 2017-07-03  close 44.76") and "vs SPY" in lines[0]
    rows = {line.split()[0]: line.split(maxsplit=1)[1] for line in lines[2:] if not line.startswith("note")}
    assert set(rows) == METRICS
    assert rows["return_1w"].endswith(" %") and rows["atr_pct"].endswith(" %")
    assert rows["beta_sector"] == "n/a"
    # The table shows RSI to two places: ta's figure for the session used (2017-07-03), rounded alike.
    assert rows["rsi14"] == f"{_ta_rsi14(KO, date(2017, 7, 3)):.2f}" == "45.25"
    assert "note: 2017-07-04 is not a trading session; using 2017-07-03" in out


def _assert_one_line_refusal(args: list[str], message: str) -> None:
    out, err, code = _quant(*args)
    assert code == 2 and out == ""
    assert err.startswith("quant: ") and message in err
    assert err.count("\n") == 1 and err.endswith("\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent/prices.csv", "--benchmark", SPY], "no such price file: /nonexistent/prices.csv"),
        ([KO, "--benchmark", "/nonexistent/spy.csv"], "no such price file: /nonexistent/spy.csv"),
        ([KO, "--benchmark", SPY, "--as-of", "2019-01-02"], "2019-01-02 is outside KO's prices"),
        ([KO, "--benchmark", SPY, "--as-of", "2012-08-31"], "2012-08-31 is outside KO's prices"),
        ([KO, "--benchmark", SPY, "--as-of", "30/06/2017"], "--as-of must be a date like"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_2(args: list[str], message: str) -> None:
    _assert_one_line_refusal(args, message)


@pytest.mark.parametrize(
    "content",
    [b"\x00\x01binary\xff", b"hello,world\n1,2\n", b"a,b\n1,2,3,4\n5,6\n", b""],
    ids=["binary", "wrong-columns", "ragged", "empty"],
)
def test_a_file_that_is_not_prices_is_refused_in_one_line(tmp_path: Path, content: bytes) -> None:
    garbage = tmp_path / "notes.csv"
    garbage.write_bytes(content)
    _assert_one_line_refusal([str(garbage), "--benchmark", SPY], "notes.csv")
