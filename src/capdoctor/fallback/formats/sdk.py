"""`--format openai-python` / `anthropic-python`: a short snippet — SDK client plus a fallback loop over the models.

Contract: a self-contained Python file that builds the SDK client with `max_retries=0` and a timeout (the loop
does the retrying, so an overloaded model is left at once instead of retried in place) and `complete()`, which
tries the models in pool order (one that failed in the last minute goes last) and, when every model failed
retryably, sleeps with exponential backoff and full jitter, never less than Retry-After, and goes round again.
Other errors are raised at once. Only the key variable's name is in the file; pool values are written with
`repr`, so the snippet is valid Python whatever the model names hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from string import Template

from capdoctor.fallback.generate import OPENAI_SHAPED, Generated, Unsupported, comment_block, custom_base_url
from capdoctor.fallback.pool import Pool, provenance

LOOP = '''
RETRYABLE = {408, 409, 429, 500, 502, 503, 504, 529}  # worth another try, on another model or later
ROUNDS = 4  # passes over MODELS before giving up
BASE_S, CAP_S = 0.5, 20.0  # full jitter: sleep random(0, min(CAP_S, BASE_S * 2 ** round))...
MAX_WAIT_S = 60.0  # ...but at least Retry-After, and never longer than this
COOLDOWN_S = 60.0  # a model that failed this recently is tried last
_failed_at = {}


def retry_after_s(exc):
    """The wait the server asked for (Retry-After in seconds or as an HTTP date, or retry-after-ms), or None."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    value = headers.get("retry-after-ms")
    if value:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def complete(messages, **kwargs):
    """The first answer any model gives, trying MODELS in order; raises the last error when none answers."""
    last = None
    for rnd in range(ROUNDS):
        now = time.monotonic()
        order = sorted(MODELS, key=lambda m: m in _failed_at and now - _failed_at[m] < COOLDOWN_S)
        wait = 0.0
        for model in order:
            try:
                return $call
            except $sdk.APIStatusError as exc:
                if exc.status_code not in RETRYABLE:
                    raise
                last = exc
                wait = max(wait, retry_after_s(exc) or 0.0)
            except $sdk.APIConnectionError as exc:  # refused, reset, timed out
                last = exc
            _failed_at[model] = time.monotonic()
        if rnd + 1 < ROUNDS:
            time.sleep(min(MAX_WAIT_S, max(wait, random.uniform(0, min(CAP_S, BASE_S * 2**rnd)))))
    raise last


if __name__ == "__main__":
    reply = complete([{"role": "user", "content": "Say hello."}]$example)
    print(reply.model, $text)
'''

HEAD = """import email.utils
import os
import random
import time

import $sdk

MODELS = $models  # the primary first, then the alternatives that answered, best first
client = $sdk.$client(
    base_url=$base_url,
    $auth=os.environ[$key_env],  # the key stays in the environment
    max_retries=0,  # complete() retries: on to the next model at once, back off only when all failed
    timeout=$timeout,
)
"""

TIMEOUT_S = 60.0
"""Seconds one request may take (a long generation needs them; a dead connection should not take more)."""


@dataclass(frozen=True)
class Sdk:
    """What differs between the SDKs' snippets: the package, client class, call, example arguments, reply text."""

    package: str
    client: str
    call: str
    example: str
    text: str


OPENAI = Sdk(
    "openai",
    "OpenAI",
    "client.chat.completions.create(model=model, messages=messages, **kwargs)",
    "",
    "reply.choices[0].message.content",
)
"""Chat Completions: what every OpenAI-compatible server serves."""
ANTHROPIC = Sdk(
    "anthropic",
    "Anthropic",
    "client.messages.create(model=model, messages=messages, **kwargs)",
    ", max_tokens=64",
    "reply.content[0].text",
)


def _snippet(pool: Pool, sdk: Sdk, auth: str) -> Generated:
    header = [
        *provenance(pool),
        f"Run: python capdoctor_fallback.py (pip install {sdk.package}); or import complete().",
    ]
    values = {
        "sdk": sdk.package,
        "client": sdk.client,
        "auth": auth,
        "base_url": repr(custom_base_url(pool) or pool.base_url),
        "key_env": repr(pool.key_env),
        "models": repr(pool.models),
        "timeout": repr(TIMEOUT_S),
        "call": sdk.call,
        "example": sdk.example,
        "text": sdk.text,
    }
    body = Template(HEAD).substitute(values) + Template(LOOP).substitute(values)
    return Generated(comment_block(header) + body, "python")


def openai_refusal(provider: str) -> str | None:
    """Why the openai SDK cannot serve a `provider` target, or None (asked before anything is probed)."""
    if provider not in OPENAI_SHAPED:
        return f"the openai SDK speaks the OpenAI wire API and the target is {provider}: use " + (
            "--format anthropic-python" if provider == "anthropic" else "--format litellm"
        )
    return None


def anthropic_refusal(provider: str) -> str | None:
    """Why the anthropic SDK cannot serve a `provider` target, or None (asked before anything is probed)."""
    if provider != "anthropic":
        return f"the anthropic SDK speaks the Anthropic Messages API and the target is {provider}: use " + (
            "--format openai-python" if provider in OPENAI_SHAPED else "--format litellm"
        )
    return None


def openai_python(pool: Pool) -> Generated:
    """The snippet for the openai SDK."""
    why = openai_refusal(pool.provider)
    if why:
        raise Unsupported(why)
    return _snippet(pool, OPENAI, "api_key")


def anthropic_python(pool: Pool) -> Generated:
    """The snippet for the anthropic SDK (a gateway token from ANTHROPIC_AUTH_TOKEN goes in as `auth_token`)."""
    why = anthropic_refusal(pool.provider)
    if why:
        raise Unsupported(why)
    return _snippet(pool, ANTHROPIC, "auth_token" if pool.key_env == "ANTHROPIC_AUTH_TOKEN" else "api_key")
