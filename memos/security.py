"""Headers every response carries, the client's address behind a proxy, and the page a throttled login sees.

Django 5.2 has no Content-Security-Policy support of its own (it arrives in 6.0, which needs Python 3.12),
and our policy is one fixed string: a dozen lines here instead of another dependency. The other headers
(X-Frame-Options, nosniff, Referrer-Policy, HSTS) come from Django's own middleware and settings.
"""

from __future__ import annotations

import ipaddress
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.template import engines
from django.utils.deprecation import MiddlewareMixin

# No inline script or style anywhere: the pages load static/js and static/css, and the Django admin (5.2)
# uses none either. django-rq's dashboard has two inline bits (a redundant actions init, a float rule);
# the browser drops them and the dashboard still works, so it gets no exception.
POLICY = (
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'{websocket}",
    "frame-ancestors 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "object-src 'none'",
)


def content_security_policy(request: HttpRequest) -> str:
    """The policy for one request. The run page's WebSocket goes to this same host; CSP 3 browsers count
    ws(s) to the page's own host as 'self', older ones need the origin spelled out."""
    try:
        host = request.get_host()
    except DisallowedHost:
        websocket = ""
    else:
        websocket = f" {'wss' if request.is_secure() else 'ws'}://{host}"
    return "; ".join(POLICY).format(websocket=websocket)


class ContentSecurityPolicyMiddleware(MiddlewareMixin):
    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = content_security_policy(request)
        return response


def client_ip(request: HttpRequest) -> str:
    """The address a request came from: REMOTE_ADDR, or behind the configured proxies
    (settings.CLIENT_IP_HEADER, TRUSTED_PROXY_COUNT) the entry the farthest trusted proxy appended. A
    header that holds fewer entries than there are proxies, or an entry that is not an address, did not
    come through them as configured: such a request counts as coming from its direct peer, so junk can
    only share the proxy's count, never start a fresh one. django-axes keys its lockouts on it
    (AXES_CLIENT_IP_CALLABLE)."""
    direct = str(request.META.get("REMOTE_ADDR", ""))
    header: str | None = settings.CLIENT_IP_HEADER
    if not header:
        return direct
    hops = [hop.strip() for hop in str(request.META.get(header, "")).split(",")]
    count: int = settings.TRUSTED_PROXY_COUNT
    if len(hops) < count:
        return direct
    try:
        return str(ipaddress.ip_address(hops[-count]))
    except ValueError:
        return direct


LOCKOUT_PAGE = """{% extends "base.html" %}
{% block title %}Too many login attempts · Analyst Desk{% endblock %}
{% block content %}
<section class="panel narrow">
  <h2>Too many login attempts</h2>
  <p class="error">This account is locked for {{ minutes }} minute{{ minutes|pluralize }}
  after {{ limit }} wrong passwords from your address. Try again after that; an admin can lift
  the lock sooner (Admin → Access attempts).</p>
  <p><a href="{% url 'login' %}">Back to the login page</a></p>
</section>
{% endblock %}
"""


def lockout_response(
    request: HttpRequest, original_response: object = None, credentials: object = None
) -> HttpResponse:
    """django-axes' AXES_LOCKOUT_CALLABLE: the site's own page, with status 429, instead of a bare line.
    (Axes passes its arguments in a different order on its async path, so they are not used.)"""
    cool_off: timedelta = settings.AXES_COOLOFF_TIME
    page = engines["django"].from_string(LOCKOUT_PAGE)
    context = {"minutes": int(cool_off.total_seconds() // 60), "limit": settings.AXES_FAILURE_LIMIT}
    return HttpResponse(page.render(context, request), status=429)
