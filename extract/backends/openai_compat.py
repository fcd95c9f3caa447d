"""``openai/<model>``: any OpenAI-compatible endpoint through ``openai`` + ``instructor``.

``base_url`` points it at vLLM, Ollama, llama.cpp server, LM Studio or OpenRouter; ``grammar``
sends the JSON schema in ``response_format`` (llama.cpp server then constrains decoding to it). Transport
retries (429 honoring ``Retry-After``, 5xx, timeouts; exponential backoff with jitter) are the
openai SDK's own; validation re-asks are instructor's, counted apart in ``attempts``. The API key
is read from ``OPENAI_API_KEY`` and never stored.
"""

from __future__ import annotations

import os
import time
from typing import Any, Optional

from paperfields.extract.backends.base import (
    BackendError,
    FailureClass,
    Generation,
    GenerationRequest,
    Usage,
    parse_reply,
    register_provider,
)
from paperfields.extract.schema import all_required

MODES = ("json", "md_json", "tools", "json_schema")


def _reply_text(completion: Any) -> tuple[Optional[str], Optional[str]]:
    """Raw text and finish_reason of a chat completion (tool-call arguments in tools mode)."""
    try:
        choice = completion.choices[0]
    except (AttributeError, IndexError, TypeError):
        return None, None
    message = choice.message
    text = message.content
    if not text and getattr(message, "tool_calls", None):
        text = message.tool_calls[0].function.arguments
    if not text and getattr(message, "refusal", None):
        text = message.refusal
    return text, choice.finish_reason


class OpenAIBackend:
    """instructor-patched ``AsyncOpenAI`` client; one request per :meth:`generate`."""

    def __init__(
        self,
        model: str,
        base_url: Optional[str] = None,
        mode: Optional[str] = None,
        timeout_s: float = 120.0,
        transport_retries: int = 4,
        reasks: int = 1,
        grammar: bool = False,
    ) -> None:
        import instructor
        import openai
        from instructor.core import exceptions as instructor_errors
        from instructor.core.hooks import Hooks

        self.name = f"openai/{model}"
        self.model = model
        self.base_url = base_url
        self.mode = mode or ("json" if base_url else "tools")
        if self.mode not in MODES:
            raise BackendError(f"unknown instructor mode '{self.mode}'; choose one of {', '.join(MODES)}")
        api_key = os.environ.get("OPENAI_API_KEY")
        if not api_key and not base_url:
            raise BackendError("OPENAI_API_KEY is not set (or pass --base-url for a local OpenAI-compatible server)")
        self._openai = openai
        self._instructor = instructor
        self._errors = instructor_errors
        self._hooks_cls = Hooks
        client = openai.AsyncOpenAI(
            api_key=api_key or "no-key", base_url=base_url, timeout=timeout_s, max_retries=transport_retries
        )
        self.client = instructor.from_openai(client, mode=getattr(instructor.Mode, self.mode.upper()))
        self.reasks = reasks
        self.grammar = grammar

    async def generate(self, request: GenerationRequest) -> Generation:
        responses: list[Any] = []
        hooks = self._hooks_cls()
        hooks.on("completion:response", responses.append)
        start = time.perf_counter()
        failure: Optional[Generation] = None
        record = None
        extra: dict[str, Any] = {}
        if self.grammar:  # llama.cpp server: constrain decoding to the schema (overrides instructor's plain json_object)
            schema = all_required(request.response_model.model_json_schema())
            extra["extra_body"] = {"response_format": {"type": "json_object", "schema": schema}}
        try:
            record, _ = await self.client.chat.completions.create_with_completion(
                model=self.model,
                messages=request.messages,
                response_model=request.response_model,
                max_retries=self.reasks,
                temperature=request.params.temperature,
                max_tokens=request.params.max_tokens,
                seed=request.params.seed + request.sample_index,
                hooks=hooks,
                **extra,
            )
        except self._errors.IncompleteOutputException as exc:
            if exc.last_completion is not None and exc.last_completion not in responses:
                responses.append(exc.last_completion)
            failure = Generation(failure=FailureClass.truncated, error="reply cut off at max_tokens (finish_reason=length)")
        except self._errors.InstructorRetryException as exc:
            text, finish = _reply_text(exc.last_completion)
            failure = parse_reply(text, finish, request.response_model)
            if failure.failure is None:  # instructor rejected what we would accept: keep its reason
                failure = Generation(failure=FailureClass.schema_invalid, error=str(exc).splitlines()[0][:300])
        except self._openai.APIError as exc:
            failure = Generation(failure=FailureClass.transport_error, error=f"{type(exc).__name__}: {str(exc)[:300]}")
        latency = time.perf_counter() - start
        usage = Usage()
        for response in responses:
            u = getattr(response, "usage", None)
            if u is not None:
                usage = usage + Usage(input_tokens=u.prompt_tokens or 0, output_tokens=u.completion_tokens or 0)
        text, finish = _reply_text(responses[-1]) if responses else (None, None)
        if failure is None:
            gen = Generation(record=record.model_dump(mode="json"), raw_text=text, finish_reason=finish)
            if text:
                gen.repairs = parse_reply(text, finish, request.response_model).repairs
        else:
            gen = failure
            gen.raw_text = gen.raw_text if gen.raw_text is not None else text
            gen.finish_reason = gen.finish_reason or finish
        gen.usage = usage
        gen.latency_s = latency
        gen.attempts = max(1, len(responses))
        return gen


@register_provider("openai")
def _factory(model: str, **options: Any) -> OpenAIBackend:
    return OpenAIBackend(
        model,
        base_url=options.get("base_url"),
        mode=options.get("mode"),
        timeout_s=options.get("timeout_s") or 120.0,
        transport_retries=options.get("transport_retries", 4),
        reasks=options.get("reasks", 1),
        grammar=bool(options.get("grammar")),
    )
