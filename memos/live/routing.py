from django.urls import path

from memos.live.runs import RunConsumer
from memos.live.versions import VersionConsumer

websocket_urlpatterns = [
    path("ws/runs/<uuid:run_id>/", RunConsumer.as_asgi()),
    path("ws/versions/<int:version_id>/", VersionConsumer.as_asgi()),
]
