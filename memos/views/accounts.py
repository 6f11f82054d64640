"""Django's password reset, with its link built from SITE_URL and its requests throttled.

Django's own view writes the link with the request's Host header, which the client chose (ALLOWED_HOSTS
narrows it, but a site may answer to several names, or to any behind a proxy). Here the link's scheme and
host are SITE_URL's, and memos.services.password_resets counts the request first.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.views import PasswordResetView
from django.http import HttpResponse, HttpResponseRedirect

from memos.security import client_ip
from memos.services.errors import ServiceError
from memos.services.password_resets import record_request


class SitePasswordResetView(PasswordResetView):
    def form_valid(self, form: Any) -> HttpResponse:
        try:
            record_request(address=client_ip(self.request), email=form.cleaned_data["email"])
        except ServiceError as refused:
            form.add_error(None, str(refused))
            return self.render_to_response(self.get_context_data(form=form), status=429)
        site = urlsplit(settings.SITE_URL)
        form.save(
            domain_override=site.netloc,
            use_https=site.scheme == "https",
            token_generator=self.token_generator,
            from_email=self.from_email,
            email_template_name=self.email_template_name,
            subject_template_name=self.subject_template_name,
            request=self.request,
            html_email_template_name=self.html_email_template_name,
            extra_email_context=self.extra_email_context,
        )
        return HttpResponseRedirect(self.get_success_url())
