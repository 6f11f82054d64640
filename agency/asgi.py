"""ASGI entry point: HTTP through Django (as WSGI, agency.wsgi_thread), WebSocket through Channels (login
checked per socket)."""

import gc
import os

from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.wsgi import get_wsgi_application

from agency.wsgi_thread import WsgiInOneThread

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agency.settings")
django_http_app = WsgiInOneThread(StaticFilesHandler(get_wsgi_application()))

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs Django set up first)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from memos.views.socket_routes import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_http_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

if os.environ.get("ADESK_WEB_SERVER") == "true":  # a process of agency.serve, not a test importing the app
    # What the imports made lives as long as the process: out of the collector's sight, a full collection
    # does not walk it again every few hundred requests (README, Performance: pages).
    gc.freeze()
