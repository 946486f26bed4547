"""mailer: settings checks, the MIME layout, error text without secrets (no server needed)."""

from __future__ import annotations

import base64
import smtplib
from dataclasses import replace

import pytest

from config.settings import SmtpSettings
from digest.mailer import SmtpConfigError, build_message, check_settings, describe, scrub
from digest.render import InlineImage, RenderedDigest

SMTP = SmtpSettings(
    host="smtp.gpuplan.test",
    port=587,
    security="starttls",
    user="digest",
    password="s3cret-Pa55",
    sender="GPU 价格日报 <digest@gpuplan.test>",
    recipients=("ops@gpuplan.test", "lead@gpuplan.test"),
)

CONFIG_CASES = {
    "no host": ({"host": None}, "GPUPLAN_SMTP_HOST"),
    "no sender": ({"sender": None}, "GPUPLAN_SMTP_FROM"),
    "no recipients": ({"recipients": ()}, "GPUPLAN_SMTP_TO"),
    "unknown security": ({"security": "tls"}, "GPUPLAN_SMTP_SECURITY is 'tls'"),
    "user without password": ({"password": None}, "GPUPLAN_SMTP_PASSWORD"),
}


@pytest.mark.parametrize("change, named", CONFIG_CASES.values(), ids=CONFIG_CASES.keys())
def test_check_settings_names_what_is_wrong(change, named):
    with pytest.raises(SmtpConfigError, match=named):
        check_settings(replace(SMTP, **change))


def test_complete_settings_pass():
    check_settings(SMTP)
    check_settings(replace(SMTP, user=None, password=None, security="none"))


def test_message_is_alternative_text_then_related_html_with_the_image():
    rendered = RenderedDigest(
        subject="gpuplan 2026-12-01: 1 plan change, 矩池云",
        html='<html><body><p>矩池云</p><img src="cid:chart@gpuplan"></body></html>',
        text="矩池云\n",
        images=(InlineImage(cid="chart@gpuplan", png=b"\x89PNG\r\n\x1a\nsynthetic", filename="chart.png"),),
    )
    message = build_message(rendered, SMTP, "<fixed-id@gpuplan.test>")
    assert message.get_content_type() == "multipart/alternative"
    text, related = message.iter_parts()
    assert text.get_content_type() == "text/plain"
    assert [part.get_content_type() for part in related.iter_parts()] == ["text/html", "image/png"]
    assert message["Message-ID"] == "<fixed-id@gpuplan.test>"
    assert message["Auto-Submitted"] == "auto-generated"
    raw = message.as_bytes()
    raw.decode("ascii")  # 7-bit on the wire: UTF-8 bodies and headers are encoded
    assert "矩池云" not in raw.decode("ascii")


def test_scrub_removes_the_password_in_clear_and_in_auth_encodings():
    plain = base64.b64encode(b"\0digest\0s3cret-Pa55").decode()
    login = base64.b64encode(b"s3cret-Pa55").decode()
    text = f"535 bad credentials s3cret-Pa55 / AUTH PLAIN {plain} / AUTH LOGIN {login}"
    scrubbed = scrub(text, SMTP)
    assert "s3cret" not in scrubbed and plain not in scrubbed and login not in scrubbed
    assert scrubbed == "535 bad credentials *** / AUTH PLAIN *** / AUTH LOGIN ***"


def test_describe_gives_the_server_reply_on_one_line_without_the_password():
    refused = smtplib.SMTPRecipientsRefused({"nobody@gpuplan.test": (550, b"5.1.1 no such user")})
    assert describe(refused, SMTP) == (
        "SMTPRecipientsRefused: all recipients refused: nobody@gpuplan.test: 550 5.1.1 no such user"
    )
    auth = smtplib.SMTPAuthenticationError(535, b"5.7.8 rejected digest/s3cret-Pa55\r\ntry again")
    assert describe(auth, SMTP) == "SMTPAuthenticationError: 535 5.7.8 rejected digest/*** try again"
