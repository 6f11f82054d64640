import json

from agents.llm.timings import speeds_from_raw

LLAMA_SERVER = {
    "choices": [{"message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}],
    "timings": {
        "cache_n": 1024,
        "prompt_n": 2176,
        "prompt_ms": 34000.0,
        "predicted_n": 412,
        "predicted_ms": 41200.0,
        "draft_n": 300,
        "draft_n_accepted": 210,
    },
}


def test_llama_server_timings_give_prompt_and_generation_speeds() -> None:
    speeds = speeds_from_raw(json.dumps(LLAMA_SERVER))
    assert speeds is not None
    assert speeds.prompt_per_s == 64.0 and speeds.generation_per_s == 10.0
    assert (speeds.cached_tokens, speeds.draft_tokens, speeds.draft_accepted) == (1024, 300, 210)


def test_a_body_without_usable_timings_has_no_speeds() -> None:
    assert speeds_from_raw(json.dumps({"choices": []})) is None  # a hosted API
    assert speeds_from_raw('{"timings": ') is None  # cut off
    hostile = {"timings": {"prompt_n": -5, "prompt_ms": 1, "predicted_n": 1, "predicted_ms": 1}}
    assert speeds_from_raw(json.dumps(hostile)) is None
    wrong_types = {"timings": {"prompt_n": "9", "prompt_ms": True, "predicted_n": 1, "predicted_ms": 1}}
    assert speeds_from_raw(json.dumps(wrong_types)) is None
    zero = {"timings": {"prompt_n": 0, "prompt_ms": 0, "predicted_n": 0, "predicted_ms": 0}}
    speeds = speeds_from_raw(json.dumps(zero))
    assert speeds is not None and speeds.prompt_per_s is None and speeds.cached_tokens is None
