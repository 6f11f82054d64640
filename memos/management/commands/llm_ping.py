"""``manage.py llm_ping [--role ROLE]``: show which endpoint and model each role uses, then call each once."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from agents.llm.config import LLMSettings
from agents.llm.errors import LLMError
from agents.llm.gateway import LLMGateway
from agents.llm.ledger import InMemoryLedger
from agents.llm.limiter import ThreadLimiter
from agents.llm.ping import endpoints_by_role, ping
from agents.llm.prompts import load_prompt
from agents.llm.roles import ALL_ROLES

PING_PROMPT = "llm_ping.md"


class Command(BaseCommand):
    help = "Print each role's LLM endpoint and model (never the key), then make one real call per endpoint."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--role", choices=[str(role) for role in ALL_ROLES], help="check only this role")

    def handle(self, *args: Any, **options: Any) -> None:
        # Read at call time, so tests (and override_settings) decide which endpoints are pinged.
        llm: LLMSettings = settings.LLM_SETTINGS
        roles = [options["role"]] if options["role"] else [str(role) for role in ALL_ROLES]
        for role in roles:
            endpoint = llm.endpoint_for(role)
            self.stdout.write(f"{role:<13} {endpoint.base_url}  model={endpoint.model}")

        try:
            template = load_prompt(settings.BASE_DIR / "prompts" / PING_PROMPT)
        except LLMError as exc:
            self.stderr.write(f"llm_ping: {exc}")
            raise SystemExit(1) from exc
        failed = False
        with LLMGateway(llm, InMemoryLedger(), ThreadLimiter(llm.max_concurrency)) as gateway:
            for endpoint, endpoint_roles in endpoints_by_role(llm, roles).items():
                try:
                    result = ping(gateway, template, role=endpoint_roles[0])
                except LLMError as exc:
                    failed = True
                    self.stderr.write(f"llm_ping: {endpoint.base_url} (model {endpoint.model}) failed: {exc}")
                    continue
                self.stdout.write(
                    f"ok  {endpoint.base_url}  model={endpoint.model}  {result.latency_ms} ms  "
                    f"answer: status={result.answer.status} summary={result.answer.summary!r}"
                )
        if failed:
            raise SystemExit(1)
