"""The marks of an error that no row placed (`logscan.unplaced`): what `explain` and `logs` name instead of `none`."""

from __future__ import annotations

import pytest

from capdoctor.logscan.explain import explain
from capdoctor.logscan.unplaced import describe


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('Traceback (most recent call last):\n  File "x.py", line 3, in <module>\nValueError: odd', "an exception"),
        ("Error: Request failed with status code 418", "HTTP status 418"),
        ("404 (no body)", "HTTP status 404"),
        ("GLM 5.2总是报api: 400", "HTTP status 400"),
        ('  File "/app/agent.py", line 140, in _invoke_loop\n    answer = self._get_llm_response()', "a stack trace"),
        ("thread 'main' panicked at 'called `Result::unwrap()`'", "an error"),
        ("[00:30:45] [Thread-1/INFO]: [STDERR]: java.lang.NullPointerException: x", "an exception"),
        ("Illegal instruction (core dumped)", "a crash"),
        ("调用接口时报错了", "an error"),
    ],
)
def test_marks_of_an_error_are_named(text: str, named: str) -> None:
    found = describe(text)
    assert found is not None and found.startswith(named)


@pytest.mark.parametrize(
    "text",
    [
        "everything fine here, 3 requests completed",
        "I'm in Hong Kong and it tells me I can't use it from here.",
        "2026-01-01 10:00:00 INFO request error counter reset",
    ],
)
def test_a_text_without_an_error_has_no_mark(text: str) -> None:
    assert describe(text) is None


def test_explain_says_inconclusive_and_names_the_mark() -> None:
    verdict = explain('Traceback (most recent call last):\n  File "x.py", line 3\nValueError: something odd').verdict
    assert verdict.cause == "inconclusive"
    assert "an exception (ValueError)" in verdict.summary
    assert explain("everything fine here, 3 requests completed").verdict.cause == "none"
