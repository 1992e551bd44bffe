"""Generalisation: texts that are NOT in the reference (other wrappers, clients, languages) land on the right
cause, both through `classify` and through the log scanner's verdict. Written by hand for this test; none
is copied from signatures.md or field-cases.jsonl."""

from __future__ import annotations

import pytest

from capdoctor.classifier.signatures import classify
from capdoctor.logscan.findings import logs_result, verdict_of
from capdoctor.logscan.patterns import analyse
from capdoctor.logscan.scanner import ScanOptions, scan_bytes

UNSEEN: list[tuple[str, str]] = [
    # capacity: other providers, wrappers and languages
    ("groq.APIStatusError: Error code: 503 - llama-3.3-70b-versatile is currently over capacity.", "capacity"),
    ("[continue] Mistral API returned 503: Service temporarily unavailable, retry later", "capacity"),
    ("DeepSeek 返回：服务器繁忙，请稍后重试。", "capacity"),
    ("サーバーが混雑しています。しばらくしてから再度お試しください", "capacity"),
    ("Zed assistant: upstream provider is overloaded (HTTP 529), backing off", "capacity"),
    ("Error: Die Server sind derzeit überlastet.", "capacity"),
    (
        'aider: litellm.InternalServerError: AnthropicException - {"type":"error","error":'
        '{"type":"overloaded_error","message":"Overloaded"}}',
        "capacity",
    ),
    # quota
    ("错误：您的账户余额不足，请充值后继续使用", "quota"),
    ("Roo Code: 429 You exceeded your current quota; see billing", "quota"),
    ("La solicitud falló: se agotó la cuota diaria de la API", "quota"),
    ('{"error":{"type":"insufficient_quota"}} (retrying in 30s)', "quota"),
    ("Cline: Payment Required — out of credits for this workspace", "quota"),
    # Gemini 429 RESOURCE_EXHAUSTED with a QuotaFailure detail is quota (without one it stays ambiguous)
    (
        "google.api_core.exceptions.ResourceExhausted: 429 RESOURCE_EXHAUSTED. [{'@type': "
        "'type.googleapis.com/google.rpc.QuotaFailure', 'violations': [{'quotaMetric': "
        "'generativelanguage.googleapis.com/generate_content_paid_tier_input_token_count', 'quotaValue': '0'}]}]",
        "quota",
    ),
    (
        '[gemini] status=RESOURCE_EXHAUSTED details=[{"@type":"type.googleapis.com/google.rpc.QuotaFailure",'
        '"violations":[{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel","quotaValue":"15"}]}]',
        "quota",
    ),
    # account
    ("Your account has been suspended for violating the usage policies.", "account"),
    ('{"error":{"code":"account_deactivated","message":"deactivated"}}', "account"),
    ("该账号被封禁，请联系客服", "account"),
    # Anthropic's 403 region/egress refusal, through other wrappers
    (
        "anthropic.PermissionDeniedError: Error code: 403 - {'type': 'error', 'error': {'type': 'forbidden', "
        "'message': 'Request not allowed'}}",
        "account",
    ),
    ("[claude] POST /v1/messages -> 403: Request not allowed (egress via hk-02)", "account"),
    # network
    ("aider: litellm.APIConnectionError: Connection refused (os error 111)", "network"),
    ("Error: connect ECONNRESET 104.18.6.192:443", "network"),
    ("requests.exceptions.SSLError: [SSL: CERTIFICATE_VERIFY_FAILED] self signed certificate in chain", "network"),
    ("<!DOCTYPE html><html><head><title>Attention Required! | Cloudflare</title>", "network"),
    ("httpx.ConnectError: [Errno -3] Temporary failure in name resolution", "network"),
    ("curl: (56) Received HTTP code 407 from proxy after CONNECT", "network"),
    ("Blocked by your organization's Netskope policy", "network"),
    # hardware
    ("exllamav2: RuntimeError: CUDA error: out of memory", "hardware"),
    ("koboldcpp: ggml_metal_graph_compute: failed to allocate Metal0 buffer of size 8589934592", "hardware"),
    ("kernel: Out of memory: Killed process 4242 (llama-server)", "hardware"),
    ("模型加载失败：显存不足", "hardware"),
    (
        "vllm serve failed: ValueError: No available memory for the cache blocks (gpu_memory_utilization=0.6)",
        "hardware",
    ),
    ("lms load qwen3-32b: Not enough resources to load the model (estimated 21.4 GB)", "hardware"),
    # client
    ("This model requires a newer version of the app. Please upgrade your client.", "client"),
    ("ollama: 404 model 'qwen3:32b' not found, try pulling it first", "client"),
    ("Error: unknown model 'gpt-4o-mni'", "client"),
    ("openai.BadRequestError: prompt is too long: 250000 tokens > 200000 maximum", "client"),
    # second tuning round's kinds, in other words than the tuning texts
    ("openai.NotFoundError: The model `o3-mini` does not exist or you do not have access to it.", "account"),
    ("openai.NotFoundError: The model `gpt4-turbo` does not exist", "client"),
    (
        '{"object":"error","message":"The model `gpt-4o` does not exist.","type":"NotFoundError","param":null,'
        '"code":404}',
        "client",
    ),
    ("AuthenticationError: Incorrect API key provided: null. You can find your API key at the dashboard.", "client"),
    ("KeyError: 'ANTHROPIC_API_KEY'", "client"),
    (
        "Error code: 400 - {'error': {'code': 'OperationNotSupported', 'message': 'The embeddings operation does not "
        "work with the specified model, gpt-4o. Please choose different model and try again.'}}",
        "client",
    ),
    (
        'POST /openai/deployments/chat/completions failed: {"error":{"code":"404","message":"Resource not found"}}',
        "client",
    ),
    ("Access to model meta-llama/Llama-3.1-8B is restricted and you are not in the authorized list.", "account"),
    ("OpenRouter 404: No endpoints found matching your data policy (Free model publication)", "account"),
    ("HfHubHTTPError: Model bigscience/bloom is currently loading (estimated_time 45.0)", "capacity"),
    ("<title>api.example.ai | 504: Gateway time-out</title>", "capacity"),
    ("[gpt] Error code: 429 - {'error': {'code': 'limit_burst_rate', 'message': 'Slow your ramp-up'}}", "quota"),
    ("Pod llama-server-0 restarted (Last State: Terminated, Reason: OOMKilled)", "hardware"),
    ("长上下文推理时显存爆了，进程退出", "hardware"),
    ("RuntimeError: DefaultCPUAllocator: can't allocate memory: you tried to allocate 1073741824 bytes", "hardware"),
    ("FetchError: Client network socket disconnected before secure TLS connection was established", "network"),
    ("Server returned 403 - the upstream may be busy, try again in a moment", "account"),
]


@pytest.mark.parametrize(("text", "cause"), UNSEEN, ids=[f"{c}-{i}" for i, (_, c) in enumerate(UNSEEN)])
def test_classify_generalises(text: str, cause: str) -> None:
    matches = classify(text, origin="exception")
    assert matches, text
    assert matches[0].signature.cause.value == cause, [(m.signature.id, m.score) for m in matches[:3]]


@pytest.mark.parametrize(("text", "cause"), UNSEEN, ids=[f"{c}-{i}" for i, (_, c) in enumerate(UNSEEN)])
def test_log_verdict_generalises(text: str, cause: str) -> None:
    data = f"2026-11-30T09:15:00Z ERROR {text}\n".encode()
    res = scan_bytes(data, options=ScanOptions())
    verdict = verdict_of(logs_result(res, analyse(res.events)))
    assert verdict.cause == cause, (verdict.cause, verdict.ranking)
