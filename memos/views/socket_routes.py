from django.urls import path

from memos.views.run_socket import RunConsumer
from memos.views.version_socket import VersionConsumer

websocket_urlpatterns = [
    path("ws/runs/<uuid:run_id>/", RunConsumer.as_asgi()),
    path("ws/versions/<int:version_id>/", VersionConsumer.as_asgi()),
]
