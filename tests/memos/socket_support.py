"""What the WebSocket tests share."""

from __future__ import annotations

from channels.testing import WebsocketCommunicator


async def refused(socket: WebsocketCommunicator) -> tuple[bool, int | None]:
    """Try to connect; then end the exchange, as a browser does. A refused socket's application (the origin
    check's denier, or the consumer) still listens on the channel layer until it hears the disconnect: left
    listening, its Redis read outlived the test and hung the loop's close (the version page's access test,
    300 s at its teardown under load)."""
    accepted, code = await socket.connect(timeout=5)
    await socket.disconnect()
    return accepted, code
