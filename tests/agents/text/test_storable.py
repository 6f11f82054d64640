from agents.text.storable import storable, storable_text


def test_nul_characters_are_removed_from_every_string_keys_included() -> None:
    value = {"slide\x00": ["USD\x00 391,035 M", ("\x00", 3)], "n": 1.5, "ok": True, "none": None}
    assert storable(value) == {"slide": ["USD 391,035 M", ("", 3)], "n": 1.5, "ok": True, "none": None}


def test_a_split_surrogate_pair_is_joined_and_a_lone_surrogate_dropped() -> None:
    assert storable_text("up \ud83d\udcc8 and \ud800down\udfff") == "up \U0001f4c8 and down"


def test_text_postgres_takes_is_returned_unchanged() -> None:
    text = "Services 市场 grew; ½ of it — “quoted”\ttabbed\n"
    assert storable_text(text) is text
    assert storable([text]) == [text]
