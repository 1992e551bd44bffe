"""Text that reaches a terminal or a stream: word-boundary cuts, inert control characters, any encoding."""

from __future__ import annotations

import io
import json

import pytest

from capdoctor.cli.streams import HANDLER, is_utf, protect
from capdoctor.render.json import dumps
from capdoctor.text import ASCII_FALLBACK, neutralise, neutralise_all, one_line, shorten, to_ascii

HOSTILE = "ok \x1b]0;PWNED\x07 \x1b[2J \x1b]52;c;ZWNobyBoaQ==\x07 \x9b31m \u202egnp.exe\u202c \r tail"


def test_shorten_cuts_at_a_word_boundary() -> None:
    text = "Please try again in 1s. Visit https://platform.openai.com/account/rate-limits to learn more."
    cut = shorten(text, 40)
    assert cut == "Please try again in 1s. Visit…" and len(cut) <= 40
    assert shorten("short", 40) == "short"
    assert shorten("x" * 50, 10) == "x" * 9 + "…"  # no boundary at all: cut all the same, still bounded


@pytest.mark.parametrize("width", range(6, 60, 7))
def test_shorten_never_ends_mid_word(width: int) -> None:
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    cut = shorten(" ".join(words), width)
    assert len(cut) <= width
    assert all(w in words for w in cut.rstrip("…").split()), cut


def test_neutralise_shows_escape_sequences_as_text() -> None:
    safe = neutralise(HOSTILE)
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u202e\u202c" for c in safe), safe
    assert "\\x1b]0;PWNED\\x07" in safe and "\\x9b" in safe and "\\u202e" in safe and "\\r" not in safe
    assert neutralise("line one\n\tline two") == "line one\n\tline two"  # layout characters are kept
    assert "\n" not in one_line("a\r\nb\n\nc") and one_line("a\r\nb") == "a b"
    assert neutralise_all({"k": [HOSTILE, 3, None]})["k"][0] == safe


def test_ascii_fallback_never_breaks_json_strings() -> None:
    assert '"' not in "".join(ASCII_FALLBACK.values()) and "\\" not in "".join(ASCII_FALLBACK.values())
    assert to_ascii("a — b → c ✓ █ 限") == "a - b -> c ok # ?"


def test_protected_stream_writes_ascii_instead_of_raising() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")
    assert not is_utf(stream)
    protect(stream)
    assert stream.errors == HANDLER
    stream.write("capdoctor 0.1.0 — HTTPS_PROXY → 127.0.0.1 [✓] 限流\n")
    stream.flush()
    assert raw.getvalue().decode("ascii") == "capdoctor 0.1.0 - HTTPS_PROXY -> 127.0.0.1 [ok] ??\n"
    cp = io.TextIOWrapper(io.BytesIO(), encoding="cp1252")
    protect(cp)
    cp.write("— stays an em dash in cp1252, → does not\n")  # encodable characters keep their own byte
    cp.flush()
    assert cp.buffer.getvalue().startswith(b"\x97 stays")  # type: ignore[attr-defined]
    utf = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    protect(utf)
    assert utf.errors == "strict" and is_utf(utf) and is_utf(io.StringIO())


def test_json_is_valid_and_inert_on_any_stream() -> None:
    doc = {"text": HOSTILE + " — 限流 →"}
    ascii_text = dumps(doc, ascii_only=True)
    assert ascii_text.isascii() and json.loads(ascii_text) == doc
    utf_text = dumps(doc)
    assert json.loads(utf_text) == doc and "限流" in utf_text
    assert not any(0x7F <= ord(c) <= 0x9F or c in "\u202e\u202c" or c == "\x1b" for c in utf_text)
