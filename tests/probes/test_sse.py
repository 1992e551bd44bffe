"""The SSE decoder: events survive any chunking, CR/LF/CRLF line ends, comments and multi-line data."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from capdoctor.probes.sse import Event, SSEDecoder, decode_all

STREAM = (
    b": OPENROUTER PROCESSING\n\n"
    b'event: response.created\ndata: {"type":"response.created"}\n\n'
    b"data: line one\r\ndata: line two\r\n\r\n"
    + 'data: {"text":"café ☕"}\r\r'.encode()
    + b'event: response.failed\ndata: {"type":"response.failed"}\n\n'
    b"data: [DONE]"
)
EXPECTED = [
    Event("response.created", '{"type":"response.created"}'),
    Event(None, "line one\nline two"),
    Event(None, '{"text":"café ☕"}'),
    Event("response.failed", '{"type":"response.failed"}'),
    Event(None, "[DONE]"),
]


def test_whole_payload() -> None:
    assert decode_all(STREAM) == EXPECTED


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    dec = SSEDecoder()
    out: list[Event] = []
    prev = 0
    for p in [*points, len(STREAM)]:
        out += dec.feed(STREAM[prev:p])
        prev = p
    out += dec.close()
    assert out == EXPECTED


def test_json_helper_and_field_without_space() -> None:
    (ev,) = decode_all(b'event:error\ndata:{"error":{"type":"overloaded_error"}}\n\n')
    assert ev.event == "error"
    assert ev.json() == {"error": {"type": "overloaded_error"}}
    assert Event(None, "[DONE]").json() is None


def test_blank_events_and_unknown_fields_are_ignored() -> None:
    assert decode_all(b"\n\nid: 7\nretry: 100\n\n") == []
