"""Which model family a model belongs to, from its name (seed 003: a verdict comes from another family than
the work it judges).

Two models of one family share their training's blind spots whatever their size: a 7B judge grading a 1.5B
writer of the same family is a family grading itself. So the desk compares families, not model names. A
family is declared where it matters (``LLM_FAMILY``, ``LLM_FAMILY_<ROLE>``, ``LLM_JUDGE_FAMILY``); undeclared,
it is read from the model's name by the table below (the first word of the name, after any ``provider/``
prefix); a name the table does not know is taken for a family of its own, since nothing says otherwise.
"""

from __future__ import annotations

# The embedded model's alias (agents.llm.config.LOCAL_MODEL_ALIAS) serves Qwen2.5-Coder
# (agents.llm.localmodel).
EMBEDDED_FAMILY = "qwen"

# The first word of a model's name -> its maker's family. Names as the providers spell their models:
# gpt-4o-mini, o3-mini, claude-3-5-sonnet, gemini-1.5-pro, Meta-Llama-3.1-8B, Qwen2.5-7B-Instruct, ...
KNOWN_PREFIXES: tuple[tuple[str, str], ...] = (
    ("local", EMBEDDED_FAMILY),
    ("qwen", "qwen"),
    ("qwq", "qwen"),
    ("gpt", "openai"),
    ("chatgpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude", "anthropic"),
    ("gemini", "google"),
    ("gemma", "google"),
    ("llama", "meta"),
    ("meta-llama", "meta"),
    ("codellama", "meta"),
    ("mistral", "mistral"),
    ("mixtral", "mistral"),
    ("codestral", "mistral"),
    ("ministral", "mistral"),
    ("deepseek", "deepseek"),
    ("phi", "microsoft"),
    ("command", "cohere"),
    ("grok", "xai"),
)


def family_of_model(model: str) -> str:
    """``"gpt-4o-mini"`` -> ``"openai"``; ``"Qwen2.5-7B-Instruct"`` -> ``"qwen"``; ``"local"`` -> the embedded
    model's; an unknown name -> the name itself (lower-cased), a family of its own."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    for prefix, family in KNOWN_PREFIXES:
        if name == prefix or (name.startswith(prefix) and not name[len(prefix)].isalpha()):
            return family
    return name or model
