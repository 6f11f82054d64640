"""Analyst Desk settings: one module, driven by environment variables.

Every variable is documented in README.md. Helpers raise ImproperlyConfigured on a malformed value so
a typo fails at start-up, not in the middle of a run.
"""

from __future__ import annotations

import ipaddress
import os
import re
import secrets
from collections.abc import Callable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import TypeVar
from urllib.parse import parse_qsl, unquote, urlsplit

import django_stubs_ext
from django.core.exceptions import ImproperlyConfigured

from agents.env import ConfigError, Env
from agents.llm.config import LLMSettings, load_llm_settings
from agents.llm.roles import VERDICT_ROLES
from memos.pipeline.packages import PACKAGES
from memos.pipeline.workflow_settings import Desk, load_workflow_settings

# Lets admin.ModelAdmin[Model] and friends be subscripted at run time, as the type stubs declare them.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent


ENV = Env(os.environ)
T = TypeVar("T")


def _read(read: Callable[[], T]) -> T:
    """A value read by the desk's one environment parser (agents.env), its error Django's."""
    try:
        return read()
    except ConfigError as exc:
        raise ImproperlyConfigured(str(exc)) from exc


def env_str(name: str, default: str) -> str:
    return ENV.text(name, default)


def env_bool(name: str, default: bool) -> bool:
    return _read(lambda: ENV.flag(name, default))


def env_int(name: str, default: int) -> int:
    return _read(lambda: ENV.whole(name, default))


def env_list(name: str, default: list[str]) -> list[str]:
    return ENV.items(name, default)


# TLS modes that encrypt the connection; the verify ones also check the server's certificate.
DATABASE_TLS_MODES = ("require", "verify-ca", "verify-full")


def database_tls(url: str) -> dict[str, str]:
    """The connection's TLS options from the URL's query (``sslmode``, ``sslrootcert``). A database off this
    machine (a worker on another machine, a managed server) carries every run's data and answers: it needs
    a password and TLS, as Redis does."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    unknown = sorted(set(query) - {"sslmode", "sslrootcert"})
    if unknown:
        raise ImproperlyConfigured(f"DATABASE_URL: unknown option(s) {', '.join(unknown)}")
    if not is_loopback_host(parts.hostname or "127.0.0.1") and (
        query.get("sslmode") not in DATABASE_TLS_MODES or not parts.password
    ):
        raise ImproperlyConfigured(
            f"DATABASE_URL points at {parts.hostname!r}, which is not loopback: give it a password and TLS, "
            "e.g. postgres://desk_app:PASSWORD@db.example.com:5432/analyst_desk?sslmode=verify-full"
        )
    return query


def database_from_url(url: str) -> dict[str, object]:
    parts = urlsplit(url)
    if parts.scheme not in {"postgres", "postgresql"}:
        raise ImproperlyConfigured(f"DATABASE_URL must be a postgres:// URL, got scheme {parts.scheme!r}")
    return {
        "OPTIONS": database_tls(url),
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")) or "analyst_desk",
        "USER": unquote(parts.username or "postgres"),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "127.0.0.1",
        "PORT": str(parts.port or 5432),
        # Short-lived connections: RQ work-horses fork, and a stage must not pin a connection during
        # a slow LLM call.
        "CONN_MAX_AGE": 0,
        "TEST": {"NAME": f"test_{unquote(parts.path.lstrip('/')) or 'analyst_desk'}"},
    }


def owner_credentials(app: Mapping[str, object], url: str) -> dict[str, str] | None:
    """DATABASE_OWNER_URL's user and password, or None when not set (or the same role as DATABASE_URL's)."""
    if not url.strip():
        return None
    owner = database_from_url(url)
    if any(owner[key] != app[key] for key in ("HOST", "PORT", "NAME")):
        raise ImproperlyConfigured(
            "DATABASE_OWNER_URL must name the same server, port and database as DATABASE_URL, with the "
            "role that owns the tables"
        )
    if owner["USER"] == app["USER"]:
        return None
    return {"USER": str(owner["USER"]), "PASSWORD": str(owner["PASSWORD"])}


def is_loopback_host(host: str) -> bool:
    """127.0.0.0/8, ::1 and ``localhost``: names that never leave this machine."""
    host = host.strip().strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_redis_url(url: str) -> None:
    """Redis carries job arguments and live page fragments: off this machine it needs a password and TLS."""
    parts = urlsplit(url)
    if parts.scheme == "unix" or is_loopback_host(parts.hostname or ""):
        return
    if parts.scheme != "rediss" or not parts.password:
        raise ImproperlyConfigured(
            f"REDIS_URL points at {parts.hostname!r}, which is not loopback: use rediss:// (TLS) with a "
            "password, e.g. rediss://:PASSWORD@redis.example.com:6380/0"
        )


def check_llm_endpoints(llm: LLMSettings, env: Env) -> None:
    """Prompts carry the company's data and the answers become memos: a model off this machine is reached
    over HTTPS with an API key. Keys are read from the environment, not from the resolved endpoints, because
    a role inherits a placeholder key from the local default."""
    endpoints = [("LLM_BASE_URL", llm.default, env.raw("LLM_API_KEY"))]
    if llm.judge is not None:
        url_name = "LLM_JUDGE_BASE_URL" if env.raw("LLM_JUDGE_BASE_URL") else "LLM_BASE_URL"
        endpoints.append((url_name, llm.judge, env.raw("LLM_JUDGE_API_KEY") or env.raw("LLM_API_KEY")))
    for role, endpoint in sorted(llm.roles.items()):
        upper = role.upper()
        url_name = f"LLM_BASE_URL_{upper}" if env.raw(f"LLM_BASE_URL_{upper}") else "LLM_BASE_URL"
        key = env.raw(f"LLM_API_KEY_{upper}") or env.raw("LLM_API_KEY")
        if llm.judge is not None and role in VERDICT_ROLES:
            key = env.raw(f"LLM_API_KEY_{upper}") or env.raw("LLM_JUDGE_API_KEY") or env.raw("LLM_API_KEY")
        endpoints.append((url_name, endpoint, key))
    for name, endpoint, key in endpoints:
        if endpoint.is_loopback:
            continue
        if urlsplit(endpoint.base_url).scheme != "https" or not key:
            raise ImproperlyConfigured(
                f"{name} points at {endpoint.host!r}, which is not loopback: it must be an https:// URL "
                f"and have an API key ({name.replace('BASE_URL', 'API_KEY')})"
            )


def proxy_ssl_header(name: str, raw: str) -> tuple[str, str] | None:
    """``X-Forwarded-Proto`` (or ``X-Forwarded-Proto=https``) -> ``("HTTP_X_FORWARDED_PROTO", "https")``."""
    if not raw.strip():
        return None
    header, _, value = raw.partition("=")
    return meta_key(name, header, example="X-Forwarded-Proto"), value.strip() or "https"


def client_ip_header(name: str, raw: str) -> str | None:
    """``X-Forwarded-For`` -> ``"HTTP_X_FORWARDED_FOR"``, the request.META key; None when not set."""
    return meta_key(name, raw, example="X-Forwarded-For") if raw.strip() else None


def meta_key(name: str, header: str, *, example: str) -> str:
    header = header.strip()
    if not header or not all(ch.isalnum() or ch == "-" for ch in header):
        raise ImproperlyConfigured(f"{name} must be a header name such as {example}, got {header!r}")
    return "HTTP_" + header.upper().replace("-", "_")


DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = ENV.raw("DJANGO_SECRET_KEY")
if not SECRET_KEY:
    # scripts/run.sh keeps a generated key in its state directory; without one, sessions simply do not
    # survive a restart (an ephemeral key is safer than a well-known default).
    SECRET_KEY = secrets.token_urlsafe(50)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])
# Where people reach the app: used in links printed by commands and sent in e-mails, and (https) to turn on
# the HTTPS-only settings below.
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000")

# HTTPS: on when the site is served over https (SITE_URL), or forced with DJANGO_SECURE. Behind a proxy that
# ends TLS, DJANGO_SECURE_PROXY_SSL_HEADER names the header it sets (only a proxy you run may set it).
SECURE = env_bool("DJANGO_SECURE", SITE_URL.startswith("https://"))
SECURE_PROXY_SSL_HEADER = proxy_ssl_header(
    "DJANGO_SECURE_PROXY_SSL_HEADER", ENV.raw("DJANGO_SECURE_PROXY_SSL_HEADER")
)
SECURE_SSL_REDIRECT = SECURE
# Behind a reverse proxy every request comes from the proxy's address. DJANGO_CLIENT_IP_HEADER names the
# header the proxy puts the client's address in, and DJANGO_TRUSTED_PROXY_COUNT how many proxies (each
# appending the address it saw) stand in front: the client is that many entries from the right, so whatever
# a client wrote into the header itself is never read. Unset, the header is ignored (any client can send
# one) and the address is Django's REMOTE_ADDR. Read by memos.security.client_ip (the login and
# password-reset throttles).
CLIENT_IP_HEADER = client_ip_header("DJANGO_CLIENT_IP_HEADER", os.environ.get("DJANGO_CLIENT_IP_HEADER", ""))
TRUSTED_PROXY_COUNT = env_int("DJANGO_TRUSTED_PROXY_COUNT", 1)
if not 1 <= TRUSTED_PROXY_COUNT <= 10:
    raise ImproperlyConfigured("DJANGO_TRUSTED_PROXY_COUNT must be between 1 and 10")
SESSION_COOKIE_SECURE = SECURE
CSRF_COOKIE_SECURE = SECURE
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 31_536_000) if SECURE else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
# Asking browsers to preload HSTS for the whole domain is its owner's decision, not this app's: the deploy
# check's reminder about it (W021) is silenced unless DJANGO_HSTS_PRELOAD turns preload on.
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_rq",
    "axes",
    "memos",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "memos.security.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: it turns a refused login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

# Server-Timing on every response (memos.server_timing): the load benchmark's server turns it on.
SERVER_TIMING = env_bool("SERVER_TIMING", False)
if SERVER_TIMING:
    MIDDLEWARE.insert(0, "memos.server_timing.ServerTimingMiddleware")

ROOT_URLCONF = "agency.urls"
WSGI_APPLICATION = "agency.wsgi.application"
ASGI_APPLICATION = "agency.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": database_from_url(env_str("DATABASE_URL", "postgres://postgres@127.0.0.1:5433/analyst_desk"))
}
# The application connects as DATABASE_URL's role, which scripts/run.sh makes a role that may only read and
# write rows (memos.database_roles); `manage.py migrate` connects as the tables' owner, DATABASE_OWNER_URL,
# when it is set (memos/management/commands/migrate.py). run.sh hands it to migrate alone.
DATABASE_OWNER = owner_credentials(DATABASES["default"], os.environ.get("DATABASE_OWNER_URL", ""))
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:6380/0")
check_redis_url(REDIS_URL)
# "default": people's runs; "scheduled": the desk's own work (memos.pipeline.driver), which only the workers
# started for it take, after any person's job (scripts/run.sh).
RQ_QUEUES = {name: {"URL": REDIS_URL, "DEFAULT_TIMEOUT": 3600} for name in ("default", "scheduled")}
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        # redis-py 8 gives every read a 5 s timeout by default, as long as channels-redis's blocking pop
        # (brpop_timeout, 5 s): on an idle socket the read could time out first and end the consumer (seen
        # under load: 42 of 100 run-page sockets closed). A read waits longer than the pop, never forever.
        "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 15}]},
    }
}
# Values computed from rows or files that do not change (a snapshot's price ranges, a finished step's
# document): in Redis, so every web process shares one copy. Keys name the content they were made from.
CACHES = {
    "default": {
        "BACKEND": "memos.cache_backend.DeskRedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "desk",
        "TIMEOUT": 24 * 3600,  # content-keyed entries are never wrong, only unused: let them go after a day
        # Signed with the secret key: pages mark some entries safe, so none is read that the desk did not
        # write (memos.cache_signing).
        "OPTIONS": {"serializer": "memos.cache_signing.SignedSerializer"},
    }
}

# Web server processes (agency.serve, which scripts/run.sh starts). Each serves pages and sockets; the channel
# layer carries live events between them; the sockets of one process share one batched access re-check per
# run (memos.views.socket_access). One a core (two at least, so one long answer never holds every page): a
# page costs 2-3 ms of CPU, and with more processes than cores, 50 readers arriving in the same instant
# queued for the cores behind each other's processes (p95 96-151 ms with 4 on 2 cores, 70-139 ms with 2, in
# the same rounds; staggered readers, live updates and PDF downloads as fast or faster: README, Performance,
# pages).
WEB_WORKERS = env_int("WEB_WORKERS", max(2, min(8, len(os.sched_getaffinity(0)))))
if not 1 <= WEB_WORKERS <= 64:
    raise ImproperlyConfigured("WEB_WORKERS must be between 1 and 64")
# agency.serve marks its processes: each keeps a few database connections open in a pool, so a page does not
# pay for a new PostgreSQL backend (measured: 12 of the run page's 14 ms of PostgreSQL CPU). Everything else
# keeps the short-lived connections above: an RQ worker forks a work-horse per job, and a pool does not
# survive a fork.
if env_bool("ADESK_WEB_SERVER", False):
    DATABASES["default"]["OPTIONS"] = {"pool": {"min_size": 1, "max_size": 4, "timeout": 10}}
# Renders a web process runs at once (a version frozen before its files were kept, a run's slide thumbnails):
# each takes a core for up to a second or two, so one each keeps the other processes' pages answering while
# PDFs are drawn (memos.services.render_slots). A request waits for its turn up to
# RENDER_WAIT_SECONDS, holding no database connection, then is answered 503 with Retry-After.
RENDERS_PER_PROCESS = env_int("RENDERS_PER_PROCESS", 1)
# SEC's answers kept byte for byte per URL (memos.pipeline.raw_responses): the newest this many, 1 at least.
RAW_RESPONSES_PER_URL = env_int("RAW_RESPONSES_PER_URL", 3)
if not 1 <= RENDERS_PER_PROCESS <= 16:
    raise ImproperlyConfigured("RENDERS_PER_PROCESS must be between 1 and 16")
RENDER_WAIT_SECONDS = env_int("RENDER_WAIT_SECONDS", 30)
if not 1 <= RENDER_WAIT_SECONDS <= 600:
    raise ImproperlyConfigured("RENDER_WAIT_SECONDS must be between 1 and 600")

TESTING = env_bool("ANALYST_DESK_TESTING", False)
if TESTING:
    # Tests create many users; the production hasher's deliberate slowness buys nothing there.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
# Login throttling (django-axes): AXES_FAILURE_LIMIT wrong passwords for one username from one address lock
# that pair out for the cool-off. Attempts live in the database, so every web process sees the same count.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "memos.security.lockout_response"
# The client's address as the proxy settings above say (REMOTE_ADDR without a proxy), not the proxy's.
AXES_CLIENT_IP_CALLABLE = "memos.security.client_ip"
if AXES_FAILURE_LIMIT < 1 or AXES_COOLOFF_TIME.total_seconds() <= 0:
    raise ImproperlyConfigured("LOGIN_FAILURE_LIMIT and LOGIN_COOLOFF_MINUTES must be at least 1")

# Password reset (memos.services.password_resets): requests per client address, per e-mail address typed
# from one client address, and per e-mail address from every address (those sent), within the window,
# whether or not an account has that address.
PASSWORD_RESET_PER_ADDRESS = env_int("PASSWORD_RESET_PER_ADDRESS", 5)
PASSWORD_RESET_PER_ACCOUNT = env_int("PASSWORD_RESET_PER_ACCOUNT", 3)
PASSWORD_RESET_PER_ACCOUNT_ALL = env_int("PASSWORD_RESET_PER_ACCOUNT_ALL", 10)
PASSWORD_RESET_WINDOW_MINUTES = env_int("PASSWORD_RESET_WINDOW_MINUTES", 60)
if (
    min(
        PASSWORD_RESET_PER_ADDRESS,
        PASSWORD_RESET_PER_ACCOUNT,
        PASSWORD_RESET_PER_ACCOUNT_ALL,
        PASSWORD_RESET_WINDOW_MINUTES,
    )
    < 1
):
    raise ImproperlyConfigured(
        "PASSWORD_RESET_PER_ADDRESS, PASSWORD_RESET_PER_ACCOUNT, PASSWORD_RESET_PER_ACCOUNT_ALL and "
        "PASSWORD_RESET_WINDOW_MINUTES must be at least 1"
    )

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "var" / "static"

# Notices are e-mailed through SMTP once EMAIL_HOST names a mail server; without one (the embedded default)
# they are printed by the console backend and still listed in the app.
EMAIL_BACKEND = env_str(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend"
    if "EMAIL_HOST" in os.environ
    else "django.core.mail.backends.console.EmailBackend",
)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
# Send a notice's e-mail in the committing thread instead of the background sender (tests that read the mail).
NOTICES_SEND_INLINE = env_bool("NOTICES_SEND_INLINE", False)
# Print a frozen version's PDFs in the committing thread instead of the process's printer thread, which
# prints them off the run's path (memos.services.version_files). On under test: a test reads the files the
# run it ran made; the printer's own tests turn it off.
PRINT_INLINE = env_bool("PRINT_INLINE", TESTING)
EMAIL_HOST = env_str("EMAIL_HOST", "127.0.0.1")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = ENV.raw("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "analyst-desk@localhost")

# Data sources: "snapshot" reads the bundled real-data files, "live" asks SEC EDGAR and friends.
DATA_MODE = env_str("DATA_MODE", "snapshot")
if DATA_MODE not in {"snapshot", "live"}:
    raise ImproperlyConfigured(f"DATA_MODE must be 'snapshot' or 'live', got {DATA_MODE!r}")
SNAPSHOT_DIR = Path(env_str("SNAPSHOT_DIR", str(BASE_DIR / "data" / "snapshot")))
# SEC asks every client to declare who it is: https://www.sec.gov/os/accessing-edgar-data
SEC_USER_AGENT = env_str("SEC_USER_AGENT", "Analyst Desk (self-hosted) admin@localhost")
SEC_MAX_REQUESTS_PER_SECOND = env_int("SEC_MAX_REQUESTS_PER_SECOND", 10)
if not 1 <= SEC_MAX_REQUESTS_PER_SECOND <= 10:
    raise ImproperlyConfigured("SEC_MAX_REQUESTS_PER_SECOND must be between 1 and 10 (SEC fair-access limit)")
# Live mode: how old a watched company's SEC figures may get before the scheduler's tick refreshes them.
DATA_REFRESH_HOURS = env_int("DATA_REFRESH_HOURS", 24)
if DATA_REFRESH_HOURS < 1:
    raise ImproperlyConfigured("DATA_REFRESH_HOURS must be at least 1")

try:
    LLM_SETTINGS = load_llm_settings(os.environ)
except ConfigError as exc:
    raise ImproperlyConfigured(str(exc)) from exc
check_llm_endpoints(LLM_SETTINGS, ENV)
# Seed 003: a verdict comes from another model family than the work it judges. Off, a verdict of the work's
# own family is badged wherever it is shown (the embedded default runs every role on one model); on, such a
# run is refused before it starts (memos.pipeline.judge_families). Meant for hosted use with LLM_JUDGE_MODEL.
REQUIRE_SEPARATE_JUDGE = env_bool("REQUIRE_SEPARATE_JUDGE", False)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # axes logs each start-up and every attempt at INFO; failures and lockouts are WARNING and stay.
    # WeasyPrint logs each step of a render at INFO.
    "loggers": {
        "httpx2": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "axes": {"level": "WARNING"},
        "weasyprint": {"level": "WARNING"},
        "fontTools": {"level": "WARNING"},
    },
}

# The run engine: worker liveness.
RUN_HEARTBEAT_S = env_int("RUN_HEARTBEAT_S", 10)
RUN_STALE_AFTER_S = env_int("RUN_STALE_AFTER_S", 60)
if not 1 <= RUN_HEARTBEAT_S < RUN_STALE_AFTER_S:
    raise ImproperlyConfigured("RUN_HEARTBEAT_S must be at least 1 and below RUN_STALE_AFTER_S")
# A stage that keeps failing (or whose worker keeps dying) ends the run after this many claims.
RUN_MAX_STAGE_ATTEMPTS = env_int("RUN_MAX_STAGE_ATTEMPTS", 3)
if not 1 <= RUN_MAX_STAGE_ATTEMPTS <= 20:
    raise ImproperlyConfigured("RUN_MAX_STAGE_ATTEMPTS must be between 1 and 20")
# How long a stage waits for PostgreSQL to come back before giving up on a write (a paid LLM answer).
RUN_DB_OUTAGE_S = env_int("RUN_DB_OUTAGE_S", 120)
if RUN_DB_OUTAGE_S < 1:
    raise ImproperlyConfigured("RUN_DB_OUTAGE_S must be at least 1 (seconds)")
# Runs one person may have queued or running at once: one analyst cannot occupy every worker.
RUN_MAX_ACTIVE_PER_USER = env_int("RUN_MAX_ACTIVE_PER_USER", 3)
# Live pages (run and version pages' sockets) one person may hold open at once, across the web processes:
# a tab too many is told so instead of taking a socket from everyone else (memos.live.sockets).
SOCKETS_PER_USER = env_int("SOCKETS_PER_USER", 20)
if SOCKETS_PER_USER < 1:
    raise ImproperlyConfigured("SOCKETS_PER_USER must be at least 1")
# Each workflow's own settings, declared in its package (<package>/settings.py: its variables, their defaults
# and checks; memos.pipeline.workflow_settings), by package. The workflow reads its own back, typed.
WORKFLOW_SETTINGS: dict[str, object] = _read(
    lambda: load_workflow_settings(
        PACKAGES, os.environ, Desk(testing=TESTING, data_mode=DATA_MODE, base_dir=BASE_DIR)
    )
)
# In live mode, the screen's news analyst and the daily refresh also ask a search API that answers in RSS
# 2.0, at this URL template with a {query} placeholder (https, a fixed host: the fetcher reaches that host
# only); "" for none. Its key, if it takes one, is SCREEN_SEARCH_KEY, sent in the SCREEN_SEARCH_KEY_HEADER
# header of every request: never in the URL, which errors, status lines and logs quote (by host and path).
SCREEN_SEARCH_URL = env_str("SCREEN_SEARCH_URL", "") if DATA_MODE == "live" else ""
SCREEN_SEARCH_KEY = ENV.raw("SCREEN_SEARCH_KEY") if DATA_MODE == "live" else ""
SCREEN_SEARCH_KEY_HEADER = env_str("SCREEN_SEARCH_KEY_HEADER", "X-Api-Key")
if not re.fullmatch(r"[A-Za-z0-9-]{1,64}", SCREEN_SEARCH_KEY_HEADER):
    raise ImproperlyConfigured(
        f"SCREEN_SEARCH_KEY_HEADER must be an HTTP header name (letters, digits, '-'), got "
        f"{SCREEN_SEARCH_KEY_HEADER!r}"
    )
if SCREEN_SEARCH_URL and re.search(r"(?i)[?&][^=&]*(key|token|secret)[^=&]*=", SCREEN_SEARCH_URL):
    raise ImproperlyConfigured(
        "SCREEN_SEARCH_URL carries a key in its query: give it as SCREEN_SEARCH_KEY instead (sent as a "
        "header, never quoted by an error)"
    )
# Who the desk says it is to a source other than SEC (a price provider, a search API): no contact address,
# which is SEC's requirement and only SEC's business.
DESK_USER_AGENT = "Analyst Desk (self-hosted)"
