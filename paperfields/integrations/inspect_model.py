"""PaperFields' backends as inspect models: ``inspect eval ... --model paperfields/<provider>/<model>``.

Any backend ``paperfields run -b`` takes becomes an inspect model, registered with inspect's
``modelapi`` registry under the name ``paperfields`` when inspect loads this package's entry point:
``paperfields/local/qwen2.5-coder-0.5b`` (llama.cpp in-process under the record's grammar, offline),
``paperfields/rules/baseline`` and ``paperfields/rules/empty`` (the model-free references),
``paperfields/openai/gpt-4o-mini`` ... Backend options are inspect's model args (``-M n_ctx=4096``).

A request is what the task sends: its chat messages, and the record model named by the structured-output
request (``response_schema``: PaperRecord, or a strategy's own such as ConfidenceRecord; PaperRecord when
the task sends none, ``-T structured=false``), which a grammar backend decodes under. A model-free backend
reads the abstract: the last user message, less the ``Abstract:`` line the prompts put before it. The reply
is the backend's text (its record as compact JSON for a backend that writes no text), read by the task as
any model's reply. A backend failure without a reply (a transport error) is raised, so inspect counts
the sample as errored; the response cache of ``paperfields run`` is not used (inspect has its own,
``--cache``).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo
from pydantic import BaseModel

PROVIDER = "paperfields"
ABSTRACT_PREFIX = "Abstract:"  # the first line of every prompt's user message (prompts/*.toml)


def record_models() -> dict[str, type[BaseModel]]:
    """The record models a task can ask for, by the name its ``response_schema`` carries."""
    from paperfields.core.schema import PaperRecord
    from paperfields.extract.strategies import ConfidenceRecord, EvidenceRecord, ReasoningRecord

    return {m.__name__: m for m in (PaperRecord, ReasoningRecord, EvidenceRecord, ConfidenceRecord)}


def abstract_of(messages: list[dict[str, str]]) -> str:
    """The abstract a request is about: its last user message, less a leading ``Abstract:`` line."""
    text = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    head, sep, rest = text.partition("\n")
    return rest if sep and head.strip() == ABSTRACT_PREFIX else text


class PaperFieldsModel(ModelAPI):
    """An inspect ``ModelAPI`` answering with the PaperFields backend ``model_name`` (``provider/model``).
    Raises BackendError at creation for a backend that cannot be built (unknown, weights missing)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        from paperfields.extract.backends.base import get_backend

        super().__init__(model_name, base_url, api_key, [], config)
        self.backend = get_backend(model_name, **model_args)

    def max_connections(self) -> int:
        """As many requests at once as the backend answers at once (its workers)."""
        return int(getattr(self.backend, "concurrency", 1) or 1)

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        from paperfields.core.runlog import GenerationParams
        from paperfields.extract.backends.base import GenerationRequest
        from paperfields.extract.strategies import compact

        messages = [{"role": m.role, "content": m.text} for m in input]
        schema = config.response_schema
        response_model = record_models().get(schema.name) if schema else None
        request = GenerationRequest(
            messages=messages,
            paper_text=abstract_of(messages),
            response_model=response_model or record_models()["PaperRecord"],
            params=GenerationParams(
                temperature=config.temperature or 0.0,
                max_tokens=config.max_tokens or GenerationParams().max_tokens,
                seed=config.seed or 0,
            ),
        )
        gen = await self.backend.generate(request)
        text = gen.raw_text if gen.raw_text is not None else compact(gen.record) if gen.record is not None else None
        if text is None:
            raise RuntimeError(f"{self.backend.name}: {gen.failure.value if gen.failure else 'no reply'}: {gen.error}")
        output = ModelOutput.from_content(
            f"{PROVIDER}/{self.model_name}", text, stop_reason="max_tokens" if gen.finish_reason == "length" else "stop"
        )
        usage = gen.usage
        # inspect's usage has no "unknown": a count the server never sent is left at 0 there (the run log keeps None)
        inputs, outputs = usage.input_tokens or 0, usage.output_tokens or 0
        output.usage = ModelUsage(input_tokens=inputs, output_tokens=outputs, total_tokens=inputs + outputs)
        output.time = gen.latency_s
        return output


@modelapi(name=PROVIDER)
def paperfields_model() -> type[ModelAPI]:
    """inspect's provider ``paperfields``: :class:`PaperFieldsModel`."""
    return PaperFieldsModel
