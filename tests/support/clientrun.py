"""Run a real client on what `capdoctor fallback` generated, with nothing allowed off loopback.

    python tests/support/clientrun.py router CONFIG.yaml MODEL       # a LiteLLM Router built from the config
    python tests/support/clientrun.py snippet SNIPPET.py [KWARGS]    # the generated SDK snippet's complete()

One request per line read on stdin ("go"), one JSON line per answer on stdout: `{"ok", "model", "text",
"error", "outside"}`, where `outside` lists every connection or name lookup for a non-loopback address the
client tried — each is refused (an audit hook raises), so nothing can leave the machine, and the test asserts
the list is empty. Used by tests/fallback/test_fallback_clients.py; not part of the package.
"""

from __future__ import annotations

import ipaddress
import json
import runpy
import sys
from collections.abc import Callable
from typing import Any

OUTSIDE: list[str] = []


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _guard(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect" and isinstance(args[1], tuple):
        host = str(args[1][0])
    elif event == "socket.getaddrinfo":
        host = args[0].decode() if isinstance(args[0], bytes) else str(args[0] or "")
    else:
        return
    if host and not _loopback(host):
        OUTSIDE.append(f"{event} {host}")
        raise OSError(f"clientrun: {host} is not loopback: blocked")


def _router(config: str, model: str) -> Callable[[], Any]:
    import yaml
    from litellm import Router

    with open(config, encoding="utf-8") as fh:
        cfg = yaml.safe_load(fh)
    router = Router(model_list=cfg["model_list"], **cfg["router_settings"])

    def ask() -> Any:
        reply = router.completion(model=model, messages=[{"role": "user", "content": "ping"}], max_tokens=8)
        return reply.model, reply.choices[0].message.content

    return ask


def _snippet(path: str, kwargs: dict[str, Any]) -> Callable[[], Any]:
    namespace = runpy.run_path(path, run_name="snippet")

    def ask() -> Any:
        reply = namespace["complete"]([{"role": "user", "content": "ping"}], **kwargs)
        content = getattr(reply, "content", None)
        text = content[0].text if isinstance(content, list) else reply.choices[0].message.content
        return reply.model, text

    return ask


def main(argv: list[str]) -> int:
    sys.addaudithook(_guard)
    ask = (
        _router(argv[1], argv[2])
        if argv[0] == "router"
        else _snippet(argv[1], json.loads(argv[2] if len(argv) > 2 else "{}"))
    )
    for _ in sys.stdin:
        try:
            model, text = ask()
            answer = {"ok": True, "model": model, "text": text}
        except Exception as exc:
            answer = {"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        print(json.dumps({**answer, "outside": OUTSIDE}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
