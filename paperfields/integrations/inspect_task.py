"""PaperFields as an inspect_ai task, scored by PaperFields' own scorer.

``inspect eval paperfields/paperfields --model <any inspect model>`` (registered through the
``inspect_ai`` entry point of ``pyproject.toml``) asks the model for one record per paper of the
split, with task options ``-T split=test|dev|all``, ``-T strategy=zero_shot|few_shot|...`` (a
``prompts/<name>.toml``), ``-T corpus=FILE`` (a corpus JSONL of one's own, with ``-T split=all``) and
``-T structured=...`` (how the schema goes into the request, see below).

- **Samples**: one per paper, id the paper id, input the chat messages of
  :meth:`paperfields.extract.strategies.Strategy.messages` (the ones ``paperfields run`` sends), target
  the gold record as compact JSON (empty without gold), metadata the paper id, the strategy, its
  prompt version and sha256 and the few-shot example ids used for that paper. The task's own metadata
  (``log.eval.metadata``) holds the same for the run, with the corpus, schema, scorer and gold versions
  and the checkout's git commit.
- **Request**: by default (``structured=true``, or ``schema``) the task's generate config asks for the
  record through inspect's structured output (``response_schema``: the strategy's record model as a
  JSON Schema in OpenAI's strict form, every property required), which each provider maps to its own
  (OpenAI's ``response_format``, Anthropic's and Google's structured outputs); providers without it
  ignore it. ``structured=grammar`` sends instead what ``paperfields run --grammar`` sends, llama.cpp's
  ``response_format`` ``{"type": "json_object", "schema": ...}`` in the request body (an OpenAI-compatible
  llama.cpp server decodes under that grammar; llama-cpp-python's server refuses OpenAI's
  ``json_schema`` type with HTTP 500, which inspect retries); ``structured=false`` (or ``none``) sends
  no schema: only the prompt asks for JSON. Temperature is the strategy's
  (0 unless it says), ``max_tokens`` 1536 and ``seed`` 0, as ``paperfields run``; ``--temperature``,
  ``--max-tokens`` and ``--seed`` of ``inspect eval`` override them. The solver asks the strategy's
  requests round by round with the driver of ``paperfields run`` (:class:`~paperfields.extract.strategies.Rounds`):
  a self-consistency strategy asks ``samples`` times, sample i > 0 with ``seed`` i (as ``paperfields run``
  with its default seed 0), and a strategy that asks again after the first answer does so here too.
- **Reading the reply**: whatever the provider, the reply text goes through
  :func:`paperfields.extract.backends.base.parse_reply` (the parser of every PaperFields backend, so
  a fenced or prose-wrapped record is read as ``paperfields run`` reads it) and
  :meth:`Strategy.finalize`; a reply that cannot be read is a failure with its class.
- **Score** (one per sample): its value is a flat dict of integers, ``<field>_tp``, ``<field>_fp`` and
  ``<field>_fn`` for every field ``paperfields score`` reports (:data:`~paperfields.scoring.score.REPORTED_FIELDS`;
  for the accuracy fields ``research_area`` and ``training_free``, ``tp`` is 1 when the label is
  right), plus ``answered`` (0 for a failed paper); these are :func:`~paperfields.scoring.score.score_paper`'s
  counts. Its ``metadata`` holds the paper's ``failure`` class (None when a record was read) and the
  whole ``generation`` (record, failure, error, repairs, notes, usage), which ``paperfields
  import-inspect`` writes into the run folder; ``answer`` is the record as JSON; ``reason`` is inspect's
  standard reason for a failed reply (``invalid_response_format``, ``refusal``, ``no_response``). A
  paper without gold (a corpus of one's own) is unscored (NaN: inspect leaves it out of the metrics).
- **Metrics**: :func:`headline` and :func:`fields` pool those counts over the papers with
  :func:`~paperfields.scoring.score.headline` and :func:`~paperfields.scoring.score.aggregate`, the
  functions ``paperfields score`` uses: the headline (macro mean over the headline fields of pooled
  micro F1 or accuracy, never a mean of per-paper F1s) with its 95% percentile bootstrap CI, and each
  field's score. One epoch only: the counts are per paper (``--epochs 2`` is refused).

Offline with inspect's mock model: ``--model mockllm/model`` estimates the usage of a reply it made up
by counting the prompt's tokens with tiktoken's ``o200k_base``, which tiktoken downloads on first use;
this module gives the mock model a count at four characters a token instead (:func:`offline_mock_tokens`),
so the task runs with no network (its usage figures are made up either way).

Not used here: PaperFields' response cache (inspect has its own: ``inspect eval --cache``), its
retries (inspect retries failed requests itself: ``--max-retries``, ``--timeout``) and its re-asks
after an unreadable reply (there is one answer per request, as with ``paperfields run --mode json_schema``).
"""

from __future__ import annotations

import math
from typing import Any, Optional, Union

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import HeadlineMetric
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ResponseSchema,
)
from inspect_ai.scorer import SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import JSONSchema, json_schema
from pydantic import BaseModel

from paperfields import api
from paperfields.core import paths
from paperfields.core.corpus import Paper
from paperfields.core.gold import GoldRecord, gold_fingerprint, load_gold
from paperfields.core.runlog import FailureClass, Generation, GenerationParams, Usage, corpus_identity, git_commit
from paperfields.core.schema import SCHEMA_VERSION, all_required
from paperfields.core.version import __version__
from paperfields.extract.backends.base import parse_reply
from paperfields.extract.backends.openai_compat import strict_schema
from paperfields.extract.strategies import Rounds, Strategy, compact
from paperfields.options import DEFAULT_MAX_TOKENS
from paperfields.scoring.score import REPORTED_FIELDS, SCORER_VERSION, aggregate, score_paper
from paperfields.scoring.score import headline as pooled_headline

CHARS_PER_TOKEN = 4  # OpenAI's rule of thumb for English text ("What are tokens and how to count them?")


def offline_mock_tokens() -> None:
    """Make inspect's mock model (``mockllm``) count prompt tokens without tiktoken: ``ceil(len(text) / 4)``.

    inspect 0.3.276's ``MockLLM`` fills the usage of an output that has none from ``count_tokens``, whose
    default loads tiktoken's ``o200k_base`` (a download from OpenAI's servers on first use): offline, every
    sample errored with a ConnectionError. Only the mock model changes (providers count their own usage),
    and the method it overrides is the one inspect documents for overriding (``ModelAPI.count_text_tokens``).
    Idempotent; called when inspect loads this module."""
    from inspect_ai.model._providers.mockllm import MockLLM

    async def count_text_tokens(self: Any, text: str) -> int:
        return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))

    MockLLM.count_text_tokens = count_text_tokens  # type: ignore[method-assign]


offline_mock_tokens()

# the "paperfields" model provider (--model paperfields/<backend>), registered when inspect loads this entry point
from paperfields.integrations import inspect_model  # noqa: E402, F401

TASK_NAME = "paperfields"  # registered as paperfields/paperfields (inspect prefixes the package name)
# The shape of the task's metadata and scores, in the task's
# metadata: what paperfields import-inspect recognizes a log by.
TASK_FORMAT = 1
REPLIES = "paperfields_replies"  # the sample store's list of replies, one per request
# -T structured=...: how the record's schema goes into the request (inspect parses true/false as booleans)
STRUCTURED = {
    True: "schema",
    "true": "schema",
    "schema": "schema",
    "grammar": "grammar",
    False: "none",
    "false": "none",
    "none": "none",
}
COUNTS = ("tp", "fp", "fn")
# inspect's standard reasons for a score of a reply that could not be read
REASONS = {
    FailureClass.refusal: "refusal",
    FailureClass.empty_reply: "no_response",
    FailureClass.malformed_json: "invalid_response_format",
    FailureClass.schema_invalid: "invalid_response_format",
    FailureClass.truncated: "invalid_response_format",
}


class TaskSetup:
    """What the task, its solver and its scorer share, built from the task options: the papers of
    ``split`` (corpus order), the strategy (after the checks ``paperfields run`` makes: few-shot
    examples come from dev, so a few-shot task runs on the test split, or on a corpus of one's own
    without dev abstracts), gold by paper id and the task's metadata. Raises RunError, PromptError,
    CorpusError, GoldError as ``paperfields run`` does."""

    def __init__(self, split: str = "test", strategy: str = "zero_shot", corpus: Optional[str] = None) -> None:
        gold_path = paths.gold_dir() / "gold.jsonl"
        all_papers, corpus_file, own = api.load_papers(corpus)
        corpus_name = str(corpus_file or paths.gold_dir() / "corpus.jsonl")
        self.papers: list[Paper] = api.select_split(all_papers, split, gold_path, corpus_name)
        own_all = own and split == "all"
        self.strategy = Strategy(strategy, split=None if own_all else split)
        if self.strategy.kind == "few_shot" and own_all:
            api.check_no_dev_papers(self.papers, "few-shot examples come from the dev split", corpus_name, gold_path)
        self.gold: dict[str, GoldRecord] = {g.id: g for g in load_gold(gold_path)}
        self.by_id = {p.id: p for p in self.papers}
        t = self.strategy.template
        # what the strategy's requests carry (inspect's own generate config sets what is sent)
        self.params = GenerationParams(temperature=t.temperature or 0.0, max_tokens=DEFAULT_MAX_TOKENS)
        self.metadata: dict[str, Any] = {
            "paperfields_task": TASK_FORMAT,
            "paperfields_version": __version__,
            # the checkout's commit (-dirty with uncommitted changes; None for a wheel): the register's report pins it
            "git_commit": git_commit(),
            "strategy": strategy,
            "prompt_version": t.version,
            "prompt_sha256": self.strategy.sha256,
            "example_ids": self.strategy.example_ids(),
            "split": split,
            # a corpus of one's own: its fingerprint (a run folder per
            # corpus) and file (where show and report read the abstracts)
            "corpus": corpus_identity(corpus_file, self.papers) if own and corpus_file else None,
            "corpus_path": str(corpus_file.resolve()) if corpus_file else None,
            "schema_version": SCHEMA_VERSION,
            "scorer_version": SCORER_VERSION,
            "gold_version": gold_fingerprint(gold_path),
            "temperature": t.temperature or 0.0,
            "samples": self.strategy.samples,
        }


def chat_messages(messages: list[dict[str, str]]) -> list[ChatMessage]:
    """inspect chat messages from PaperFields' ``{"role", "content"}`` dicts (system, user, assistant)."""
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    return [kinds[m["role"]](content=m["content"]) for m in messages]


def record_schema(model: type[BaseModel]) -> ResponseSchema:
    """inspect's structured-output request for ``model``: its JSON Schema (definitions inlined by
    inspect's :func:`json_schema`) in OpenAI's strict form (:func:`~paperfields.core.schema.all_required`:
    every property required, ``additionalProperties: false``, no ``default``), ``strict`` true."""
    schema = all_required(json_schema(model).model_dump(exclude_none=True), strict=True)
    return ResponseSchema(name=model.__name__, json_schema=JSONSchema.model_validate(schema), strict=True)


def samples(setup: TaskSetup) -> list[Sample]:
    """One inspect sample per paper (see the module docstring)."""
    out = []
    for paper in setup.papers:
        gold = setup.gold.get(paper.id)
        out.append(
            Sample(
                id=paper.id,
                input=chat_messages(setup.strategy.messages(paper)),
                target=compact(gold.record.model_dump(mode="json")) if gold else "",
                metadata={
                    "paper_id": paper.id,
                    "strategy": setup.strategy.name,
                    "prompt_version": setup.strategy.template.version,
                    "prompt_sha256": setup.strategy.sha256,
                    "example_ids": setup.strategy.example_ids(paper),
                    "gold_split": gold.split if gold else None,
                },
            )
        )
    return out


@solver
def ask(split: str = "test", strategy: str = "zero_shot", corpus: Optional[str] = None) -> Solver:
    """Ask the model for each request of the strategy, round by round (:class:`Rounds`, the driver of
    ``paperfields run``: a self-consistency strategy's samples, sample i > 0 with ``seed`` i; a later
    round's requests made from the answers before), and keep every reply in the sample store under
    ``paperfields_replies``, in order: ``text``, inspect's ``stop_reason``, token counts and seconds.
    The options are the task's. Raises RuntimeError on a second epoch (the scores count one answer per paper)."""
    setup = TaskSetup(split, strategy, corpus)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.epoch > 1:
            raise RuntimeError("the paperfields task scores one answer per paper: run it with one epoch (no --epochs)")
        prompt = list(state.messages)
        replies: list[dict[str, Any]] = []
        rounds = Rounds(setup.strategy, setup.by_id[str(state.sample_id)], setup.params)
        while not rounds.done:
            answers = []
            for request in rounds.requests:
                # the first round's messages are the sample's input; a later round's are the strategy's own
                state.messages = list(prompt) if rounds.round == 0 else chat_messages(request.messages)
                index = request.sample_index
                state = await generate(state, tool_calls="none", **({"seed": index} if index else {}))
                replies.append(_reply(state))
                answers.append(read_reply(replies[-1], request.response_model))
            rounds.answer(answers)
        state.store.set(REPLIES, replies)
        return state

    return solve


def _reply(state: TaskState) -> dict[str, Any]:
    output = state.output
    usage = output.usage
    return {
        "text": output.completion,
        "stop_reason": output.stop_reason,
        "input_tokens": usage.input_tokens if usage else 0,
        "output_tokens": usage.output_tokens if usage else 0,
        "reasoning_tokens": (usage.reasoning_tokens or 0) if usage else 0,
        "seconds": output.time or 0.0,
    }


def replayed(setup: TaskSetup, paper: Paper, replies: list[dict[str, Any]]) -> Generation:
    """The paper's Generation from its stored replies (see :func:`ask`): the strategy's rounds replayed,
    each request answered by the next reply (read by :func:`read_reply`); no reply for a request is an
    ``empty_reply`` failure."""
    rounds = Rounds(setup.strategy, paper, setup.params)
    left = list(replies)
    while not rounds.done:
        if len(left) < len(rounds.requests):
            return Generation(failure=FailureClass.empty_reply, error="no reply", attempts=0)
        taken, left = left[: len(rounds.requests)], left[len(rounds.requests) :]
        rounds.answer([read_reply(r, q.response_model) for r, q in zip(taken, rounds.requests)])
    return rounds.result


def read_reply(reply: dict[str, Any], response_model: type[BaseModel]) -> Generation:
    """One stored reply (see :func:`ask`) as a PaperFields Generation: inspect's ``max_tokens`` stop is
    ``finish_reason="length"`` (truncated), ``model_length`` a truncation too, or ``context_overflow``
    when nothing came back (the prompt did not fit), ``content_filter`` a refusal; anything else goes
    through :func:`parse_reply` with inspect's stop reason as the finish reason."""
    text, stop = reply.get("text") or "", reply.get("stop_reason")
    if stop == "model_length" and not text.strip():
        gen = Generation(
            raw_text=text,
            finish_reason=stop,
            failure=FailureClass.context_overflow,
            error="the prompt does not fit the model's context window (stop_reason=model_length)",
        )
    elif stop == "content_filter":
        gen = Generation(
            raw_text=text,
            finish_reason=stop,
            failure=FailureClass.refusal,
            error="the provider's content filter stopped the reply (stop_reason=content_filter)",
        )
    else:
        gen = parse_reply(text, "length" if stop in ("max_tokens", "model_length") else stop, response_model)
        gen.finish_reason = stop
    gen.usage = Usage(
        input_tokens=reply.get("input_tokens", 0),
        output_tokens=reply.get("output_tokens", 0),
        reasoning_tokens=reply.get("reasoning_tokens", 0),
    )
    gen.latency_s = round(float(reply.get("seconds") or 0.0), 3)
    return gen


def counts_value(counts: dict[str, tuple[int, int, int]], answered: bool) -> dict[str, int]:
    """A score value from :func:`~paperfields.scoring.score.score_paper`'s counts: ``<field>_tp``,
    ``<field>_fp``, ``<field>_fn`` for each of REPORTED_FIELDS, and ``answered`` (1 or 0)."""
    value = {f"{field}_{kind}": int(n) for field in REPORTED_FIELDS for kind, n in zip(COUNTS, counts[field])}
    value["answered"] = int(answered)
    return value


def _integer(value: Any, key: str) -> int:
    number = float(value)
    if not number.is_integer():
        raise ValueError(
            f"score value '{key}' is {number}, not a count: the paperfields metrics pool one answer per paper "
            "(run with one epoch; inspect averaged the counts of several)"
        )
    return int(number)


def per_paper_counts(scores: list[SampleScore]) -> tuple[list[dict[str, tuple[int, int, int]]], list[bool]]:
    """The per-paper counts (as :func:`~paperfields.scoring.score.score_paper` gives them) and
    whether each paper was answered, read back from the scores' values. Raises ValueError for a value
    that is not a whole count (several epochs averaged) or lacks a field."""
    per_paper, answered = [], []
    for sample_score in scores:
        value = sample_score.score.as_dict()
        try:
            per_paper.append(
                {f: tuple(_integer(value[f"{f}_{k}"], f"{f}_{k}") for k in COUNTS) for f in REPORTED_FIELDS}
            )
            answered.append(bool(_integer(value["answered"], "answered")))
        except KeyError as exc:
            raise ValueError(
                f"sample {sample_score.sample_id}: score value has no '{exc.args[0]}' (not a paperfields score)"
            ) from None
    return per_paper, answered


@metric(name="headline")
def headline() -> Any:
    """The run's headline and its 95% bootstrap CI, from the papers' pooled counts
    (:func:`paperfields.scoring.score.headline`, what ``paperfields score`` reports): ``headline``,
    ``headline_ci95_low``, ``headline_ci95_high`` (left out when undefined: fewer than 2 papers).
    Over no scored paper the headline is NaN, inspect's value for a metric over zero samples, never
    left out: inspect resolves the task's declared headline metric on every progress update, the first
    before any sample is scored, and warned "Headline metric 'headline' not found" when it was missing."""

    def compute(scores: list[SampleScore]) -> dict[str, Optional[float]]:
        per_paper, _ = per_paper_counts(scores)
        value, ci, _ = pooled_headline(per_paper)
        return {
            "headline": math.nan if value is None else value,
            "headline_ci95_low": ci[0] if ci else None,
            "headline_ci95_high": ci[1] if ci else None,
        }

    return compute


@metric(name="fields")
def fields() -> Any:
    """Each reported field's score (micro F1 pooled over papers, or accuracy for ``research_area`` and
    ``training_free``; :func:`paperfields.scoring.score.aggregate`; left out when undefined: nothing in
    gold and nothing predicted) and ``valid_rate``, the share of papers with a record."""

    def compute(scores: list[SampleScore]) -> dict[str, Optional[float]]:
        per_paper, answered = per_paper_counts(scores)
        out: dict[str, Optional[float]] = {"valid_rate": round(sum(answered) / len(answered), 4) if answered else None}
        out.update({field: agg.score for field, agg in aggregate(per_paper, answered=answered).items()})
        return out

    return compute


@scorer(metrics=[headline(), fields()])
def record_scorer(split: str = "test", strategy: str = "zero_shot", corpus: Optional[str] = None) -> Scorer:
    """PaperFields' scorer for the task's samples (see the module docstring for the score's shape).
    The options are the task's: they give the strategy that reads the replies and the gold."""
    setup = TaskSetup(split, strategy, corpus)

    async def score(state: TaskState, target: Target) -> Score:
        paper = setup.by_id[str(state.sample_id)]
        gen = replayed(setup, paper, state.store.get(REPLIES) or [])
        failure = gen.failure.value if gen.failure else None
        metadata = {"failure": failure, "generation": gen.model_dump(mode="json")}
        answer = compact(gen.record) if gen.record is not None else None
        gold = setup.gold.get(paper.id)
        if gold is None:
            return Score.unscored(reason="no gold record for this paper", answer=answer, metadata=metadata)
        counts = score_paper(gen.record, gold, paper.text)
        wrong = [f for f in REPORTED_FIELDS if counts[f][1] or counts[f][2]]
        explanation = (
            f"{failure}: {gen.error}"
            if failure
            else "every field right"
            if not wrong
            else f"fields with a miss or an extra: {', '.join(wrong)}"
        )
        return Score(
            value=counts_value(counts, gen.record is not None),
            answer=answer,
            explanation=explanation,
            reason=REASONS.get(gen.failure) if gen.failure else None,
            metadata=metadata,
        )

    return score


@task(name=TASK_NAME)
def paperfields_task(
    split: str = "test", strategy: str = "zero_shot", corpus: Optional[str] = None, structured: Union[bool, str] = True
) -> Task:
    """PaperFields: structured extraction of a record (method, tasks, datasets, results, ...) from each
    ML paper abstract of ``split``, scored against hand-labeled gold with PaperFields' own scorer.

    ``split``: test (default), dev or all; ``strategy``: a prompt file of ``prompts/``, by name
    (``paperfields run --help`` lists them; any kind, one round or more); ``corpus``: a corpus JSONL of one's own
    (with ``split=all``; papers without gold are unscored); ``structured``: ``true``/``schema`` (the
    provider's structured output), ``grammar`` (llama.cpp's JSON-schema grammar, as ``paperfields run
    --grammar``) or ``false``/``none`` (only the prompt asks for JSON). Raises ValueError for another
    ``structured``; RunError, PromptError, CorpusError, GoldError as ``paperfields run``."""
    constraint = STRUCTURED.get(structured if isinstance(structured, bool) else str(structured).lower())
    if constraint is None:
        raise ValueError(f"-T structured={structured}: give true (or schema), grammar, or false (or none)")
    setup = TaskSetup(split, strategy, corpus)
    model = setup.strategy.response_model
    config = GenerateConfig(
        temperature=setup.metadata["temperature"],
        max_tokens=DEFAULT_MAX_TOKENS,
        seed=0,
        response_schema=record_schema(model) if constraint == "schema" else None,
        # the request body paperfields run --grammar sends a llama.cpp server (extract/backends/openai_compat.py)
        extra_body={"response_format": {"type": "json_object", "schema": strict_schema(model)}}
        if constraint == "grammar"
        else None,
    )
    return Task(
        dataset=MemoryDataset(
            samples(setup), name=f"paperfields-{split}", location=setup.metadata["corpus_path"] or "gold/corpus.jsonl"
        ),
        solver=ask(split, strategy, corpus),
        scorer=record_scorer(split, strategy, corpus),
        config=config,
        epochs=1,
        metadata={**setup.metadata, "structured_output": constraint},
        headline_metric=HeadlineMetric(metric="headline"),
        version=TASK_FORMAT,
    )
