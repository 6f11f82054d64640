"""The password-reset throttle: requests counted per client address, per e-mail address typed from that
address, and per e-mail address from every address.

A visitor who types e-mail addresses makes the desk send mail: unthrottled, one address could flood an
inbox or walk a list of addresses. Each request is recorded before it is counted, and the counts do not
depend on whether an account has that e-mail address, so the answer tells nothing about who has one.

The e-mail address's own limit is counted per client address (``PASSWORD_RESET_PER_ACCOUNT``): a stranger
who asks for someone's reset over and over uses up the stranger's share, not its owner's, who still gets a
link from their own address. Across addresses only requests that were sent count
(``PASSWORD_RESET_PER_ACCOUNT_ALL``): that bounds the mail one inbox gets from many places, and a refused
flood adds nothing to it.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from django.utils.crypto import salted_hmac

from memos.models import PasswordResetRequest
from memos.services.errors import ServiceError

_KEY_SALT = "memos.services.password_resets"


def record_request(*, address: str, email: str) -> None:
    """Count one request; ServiceError, with what a person reads, when the address or the e-mail address
    has asked more often than the settings allow within the window (the refused request counts too).

    Not in a transaction on purpose: each row is committed before the counts are read, so two requests at
    the same moment each see the other, and at the limit both are refused rather than both sent."""
    window = timedelta(minutes=settings.PASSWORD_RESET_WINDOW_MINUTES)
    now = timezone.now()
    PasswordResetRequest.objects.filter(requested_at__lt=now - window).delete()
    row = PasswordResetRequest.objects.create(
        address_key=_key("address", address),
        account_key=_key("account", email.strip().lower()),
        requested_at=now,
    )
    recent = PasswordResetRequest.objects.filter(requested_at__gte=now - window)
    again = f"Try again in {settings.PASSWORD_RESET_WINDOW_MINUTES} minutes."
    problem = ""
    if recent.filter(address_key=row.address_key).count() > settings.PASSWORD_RESET_PER_ADDRESS:
        problem = f"Too many password reset requests from your address. {again}"
    elif (
        recent.filter(address_key=row.address_key, account_key=row.account_key).count()
        > settings.PASSWORD_RESET_PER_ACCOUNT
        or recent.filter(account_key=row.account_key, refused=False).count()
        > settings.PASSWORD_RESET_PER_ACCOUNT_ALL
    ):
        problem = f"Too many password reset requests for this e-mail address. {again}"
    if problem:
        PasswordResetRequest.objects.filter(pk=row.pk).update(refused=True)
        raise ServiceError(problem)


def _key(kind: str, value: str) -> str:
    return salted_hmac(f"{_KEY_SALT}.{kind}", value).hexdigest()
