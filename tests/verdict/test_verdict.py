"""The verdict is a pure function: table-driven cases, contradictory ones included."""

from __future__ import annotations

import pytest

from capdoctor.model import Cause, CheckResult, Finding, NextStep, Status, Strength
from capdoctor.verdict.decision import decide
from capdoctor.verdict.weighing import score

C, S = Cause, Strength


def res(cid: str, status: Status, *findings: tuple[Cause, Strength]) -> CheckResult:
    return CheckResult(
        cid,
        cid.title(),
        1,
        status,
        f"{cid} summary",
        tuple(Finding(c, s, f"{cid}: {c.value} {s.value}") for c, s in findings),
    )


CASES = [
    # (description, results, expected cause)
    (
        "switching the model fixes it → capacity",
        [res("models", Status.FAIL, (C.CAPACITY, S.STRONG)), res("quota", Status.PASS, (C.QUOTA, S.AGAINST))],
        "capacity",
    ),
    (
        "every model fails with insufficient_quota → quota",
        [res("models", Status.FAIL, (C.QUOTA, S.STRONG)), res("quota", Status.FAIL, (C.QUOTA, S.MODERATE))],
        "quota",
    ),
    ("401 everywhere → account", [res("models", Status.FAIL, (C.ACCOUNT, S.STRONG))], "account"),
    (
        "direct works, proxy fails → network",
        [res("paths", Status.FAIL, (C.NETWORK, S.STRONG)), res("proxy", Status.WARN, (C.NETWORK, S.WEAK))],
        "network",
    ),
    ("local OOM → hardware", [res("hardware", Status.FAIL, (C.HARDWARE, S.STRONG))], "hardware"),
    ("requires newer version → client", [res("models", Status.FAIL, (C.CLIENT, S.STRONG))], "client"),
    ("all pass → none", [res("models", Status.PASS), res("paths", Status.PASS)], "none"),
    (
        "most checks skipped, the rest pass → inconclusive, not none",
        [res("models", Status.SKIP), res("paths", Status.SKIP), res("quota", Status.SKIP), res("proxy", Status.PASS)],
        "inconclusive",
    ),
    ("everything skipped → inconclusive", [res("models", Status.SKIP)], "inconclusive"),
    (
        "a check broke with no evidence → inconclusive",
        [res("models", Status.ERROR), res("paths", Status.PASS)],
        "inconclusive",
    ),
    ("one weak hint only → inconclusive", [res("logs", Status.WARN, (C.CAPACITY, S.WEAK))], "inconclusive"),
    (
        "strong capacity vs strong quota → inconclusive (contradictory)",
        [res("models", Status.FAIL, (C.CAPACITY, S.STRONG)), res("logs", Status.WARN, (C.QUOTA, S.STRONG))],
        "inconclusive",
    ),
    (
        "strong capacity beats a pile of weak quota hints",
        [
            res("models", Status.FAIL, (C.CAPACITY, S.STRONG)),
            res("logs", Status.WARN, (C.QUOTA, S.WEAK), (C.QUOTA, S.WEAK)),
            res("client", Status.WARN, (C.QUOTA, S.WEAK)),
        ],
        "capacity",
    ),
    (
        "context findings weigh nothing",
        [res("hardware", Status.WARN, (C.HARDWARE, S.CONTEXT)), res("models", Status.PASS)],
        "none",
    ),
    (
        "against evidence cancels a weak claim",
        [
            res("logs", Status.WARN, (C.QUOTA, S.WEAK)),
            res("quota", Status.PASS, (C.QUOTA, S.AGAINST)),
            res("models", Status.FAIL, (C.CAPACITY, S.STRONG)),
        ],
        "capacity",
    ),
    (
        "network strong + capacity moderate → network",
        [
            res("paths", Status.FAIL, (C.NETWORK, S.STRONG), (C.NETWORK, S.MODERATE)),
            res("status", Status.WARN, (C.CAPACITY, S.MODERATE)),
        ],
        "network",
    ),
    (
        "account throttling ranks account first, capacity second",
        [
            res("models", Status.FAIL, (C.ACCOUNT, S.STRONG), (C.CAPACITY, S.WEAK)),
            res("quota", Status.PASS, (C.QUOTA, S.AGAINST)),
        ],
        "account",
    ),
]


@pytest.mark.parametrize(("description", "results", "expected"), CASES, ids=[c[0] for c in CASES])
def test_decide_table(description: str, results: list[CheckResult], expected: str) -> None:
    verdict = decide(results)
    assert verdict.cause == expected, (description, verdict)
    assert 0.0 <= verdict.confidence <= 1.0
    assert verdict.next_steps, "every verdict says what to do next"


def test_one_check_cannot_outvote_others_by_repetition() -> None:
    many_weak = res("logs", Status.WARN, *[(C.QUOTA, S.STRONG)] * 10)
    assert score([many_weak])["quota"] == pytest.approx(4.5)


def test_confidence_grows_with_agreeing_evidence() -> None:
    one = decide([res("models", Status.FAIL, (C.CAPACITY, S.STRONG))])
    two = decide(
        [res("models", Status.FAIL, (C.CAPACITY, S.STRONG)), res("status", Status.WARN, (C.CAPACITY, S.STRONG))]
    )
    assert two.confidence >= one.confidence  # calibrated: never less sure with more agreeing evidence


def test_contradiction_lowers_confidence() -> None:
    clean = decide([res("models", Status.FAIL, (C.NETWORK, S.STRONG))])
    mixed = decide([res("models", Status.FAIL, (C.NETWORK, S.STRONG)), res("logs", Status.WARN, (C.CLIENT, S.WEAK))])
    assert mixed.cause == "network"
    assert mixed.confidence < clean.confidence


def test_evidence_and_specific_steps_come_first() -> None:
    finding = Finding(
        C.NETWORK,
        S.STRONG,
        "direct works, HTTPS_PROXY path resets",
        next_steps=(NextStep("unset HTTPS_PROXY", "unset HTTPS_PROXY"),),
    )
    verdict = decide([CheckResult("paths", "Paths", 3, Status.FAIL, "x", (finding,))])
    assert verdict.evidence[0] == "[paths] direct works, HTTPS_PROXY path resets"
    assert verdict.next_steps[0].command == "unset HTTPS_PROXY"
    assert len({s.text for s in verdict.next_steps}) == len(verdict.next_steps)


def test_ranking_lists_every_cause_sorted() -> None:
    verdict = decide([res("models", Status.FAIL, (C.ACCOUNT, S.STRONG), (C.CAPACITY, S.WEAK))])
    causes = [c for c, _ in verdict.ranking]
    assert sorted(causes) == sorted(c.value for c in Cause)
    assert causes[0] == "account"
    scores = [s for _, s in verdict.ranking]
    assert scores == sorted(scores, reverse=True)


def test_decide_is_pure() -> None:
    results = [res("models", Status.FAIL, (C.CAPACITY, S.STRONG))]
    assert decide(results) == decide(list(results))


def test_tun_with_every_model_failing_tilts_towards_network() -> None:
    models = CheckResult(
        "models",
        "Switch model",
        1,
        Status.FAIL,
        "all fail",
        (Finding(C.ACCOUNT, S.MODERATE, "every model refused"),),
        (),
        {"models": [{"model": "a", "outcome": "fail"}, {"model": "b", "outcome": "fail"}]},
    )
    tun = CheckResult(
        "proxy",
        "Proxy",
        4,
        Status.WARN,
        "tun",
        (Finding(C.NETWORK, S.WEAK, "fake ip", {"host": "api", "resolved": ["198.18.0.7"]}),),
    )
    assert decide([models]).cause == "account"
    assert decide([models, tun]).cause == "network"
    healthy = CheckResult(
        "models",
        "Switch model",
        1,
        Status.FAIL,
        "one fails",
        models.findings,
        (),
        {"models": [{"model": "a", "outcome": "fail"}, {"model": "b", "outcome": "ok"}]},
    )
    assert decide([healthy, tun]).cause == "account"


# ------------------------------------------------------------------ "no problem" only about what was tested


def _with(cid: str, status: Status, summary: str = "", **data: object) -> CheckResult:
    return CheckResult(cid, cid.title(), 1, status, summary or f"{cid} summary", (), (), dict(data))


GENERATION_UNTESTED = {
    "what": "generation on gpt-5.5",
    "why": "--no-inference",
    "open_causes": ["capacity", "quota", "account"],
    "decisive": True,
}
STATUS_UNREAD = {"what": "the status page", "why": "could not be read: HTTP 500", "open_causes": ["capacity"]}


def test_none_is_confident_only_when_everything_ran() -> None:
    full = decide([_with("models", Status.PASS), _with("status", Status.PASS), _with("quota", Status.PASS)])
    assert full.cause == "none" and full.confidence >= 0.85 and full.evidence == ()


def test_each_gap_lowers_none_and_is_named() -> None:
    one = decide(
        [
            _with("models", Status.PASS),
            _with("status", Status.PASS),
            _with("quota", Status.PASS),
            _with("logs", Status.SKIP, "no client logs found"),
        ]
    )
    assert one.cause == "none" and one.confidence <= 0.71
    assert "not tested" in one.summary and "no client logs found" in one.summary
    offline = decide(
        [
            _with("models", Status.PASS),
            _with("paths", Status.PASS),
            _with("quota", Status.PASS),
            _with("status", Status.WARN, untested=[STATUS_UNREAD]),
            _with("logs", Status.SKIP),
            _with("hardware", Status.SKIP),
        ]
    )
    assert offline.cause == "none" and offline.confidence <= 0.5 < one.confidence
    assert "the status page (could not be read: HTTP 500)" in offline.summary
    assert any(line.startswith("[status] not tested: the status page") for line in offline.evidence)


def test_generation_not_probed_is_never_a_confident_no_problem() -> None:
    verdict = decide(
        [
            _with("models", Status.PASS, untested=[GENERATION_UNTESTED]),
            _with("status", Status.PASS),
            _with("paths", Status.PASS),
            _with("quota", Status.PASS),
        ]
    )
    assert verdict.cause == "inconclusive"
    assert "generation on gpt-5.5 (--no-inference)" in verdict.summary
    assert "capacity, quota, account could not be ruled out" in verdict.summary
    assert verdict.next_steps


def test_a_finding_still_wins_over_a_gap() -> None:
    verdict = decide(
        [
            CheckResult(
                "models",
                "Models",
                1,
                Status.FAIL,
                "x",
                (Finding(C.CLIENT, S.STRONG, "MY_KEY is not set"),),
                (),
                {"untested": [GENERATION_UNTESTED]},
            )
        ]
    )
    assert verdict.cause == "client"


def test_a_cause_named_while_generation_went_untested_says_so_and_claims_less() -> None:
    """The paths check timed out while the models check had no time to send anything: network, but the summary
    says what was not tested and the confidence is capped."""
    untested = {"what": "generation on gpt-5.5", "why": "no time left", "open_causes": ["capacity", "network"]}
    results = [
        CheckResult(
            "models",
            "Models",
            1,
            Status.SKIP,
            "nothing was probed",
            data={"untested": [{**untested, "decisive": True}]},
        ),
        res("paths", Status.FAIL, (C.NETWORK, S.STRONG)),
    ]
    verdict = decide(results)
    assert verdict.cause == "network" and verdict.confidence <= 0.6
    assert "Not tested: generation on gpt-5.5 (no time left), so capacity could not be ruled out" in verdict.summary
    plain = decide([results[1]])
    assert plain.confidence > 0.6 and "Not tested" not in plain.summary


def test_an_error_no_row_placed_is_inconclusive_not_none() -> None:
    """`none` means no error at all: a check that saw an error it could not place (`data["unplaced"]`) makes the
    verdict `inconclusive`, naming what was recognised, with a step to narrow it."""
    quiet = CheckResult("logs", "Logs", 1, Status.PASS, "no known error signatures", ())
    unplaced = CheckResult(
        "logs", "Logs", 1, Status.WARN, "holds an exception", (), data={"unplaced": "an exception (KeyError)"}
    )
    assert decide([quiet]).cause == "none"
    verdict = decide([unplaced])
    assert verdict.cause == "inconclusive"
    assert "an exception (KeyError)" in verdict.summary
    assert verdict.next_steps and "Paste the whole error" in verdict.next_steps[0].text
