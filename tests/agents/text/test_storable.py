import json

from agents.text.storable import storable, storable_json, storable_text


def test_nul_characters_are_removed_from_every_string_keys_included() -> None:
    value = {"slide\x00": ["USD\x00 391,035 M", ("\x00", 3)], "n": 1.5, "ok": True, "none": None}
    assert storable(value) == {"slide": ["USD 391,035 M", ("", 3)], "n": 1.5, "ok": True, "none": None}


def test_a_split_surrogate_pair_is_joined_and_a_lone_surrogate_dropped() -> None:
    assert storable_text("up \ud83d\udcc8 and \ud800down\udfff") == "up \U0001f4c8 and down"


def test_text_postgres_takes_is_returned_unchanged() -> None:
    text = "Services 市场 grew; ½ of it — “quoted”\ttabbed\n"
    assert storable_text(text) is text
    assert storable([text]) == [text]


def test_a_clean_tree_is_stored_as_it_is_and_a_dirty_one_anywhere_in_it_is_cleaned() -> None:
    clean = {"sections": [{"text": f"Revenue rose {n}% — ½ of it “services” 市场 😀"} for n in range(50)]}
    assert storable(clean) is clean  # read from its JSON: nothing to walk
    dirty = {"sections": [*clean["sections"], {"text": "late\x00 NUL"}]}
    assert storable(dirty)["sections"][-1] == {"text": "late NUL"}
    assert storable([["deep", ("\ud800lone",)]]) == [["deep", ("lone",)]]


def test_a_text_that_spells_the_nul_escape_out_is_kept_and_a_value_json_cannot_write_is_walked() -> None:
    spelled = {"quote": "the byte \\u0000 in a filing"}
    assert storable(spelled) == spelled
    assert storable({"when": object, "text": "a\x00b"})["text"] == "ab"


def test_storable_json_is_the_stored_value_and_the_json_it_is_written_from() -> None:
    clean = {"charts": [{"close": [51.42, 51.12], "label": "市场 “close”"}]}
    value, dumped = storable_json(clean)
    assert value is clean and json.loads(dumped) == clean
    dirty = {"text": "late\x00 NUL", "lone": "\ud800x", "quote": "the byte \\u0000"}
    cleaned, written = storable_json(dirty)
    assert cleaned == {"text": "late NUL", "lone": "x", "quote": "the byte \\u0000"}
    assert json.loads(written) == cleaned
    written.encode()  # a lone surrogate would not encode: PostgreSQL is sent UTF-8
