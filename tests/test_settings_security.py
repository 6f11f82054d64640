"""Production settings from the environment: the deploy check passes, every page sends the security headers,
and Redis or an LLM endpoint off this machine is refused without credentials and TLS."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from agency.settings import (
    check_llm_endpoints,
    check_redis_url,
    client_ip_header,
    database_from_url,
    is_loopback_host,
    proxy_ssl_header,
)
from agents.env import Env
from agents.llm.config import load_llm_settings

ROOT = Path(__file__).resolve().parents[1]

POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "frame-ancestors": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "object-src": "'none'",
}


def production_env(**overrides: str) -> dict[str, str]:
    """The process environment less test mode, plus what a real deployment sets."""
    env = {key: value for key, value in os.environ.items() if key != "ANALYST_DESK_TESTING"}
    env.update(
        DJANGO_SECRET_KEY=secrets.token_urlsafe(64),
        DJANGO_DEBUG="false",
        SITE_URL="https://desk.example.com",
        DJANGO_ALLOWED_HOSTS="desk.example.com",
        DJANGO_CSRF_TRUSTED_ORIGINS="https://desk.example.com",
    )
    env.update(overrides)
    return env


def run_python(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_deploy_check_passes_with_production_settings_from_the_environment() -> None:
    done = run_python(production_env(), "manage.py", "check", "--deploy", "--fail-level", "WARNING")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_the_deploy_check_fails_on_a_site_served_over_plain_http() -> None:
    done = run_python(
        production_env(SITE_URL="http://desk.example.com"),
        "manage.py",
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
    )
    assert done.returncode != 0
    for check in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert check in done.stderr


def test_https_settings_follow_the_environment() -> None:
    code = (
        "from django.conf import settings as s; "
        "print(s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS, "
        "s.SECURE_PROXY_SSL_HEADER)"
    )
    env = production_env(DJANGO_SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto", DJANGO_HSTS_SECONDS="3600")
    env["DJANGO_SETTINGS_MODULE"] = "agency.settings"
    done = run_python(env, "-c", f"import django; django.setup(); {code}")
    assert done.stdout.strip() == "True True True 3600 ('HTTP_X_FORWARDED_PROTO', 'https')", done.stderr


def test_the_local_demo_over_http_has_no_https_only_settings() -> None:
    assert settings.SITE_URL.startswith("http://")
    assert not settings.SECURE_SSL_REDIRECT and not settings.SESSION_COOKIE_SECURE
    assert settings.SECURE_HSTS_SECONDS == 0


def test_a_proxy_header_is_a_header_name_and_nothing_else() -> None:
    assert proxy_ssl_header("X", "") is None
    assert proxy_ssl_header("X", "X-Forwarded-Proto=on") == ("HTTP_X_FORWARDED_PROTO", "on")
    with pytest.raises(ImproperlyConfigured, match="X-Forwarded-Proto"):
        proxy_ssl_header("X", "HTTP_X_FORWARDED_PROTO; https")


def test_the_client_address_header_is_a_header_name_and_nothing_else() -> None:
    assert client_ip_header("X", " ") is None
    assert client_ip_header("X", "X-Real-IP") == "HTTP_X_REAL_IP"
    with pytest.raises(ImproperlyConfigured, match="DJANGO_CLIENT_IP_HEADER must be a header name"):
        client_ip_header("DJANGO_CLIENT_IP_HEADER", "X-Forwarded-For: 1.2.3.4")


def test_the_proxy_in_front_comes_from_the_environment_and_nothing_is_trusted_without_it() -> None:
    code = "from django.conf import settings as s; print(s.CLIENT_IP_HEADER, s.TRUSTED_PROXY_COUNT)"
    env = production_env(DJANGO_CLIENT_IP_HEADER="X-Forwarded-For", DJANGO_TRUSTED_PROXY_COUNT="2")
    env["DJANGO_SETTINGS_MODULE"] = "agency.settings"
    done = run_python(env, "-c", f"import django; django.setup(); {code}")
    assert done.stdout.strip() == "HTTP_X_FORWARDED_FOR 2", done.stderr
    assert settings.CLIENT_IP_HEADER is None  # the test run configures no proxy
    refused = run_python(production_env(DJANGO_TRUSTED_PROXY_COUNT="0"), "-c", "import agency.settings")
    assert "DJANGO_TRUSTED_PROXY_COUNT must be between 1 and 10" in refused.stderr


def _policy(header: str) -> dict[str, str]:
    directives = (part.strip().split(" ", 1) for part in header.split(";"))
    return {name: value for name, value in directives}


@pytest.mark.django_db
def test_every_page_sends_the_content_security_policy_and_the_other_headers(
    client: Client, admin_user: User
) -> None:
    pages = {"/": 200, "/accounts/login/": 200, "/no-such-page/": 404}
    responses = [(url, client.get(url), status) for url, status in pages.items()]
    client.force_login(admin_user)
    responses += [(url, client.get(url), 200) for url in ("/admin/", "/admin/memos/company/add/")]

    for url, response, status in responses:
        assert response.status_code == status, url
        policy = _policy(response["Content-Security-Policy"])
        assert {name: policy[name] for name in POLICY} == POLICY, url
        assert policy["connect-src"] == "'self' ws://testserver", url
        assert "unsafe-inline" not in response["Content-Security-Policy"]
        assert response["X-Frame-Options"] == "DENY", url
        assert response["X-Content-Type-Options"] == "nosniff", url
        assert response["Referrer-Policy"] == "same-origin", url


@pytest.mark.django_db
def test_the_admin_pages_have_no_inline_script_or_style_for_the_policy_to_block(
    client: Client, admin_user: User
) -> None:
    client.force_login(admin_user)
    for url in ("/admin/", "/admin/memos/company/", "/admin/memos/company/add/", "/admin/auth/user/"):
        html = client.get(url).content.decode()
        for tag in html.split("<script")[1:]:
            assert "src=" in tag.split(">", 1)[0], (url, tag[:80])
        assert "<style" not in html and " style=" not in html and " onclick=" not in html, url


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", ["10.0.0.5", "redis.example.com", "0.0.0.0", "localhost.example.com", ""])
def test_hosts_that_are_not_loopback(host: str) -> None:
    assert not is_loopback_host(host)


@pytest.mark.parametrize(
    "url",
    [
        "redis://127.0.0.1:6380/0",
        "redis://:secret@localhost:6380/0",
        "unix:///var/run/redis.sock",
        "rediss://:secret@redis.example.com:6380/0",
        "rediss://desk:secret@10.0.0.5:6380/0",
    ],
)
def test_redis_on_loopback_or_with_a_password_over_tls_is_accepted(url: str) -> None:
    check_redis_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "redis://redis.example.com:6379/0",
        "redis://:secret@redis.example.com:6379/0",
        "rediss://redis.example.com:6380/0",
        "redis://10.0.0.5:6379/0",
    ],
)
def test_redis_off_this_machine_without_a_password_and_tls_is_refused(url: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=r"REDIS_URL .* rediss:// .*password"):
        check_redis_url(url)


@pytest.mark.parametrize(
    ("url", "options"),
    [
        ("postgres://postgres@127.0.0.1:5433/analyst_desk", {}),
        ("postgres://desk_app:pw@localhost:5433/analyst_desk?sslmode=require", {"sslmode": "require"}),
        (
            "postgres://desk_app:pw@db.example.com:5432/analyst_desk?sslmode=verify-full&sslrootcert=/etc/ca.pem",
            {"sslmode": "verify-full", "sslrootcert": "/etc/ca.pem"},
        ),
    ],
)
def test_a_database_on_loopback_or_with_a_password_over_tls_is_accepted(
    url: str, options: dict[str, str]
) -> None:
    assert database_from_url(url)["OPTIONS"] == options


@pytest.mark.parametrize(
    "url",
    [
        "postgres://desk_app:pw@db.example.com:5432/analyst_desk",
        "postgres://desk_app:pw@10.0.0.5:5432/analyst_desk?sslmode=prefer",
        "postgres://desk_app@db.example.com:5432/analyst_desk?sslmode=verify-full",
    ],
)
def test_a_database_off_this_machine_without_a_password_and_tls_is_refused(url: str) -> None:
    # A worker on another machine reaches the desk's PostgreSQL over the network: every run's data goes by.
    with pytest.raises(ImproperlyConfigured, match=r"DATABASE_URL .* password and TLS"):
        database_from_url(url)


def _llm(**env: str) -> None:
    check_llm_endpoints(load_llm_settings(env), Env(env))


def test_a_loopback_llm_endpoint_needs_no_key_or_tls() -> None:
    _llm()
    _llm(LLM_BASE_URL="http://127.0.0.1:9100/v1")
    _llm(LLM_BASE_URL_EVALUATOR="http://localhost:9200/v1")


def test_a_hosted_llm_endpoint_over_https_with_a_key_is_accepted() -> None:
    _llm(LLM_BASE_URL="https://api.example.com/v1", LLM_API_KEY="sk-test")
    _llm(LLM_BASE_URL_EVALUATOR="https://api.example.com/v1", LLM_API_KEY_EVALUATOR="sk-test")


def test_a_hosted_llm_endpoint_over_plain_http_is_refused() -> None:
    with pytest.raises(ImproperlyConfigured, match=r"LLM_BASE_URL points at 'llm.example.com'.*https://"):
        _llm(LLM_BASE_URL="http://llm.example.com/v1", LLM_API_KEY="sk-test")


def test_a_role_sent_to_a_hosted_endpoint_without_a_key_is_refused() -> None:
    # The local default has no key; the evaluator's hosted endpoint must not go out without one.
    with pytest.raises(ImproperlyConfigured, match=r"LLM_BASE_URL_EVALUATOR .*LLM_API_KEY_EVALUATOR"):
        _llm(LLM_BASE_URL_EVALUATOR="https://api.example.com/v1")
    with pytest.raises(ImproperlyConfigured, match=r"LLM_BASE_URL_SYNTHESIZER .*https://"):
        _llm(LLM_BASE_URL_SYNTHESIZER="http://10.0.0.5:8000/v1", LLM_API_KEY="sk-test")


def test_a_role_that_only_changes_its_model_is_checked_against_the_default_endpoint() -> None:
    with pytest.raises(ImproperlyConfigured, match="LLM_BASE_URL points"):
        _llm(LLM_BASE_URL="http://llm.example.com/v1", LLM_API_KEY="sk-test", LLM_MODEL_EVALUATOR="big")


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"REDIS_URL": "redis://redis.example.com:6379/0"}, "REDIS_URL points at 'redis.example.com'"),
        ({"LLM_BASE_URL": "http://llm.example.com/v1", "LLM_API_KEY": "sk"}, "LLM_BASE_URL points at"),
        ({"LLM_BASE_URL_EVALUATOR": "https://api.example.com/v1"}, "LLM_BASE_URL_EVALUATOR points at"),
    ],
)
def test_the_settings_module_refuses_to_load_with_such_an_endpoint(
    variables: dict[str, str], message: str
) -> None:
    env = production_env(**variables)
    for name in ("LLM_BASE_URL", "LLM_API_KEY"):
        if name not in variables:
            env.pop(name, None)
    done = run_python(env, "-c", "import agency.settings")
    assert done.returncode != 0
    assert "ImproperlyConfigured" in done.stderr and message in done.stderr
