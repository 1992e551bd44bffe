"""URLs the user gives capdoctor: checking them once, and joining a path onto a base URL.

Contract: `check_url(value, source)` names what is wrong with a URL the user gave, with where it came from, or
returns it stripped; `join(base, path)` puts `path` under `base` keeping the base's query and `root(base,
suffixes)` drops a trailing version segment, so a base with a query is joined as the SDKs join it:
`https://h/openai/v1?api-version=x` + `responses` → `https://h/openai/v1/responses?api-version=x`.

Pure, no httpx (start-up stays light). A URL that cannot be used is refused, never given a guessed scheme or host.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

SCHEMES = ("http", "https")

_BAD_CHARS = re.compile(r"[\x00-\x20\x7f-\x9f<>\"\\^`{|}]")
"""Characters no URL may hold raw: controls (CR/LF among them), blanks, and those RFC 3986 excludes.
`urlsplit` silently drops CR, LF and tab, so they are looked for before parsing."""

_NETLOC = re.compile(r"^(?:[^@]*@)?(?:\[[^\[\]]*\]|[^:\[\]]*)(?::\d*)?$")
"""userinfo@, then a host (bracketed for IPv6), then :port: `urlsplit` alone ignores what follows a `]`."""

_HOST_NAME = re.compile(r"^(?!-)[A-Za-z0-9_-]{1,63}(?<!-)(?:\.(?!-)[A-Za-z0-9_-]{1,63}(?<!-))*\.?$")


def url_problem(value: str) -> str | None:
    """Why `value` is not a usable http(s) URL (a phrase), or None when it is one."""
    text = value.strip()
    if not text:
        return "is empty"
    bad = _BAD_CHARS.search(text)
    if bad:
        return f"contains {_char_name(bad.group())}"
    try:
        parts = urlsplit(text)
        port = parts.port  # ValueError for a port that is not a number or above 65535
        host = parts.hostname
    except ValueError as exc:
        return f"is not a valid URL ({exc})"
    if parts.scheme.lower() not in SCHEMES:
        return "must start with http:// or https://"
    if not _NETLOC.match(parts.netloc):
        return f"has an invalid host and port ({parts.netloc!r})"
    if not host:
        return "has no host"
    if port == 0:
        return "has port 0"
    if ":" in host:
        return None  # an IPv6 literal: urlsplit has checked the brackets and ipaddress the form
    ascii_host = _ascii_host(host)
    if ascii_host is None:
        return f"has a host name that cannot be encoded ({host!r})"
    if not _HOST_NAME.match(ascii_host):
        return f"has an invalid host name ({host!r})"
    return None


def _ascii_host(host: str) -> str | None:
    """`host` as the ASCII name a request uses (IDNA 2008, as httpx encodes it), or None when it has none."""
    if host.isascii():
        return host
    try:
        import idna  # httpx's own dependency: the same rules as the requests that follow

        return str(idna.encode(host.lower()).decode("ascii"))
    except ImportError:  # pragma: no cover - idna comes with httpx
        try:
            return host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    except (idna.IDNAError, UnicodeError):
        return None


def _char_name(ch: str) -> str:
    names = {"\r": "a carriage return (CR)", "\n": "a line feed (LF)", "\t": "a tab", " ": "a space"}
    return names.get(ch, f"the character {ch!r}")


def check_url(value: str, source: str, what: str = "URL") -> str:
    """`value` stripped, or `ValueError` with one line naming the value and its source.

    The message reads `base URL 'http://[::1' (flag --base-url) is not a valid URL (Invalid IPv6 URL)`.
    """
    problem = url_problem(value)
    if problem is not None:
        raise ValueError(f"{what} {value!r} ({source}) {problem}")
    return value.strip()


def join(base: str, path: str) -> str:
    """`path` under `base` with exactly one slash between them; the base's query is kept, its fragment dropped.

    `join("https://h/v1?api-version=x", "chat/completions")` → `https://h/v1/chat/completions?api-version=x`.
    A `path` with its own query (`models?limit=1`) has it appended after the base's.
    """
    parts = urlsplit(base)
    sub, _, sub_query = path.partition("?")
    new_path = parts.path.rstrip("/") + "/" + sub.lstrip("/")
    query = "&".join(q for q in (parts.query, sub_query) if q)
    return urlunsplit((parts.scheme, parts.netloc, new_path, query, ""))


def root(base: str, suffixes: tuple[str, ...] = ("/v1",)) -> str:
    """`base` without a trailing `suffixes` segment (the first that matches), query kept, no trailing slash.

    `root("https://api.anthropic.com/v1/")` → `https://api.anthropic.com`.
    """
    parts = urlsplit(base)
    path = parts.path.rstrip("/")
    for suffix in suffixes:
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def without_query(url: str) -> str:
    """`url` without userinfo, query and fragment: what may travel to a third party or into a report."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
