"""The provider simulator: a real HTTP server on loopback that answers like OpenAI, Anthropic, Gemini, Ollama
(native and OpenAI-compatible) and OpenRouter, plus a Statuspage and Cloudflare's trace, under a named scenario.

It backs `capdoctor simulate` / `capdoctor demo` and the test suite; `server.py` holds `Simulator` and `serve()`,
`routes.py` the request -> response decisions, the other modules the providers' data.

Routes, all on one port (`Simulator.base_url(provider)` gives the client-facing base):
  /v1/{models,chat/completions,responses}                       OpenAI
  /anthropic/v1/{models,messages}                               Anthropic (needs `anthropic-version`)
  /gemini/v1beta/models[/{m}:generateContent|:streamGenerateContent]   Gemini
  /ollama/api/{version,tags,ps,chat,generate}, /ollama/v1/...   Ollama native and OpenAI-compatible
  /openrouter/api/v1/{models,chat/completions,key}              OpenRouter
  <prefix>/{models,chat/completions}                            each hosted shape in hosted.HOSTED
  /status/api/v2/{summary,status,components,incidents}.json, /status/proxy/status   status pages
  /cdn-cgi/trace, /                                             Cloudflare trace text, JSON index

Models: every shape offers its own catalogue (payloads.CATALOG) plus the scenario's primary and alternative
models; "primary" behaviour applies to any model that is not an alternative, and a model the shape does not
offer at all gets that shape's 404 model-not-found, as a real provider would answer.

Contract: the simulator must not import capdoctor.classifier.signatures or any classifier; it serves literal provider
responses, so a classifier tested against it is tested against the providers' real shapes. It imports only
the standard library (and capdoctor.errors), binds loopback by default, and prints nothing unless asked.
"""
