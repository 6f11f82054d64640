import pytest

from agents.llm.config import ConfigError, load_llm_settings


def test_with_no_environment_every_role_uses_the_local_model_server() -> None:
    settings = load_llm_settings({})
    endpoint = settings.endpoint_for("evaluator")
    assert endpoint.base_url == "http://127.0.0.1:8081/v1"
    assert endpoint.model == "local"
    assert endpoint.is_loopback
    assert settings.timeout_s == 1800.0  # a slow local answer is waited for, not asked again from its start


def test_a_role_override_changes_only_that_role() -> None:
    settings = load_llm_settings(
        {
            "LLM_BASE_URL": "https://llm.example.com/v1",
            "LLM_API_KEY": "key-1",
            "LLM_MODEL": "small",
            "LLM_MODEL_EVALUATOR": "large",
        }
    )
    assert settings.endpoint_for("evaluator").model == "large"
    assert settings.endpoint_for("evaluator").base_url == "https://llm.example.com/v1"
    assert settings.endpoint_for("synthesizer").model == "small"
    assert settings.timeout_s == 120.0


def test_a_hosted_endpoint_without_a_key_is_refused() -> None:
    with pytest.raises(ConfigError, match="LLM_API_KEY"):
        load_llm_settings({"LLM_BASE_URL": "https://llm.example.com/v1"})


@pytest.mark.parametrize(
    ("name", "value"),
    [("LLM_MAX_CONCURRENCY", "three"), ("LLM_TIMEOUT_S", "-1"), ("LLM_LOOPBACK_ONLY", "maybe")],
)
def test_a_malformed_value_names_the_variable(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        load_llm_settings({name: value})


def test_the_api_key_never_appears_in_the_settings_repr() -> None:
    settings = load_llm_settings(
        {"LLM_BASE_URL": "https://llm.example.com/v1", "LLM_API_KEY": "sk-secret-123"}
    )
    assert "sk-secret-123" not in repr(settings)


def test_a_run_has_a_token_budget_when_none_is_configured_and_zero_lifts_it() -> None:
    from agents.llm.config import DEFAULT_RUN_BUDGET_TOKENS

    assert load_llm_settings({}).run_budget_tokens == DEFAULT_RUN_BUDGET_TOKENS
    hosted = {"LLM_BASE_URL": "https://llm.example.com/v1", "LLM_API_KEY": "key-1"}
    assert load_llm_settings(hosted).run_budget_tokens == DEFAULT_RUN_BUDGET_TOKENS
    assert load_llm_settings({"LLM_RUN_BUDGET_TOKENS": "40000"}).run_budget_tokens == 40_000
    assert load_llm_settings({"LLM_RUN_BUDGET_TOKENS": "0"}).run_budget_tokens is None


def test_a_role_s_model_family_is_declared_or_taken_from_its_own_model() -> None:
    hosted = {"LLM_BASE_URL": "https://api.example.com/v1", "LLM_API_KEY": "k", "LLM_MODEL": "writer-large"}
    same = load_llm_settings(hosted)
    assert same.family_for("scoring") == same.family_for("analyst") == "writer-large"
    split = load_llm_settings({**hosted, "LLM_MODEL_SCORING": "judge-small", "LLM_FAMILY": "writers"})
    assert (split.family_for("analyst"), split.family_for("scoring")) == ("writers", "judge-small")
    # A smaller model of the same family, declared so: the judge shares the writers' family.
    declared = load_llm_settings(
        {
            **hosted,
            "LLM_FAMILY": "writers",
            "LLM_MODEL_SCORING": "writer-mini",
            "LLM_FAMILY_SCORING": "writers",
        }
    )
    assert declared.family_for("scoring") == declared.family_for("critic") == "writers"


def test_the_spending_caps_have_defaults_read_from_the_environment_and_zero_lifts_each() -> None:
    defaults = load_llm_settings({})
    assert defaults.run_budget_max_tokens == 3_000_000
    assert defaults.user_daily_tokens == 10_000_000
    assert defaults.calibration_budget_tokens == 500_000
    set_ = load_llm_settings(
        {
            "LLM_RUN_BUDGET_MAX_TOKENS": "900000",
            "LLM_USER_DAILY_TOKENS": "0",
            "LLM_CALIBRATION_BUDGET_TOKENS": "40000",
        }
    )
    assert (set_.run_budget_max_tokens, set_.user_daily_tokens, set_.calibration_budget_tokens) == (
        900_000,
        None,
        40_000,
    )
    with pytest.raises(ConfigError, match="LLM_USER_DAILY_TOKENS"):
        load_llm_settings({"LLM_USER_DAILY_TOKENS": "lots"})
