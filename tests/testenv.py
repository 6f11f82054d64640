"""Loaded by pytest before Django (``-p tests.testenv``): test defaults that make a real provider unreachable.

scripts/test.sh exports the real service addresses; these are only defaults for anything it did not set.
"""

import os

os.environ.setdefault("ANALYST_DESK_TESTING", "true")
os.environ.setdefault("DJANGO_DEBUG", "false")
# A loopback port nothing listens on, a fake key, and a guard that refuses any non-loopback endpoint:
# a test that forgets to start the fake server fails fast instead of calling a hosted model.
os.environ.setdefault("LLM_BASE_URL", "http://127.0.0.1:9/v1")
os.environ.setdefault("LLM_API_KEY", "test-key-not-a-real-secret")
os.environ.setdefault("LLM_MODEL", "fake-model")
os.environ["LLM_LOOPBACK_ONLY"] = "true"
os.environ.setdefault("DATA_MODE", "snapshot")
for name in [key for key in os.environ if key.startswith(("LLM_MODEL_", "LLM_BASE_URL_", "LLM_API_KEY_"))]:
    del os.environ[name]
