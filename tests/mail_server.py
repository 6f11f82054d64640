"""A real SMTP server on loopback (aiosmtpd) that keeps what it receives, or refuses every recipient, for
tests that read the mail; and a mail server that never answers."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from typing import Any

from aiosmtpd.controller import Controller
from django.test import override_settings

from tests.private_services import free_port


@dataclass
class Inbox:
    messages: list[Message] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    refusing: bool = False  # answer every recipient 550, as a server that will not take the mail
    refused: list[str] = field(default_factory=list)  # each recipient refused, once per attempt

    async def handle_RCPT(  # noqa: N802 - aiosmtpd's name
        self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: list[str]
    ) -> str:
        with self.lock:
            if self.refusing:
                self.refused.append(address)
                return f"550 5.1.1 <{address}>: mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's name
        message = message_from_bytes(envelope.original_content)
        message["X-Envelope-To"] = ", ".join(envelope.rcpt_tos)
        with self.lock:
            self.messages.append(message)
        return "250 Message accepted for delivery"

    def to(self, address: str) -> list[Message]:
        with self.lock:
            return [m for m in self.messages if address in m["X-Envelope-To"]]

    def subjects(self) -> list[str]:
        with self.lock:
            return [str(m["Subject"]) for m in self.messages]


@contextmanager
def smtp_inbox(*, inline: bool = True, refusing: bool = False) -> Iterator[Inbox]:
    """An SMTP server on 127.0.0.1 and the desk's settings pointed at it."""
    inbox = Inbox(refusing=refusing)
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        with override_settings(
            EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
            EMAIL_HOST="127.0.0.1",
            EMAIL_PORT=port,
            EMAIL_USE_TLS=False,
            EMAIL_HOST_USER="",
            EMAIL_HOST_PASSWORD="",
            NOTICES_SEND_INLINE=inline,
        ):
            yield inbox
    finally:
        controller.stop()


@contextmanager
def silent_mail_server() -> Iterator[int]:
    """The port of a mail server that takes the connection and never says a word: its greeting never comes,
    so a sender waits until its own timeout. Closing it resets the connections still waiting."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)  # the kernel completes the connections; nobody ever accepts them
    try:
        yield int(listener.getsockname()[1])
    finally:
        listener.close()
