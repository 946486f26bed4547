"""SMTP delivery of a rendered digest with an `SmtpConfig` (stdlib smtplib and EmailMessage).

The SMTP password is used for `login()` and nowhere else: it is never logged, and every error
text that leaves this module goes through `scrub()` first, so it cannot land in the warehouse.
"""

from __future__ import annotations

import base64
import logging
import smtplib
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.utils import formatdate, getaddresses
from typing import Protocol

from digest.render import RenderedDigest

log = logging.getLogger(__name__)

SECURITY_MODES = ("starttls", "ssl", "none")
# A stuck server must not hang the daily run; a healthy one answers each command within seconds.
SMTP_TIMEOUT_S = 30.0
# Always 7-bit transfer encodings (base64 / quoted-printable) for bodies: a relay without
# 8BITMIME would otherwise get raw UTF-8 (Chinese platform names) it may mangle.
MESSAGE_POLICY = policy.default.clone(cte_type="7bit")


class SmtpConfig(Protocol):
    """What sending needs to know about the SMTP server; the edge's settings object provides it.

    `security` is one of SECURITY_MODES; `password` is a secret (never logged or stored).
    """

    @property
    def host(self) -> str | None: ...
    @property
    def port(self) -> int: ...
    @property
    def security(self) -> str: ...
    @property
    def user(self) -> str | None: ...
    @property
    def password(self) -> str | None: ...
    @property
    def sender(self) -> str | None: ...
    @property
    def recipients(self) -> Sequence[str]: ...


class SmtpConfigError(ValueError):
    """The SMTP settings cannot send a mail (missing host, sender or recipients, bad mode)."""


@dataclass(frozen=True)
class Delivery:
    """What the server did with one message: addresses accepted and refused ('addr: code reply')."""

    accepted: tuple[str, ...]
    refused: tuple[str, ...]


def check_settings(smtp: SmtpConfig) -> None:
    """Raise SmtpConfigError naming every GPUPLAN_SMTP_* setting that is missing or wrong."""
    problems = []
    if not smtp.host:
        problems.append("GPUPLAN_SMTP_HOST is not set")
    if not smtp.sender:
        problems.append("GPUPLAN_SMTP_FROM is not set")
    if not smtp.recipients:
        problems.append("GPUPLAN_SMTP_TO is not set")
    if smtp.security not in SECURITY_MODES:
        problems.append(f"GPUPLAN_SMTP_SECURITY is {smtp.security!r}, not one of {', '.join(SECURITY_MODES)}")
    if smtp.user and not smtp.password:
        problems.append("GPUPLAN_SMTP_USER is set but GPUPLAN_SMTP_PASSWORD is not")
    if problems:
        raise SmtpConfigError("cannot send the digest: " + "; ".join(problems))


def build_message(rendered: RenderedDigest, smtp: SmtpConfig, message_id: str) -> EmailMessage:
    """multipart/alternative: text/plain, then text/html (inside multipart/related with its images).

    `message_id` (with angle brackets) is reused on a retry so a client can drop a duplicate.
    """
    message = EmailMessage(policy=MESSAGE_POLICY)
    message["Subject"] = rendered.subject
    message["From"] = smtp.sender
    message["To"] = ", ".join(smtp.recipients)
    message["Date"] = formatdate(usegmt=True)
    message["Message-ID"] = message_id
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation auto-replies to a report
    message.set_content(rendered.text)
    message.add_alternative(rendered.html, subtype="html")
    html_part = next(part for part in message.iter_parts() if part.get_content_type() == "text/html")
    assert isinstance(html_part, EmailMessage)
    for image in rendered.images:
        html_part.add_related(
            image.png, maintype="image", subtype="png", cid=f"<{image.cid}>", filename=image.filename
        )
    # RFC 3282, the catalogue the mail was written from; last: set_content() drops Content-* headers
    message["Content-Language"] = rendered.lang
    return message


def deliver(message: EmailMessage, smtp: SmtpConfig) -> Delivery:
    """Send `message` to its To addresses; raises smtplib/OS errors when nothing was accepted.

    Recipients refused one by one while others are accepted do not raise: they are returned.
    """
    check_settings(smtp)
    host = smtp.host or ""  # check_settings refuses a missing host
    context = ssl.create_default_context()
    if smtp.security == "ssl":
        client: smtplib.SMTP = smtplib.SMTP_SSL(host, smtp.port, timeout=SMTP_TIMEOUT_S, context=context)
    else:
        client = smtplib.SMTP(host, smtp.port, timeout=SMTP_TIMEOUT_S)
    # Never set_debuglevel(): smtplib's debug output prints the AUTH exchange, i.e. the password.
    with client:
        if smtp.security == "starttls":
            client.starttls(context=context)
        if smtp.user:
            if smtp.security == "none":
                log.warning(
                    "logging in to %s without TLS: the password crosses the network in clear", smtp.host
                )
            client.login(smtp.user, smtp.password or "")
        refused = client.send_message(message)
    addressed = [address for _, address in getaddresses(message.get_all("To", []))]
    return Delivery(
        accepted=tuple(address for address in addressed if address not in refused),
        refused=tuple(_refusal(address, reply) for address, reply in refused.items()),
    )


def describe(error: BaseException, smtp: SmtpConfig) -> str:
    """One line for the send record: the error type and the server's words, password scrubbed."""
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        detail = "all recipients refused: " + "; ".join(
            _refusal(address, reply) for address, reply in error.recipients.items()
        )
    elif isinstance(error, smtplib.SMTPResponseException):
        detail = f"{error.smtp_code} {_text(error.smtp_error)}"
    else:
        detail = str(error)
    return scrub(" ".join(f"{type(error).__name__}: {detail}".split()), smtp)


def scrub(text: str, smtp: SmtpConfig) -> str:
    """`text` with the password replaced by '***', also in the base64 forms AUTH LOGIN/PLAIN send."""
    if not smtp.password:
        return text
    secrets = [
        smtp.password,
        base64.b64encode(smtp.password.encode()).decode("ascii"),
        base64.b64encode(f"\0{smtp.user or ''}\0{smtp.password}".encode()).decode("ascii"),
    ]
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def _refusal(address: str, reply: tuple[int, bytes | str]) -> str:
    code, words = reply
    return f"{address}: {code} {_text(words)}"


def _text(words: bytes | str) -> str:
    return words.decode("utf-8", "replace") if isinstance(words, bytes) else words
