"""The one redaction pass: secrets never leave capdoctor, in any renderer, report, log line or error message.

Applied once, at the boundary (the report is redacted before any renderer sees it; error messages before they
are printed). It removes: API keys by shape (every provider's key prefixes from the catalogue — `sk-…`,
`sk-ant-…`, `sk-proj-…`, `AIza…`, OpenRouter `sk-or-…` — and GitHub/HF/Slack-style tokens), bearer/basic
credentials, the values of secret-bearing headers and JSON fields (Authorization, x-api-key, api-key, cookie,
set-cookie, proxy-authorization, x-goog-api-key…), URL userinfo and secret query parameters, and any exact
secret value the caller knows (the key read from the environment). It also shortens the user's home directory to
`~`, since support reports are shared.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "<redacted>"

SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
        "x-auth-token",
        "x-access-token",
        "openai-api-key",
        "anthropic-api-key",
        "x-openai-api-key",
        "api_key",
        "apikey",
        "access_token",
        "refresh_token",
        "id_token",
        "token",
        "password",
        "secret",
        "client_secret",
        "auth_token",
        "session_token",
    }
)
"""Header and field names whose *value* is always secret, whatever it looks like (compared lower-case)."""


def _provider_key_shapes() -> tuple[str, ...]:
    """Every provider's key prefixes (the catalogue's `key_prefixes`) followed by key characters; a short prefix
    (`sk-`, `AIza`, `gsk_`) needs a longer tail, so that prose is not mistaken for a key."""
    from capdoctor.providers.catalog import adapters

    prefixes = sorted({p for a in adapters() for p in a.key_prefixes}, key=len, reverse=True)
    return tuple(re.escape(p) + (r"[A-Za-z0-9_\-]{8,}" if len(p) > 4 else r"[A-Za-z0-9_\-]{16,}") for p in prefixes)


_KEY_SHAPES = (
    *_provider_key_shapes(),
    r"sk-(?:live|test)-[A-Za-z0-9_\-]{8,}",
    r"gh[pousr]_[A-Za-z0-9]{20,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"hf_[A-Za-z0-9]{20,}",
    r"xox[abprs]-[A-Za-z0-9\-]{10,}",
    r"eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{5,}",  # JWTs (OAuth access tokens)
)
_KEY_RE = re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(_KEY_SHAPES) + r")")
# A credential after an auth scheme has a digit in it; "basic authentication" is prose, not a secret.
_SCHEME_RE = re.compile(r"\b(Bearer|Basic)\s+(?=[A-Za-z._~+/=\-]*\d)[A-Za-z0-9._~+/=\-]{6,}", re.IGNORECASE)
_names = "|".join(re.escape(h) for h in sorted(SECRET_HEADERS, key=len, reverse=True))
# `Authorization: xyz`, `"x-api-key": "xyz"`, `api_key=xyz`, `'cookie': 'a=b; c=d'`
_FIELD_RE = re.compile(
    r"(?P<name>[\"']?(?:" + _names + r")[\"']?)(?P<sep>\s*[:=]\s*)"
    r"(?P<value>\"[^\"]*\"|'[^']*'|(?:(?:Bearer|Basic|Token)\s+)?[^\s,;}&\"']+(?:;\s*[^\s,;}&\"']+=[^\s,;}&\"']*)*)",
    re.IGNORECASE,
)
_FIELD_WORDS = tuple(sorted(n for n in SECRET_HEADERS if not any(m != n and m in n for m in SECRET_HEADERS)))
"""The secret names that hold no other (`token` is in `x-auth-token`): an ASCII text in which none stands, caseless,
names no secret field (`_may_name_field`)."""
_USERINFO_RE = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.\-]*://)(?P<userinfo>[^/\s:@]+(?::[^/\s@]*)?)@")
_URL_USERINFO_RE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*://)[^/@\s]*@")
_QUERY_SECRET_RE = re.compile(
    r"(?P<name>[?&](?:key|api[_-]?key|token|access_token|auth|sig|signature|password|secret)=)[^&#\s\"']+",
    re.IGNORECASE,
)


def redact_url(url: str) -> str:
    """`url` (stripped) with its userinfo masked: `http://user:pw@host:8080/x` → `http://<redacted>@host:8080/x`.

    Narrower than `redact_text` because the reader needs the scheme, host and port (which proxy is dead?): only
    the userinfo goes, however it is shaped (an empty user, a colon in the password).
    """
    return _URL_USERINFO_RE.sub(rf"\g<1>{MASK}@", url.strip())


def _mask_field(match: re.Match[str]) -> str:
    value = match.group("value")
    quote = value[0] if value[:1] in ("'", '"') else ""
    return f"{match.group('name')}{match.group('sep')}{quote}{MASK}{quote}"


def _may_name_field(text: str) -> bool:
    """False only where `_FIELD_RE` cannot match: an ASCII text (where its caseless names match ASCII letters only)
    with no `:` or `=`, or none of the secret names (`_FIELD_WORDS`) in it. Why: that pattern, a caseless
    alternation with no fixed first character, is tried at every position; it was two thirds of the cost of
    redacting a log line (~11 of ~17 µs), paid for each of the hundreds of examples a dense log reports."""
    if not text.isascii():
        return True
    if ":" not in text and "=" not in text:
        return False
    low = text.lower()
    return any(word in low for word in _FIELD_WORDS)


def redact_text(text: str, secrets: Iterable[str] = (), home: str | None = None) -> str:
    """`text` with every secret masked; `secrets` are exact values to remove too; `home` becomes `~`."""
    for secret in sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    text = _USERINFO_RE.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
    if _may_name_field(text):
        text = _FIELD_RE.sub(_mask_field, text)
    text = _SCHEME_RE.sub(lambda m: f"{m.group(1)} {MASK}", text)
    text = _KEY_RE.sub(MASK, text)
    text = _QUERY_SECRET_RE.sub(lambda m: f"{m.group('name')}{MASK}", text)
    if home and len(home) > 1:
        text = re.sub(re.escape(home.rstrip("/\\")) + r"(?=[/\\]|$|\W)", "~", text)
    return text


def redact(obj: Any, secrets: Iterable[str] = (), home: str | None = None) -> Any:
    """A deep copy of `obj` (dicts, lists, tuples, strings) with every string redacted.

    Mapping entries whose key names a secret header or field lose their value entirely, whatever its shape.
    """
    secret_list = tuple(secrets)

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return redact_text(value, secret_list, home)
        if isinstance(value, Mapping):
            return {
                k: (
                    MASK
                    if isinstance(k, str) and k.lower() in SECRET_HEADERS and value[k] not in (None, "", False)
                    else walk(v)
                )
                for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        return value

    return walk(obj)


def contains_secret(text: str, secrets: Iterable[str] = ()) -> bool:
    """True when `text` holds one of `secrets` (exact values) or a key- or bearer-shaped credential.

    For checking generated files, where masking would break the file: `api_key: os.environ/VAR` is a field
    name with a variable reference, not a secret, so the field-name rule of `redact_text` does not apply.
    """
    if any(s in text for s in secrets if s and len(s) >= 6):
        return True
    return bool(_KEY_RE.search(text) or _SCHEME_RE.search(text))
