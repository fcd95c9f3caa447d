"""The options of an extraction and of a run: one typed object shared by the Python API and the CLI.

:class:`ExtractOptions` (one abstract: :func:`paperfields.api.extract_record`) and :class:`RunOptions`
(a corpus: :func:`paperfields.api.run`, ``paperfields run``) list every option once, with its type,
default, bounds and help text; the ``paperfields run`` flags are made from these fields
(:func:`cli_parameters`), so a new option is one field here. "Unset" is ``None``, never a number:
``temperature=None`` is the strategy's own (0.7 for self_consistency, else 0), ``temperature=0``
is 0 (:meth:`ExtractOptions.temperature_for`, the one place the strategy's default is applied).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.fields import FieldInfo

DEFAULT_BACKEND = "local/qwen2.5-coder-0.5b"
"""The backend of ``paperfields run`` and ``pf.run`` when none is given: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M
GGUF) in-process through llama.cpp, offline, its weights installed by ``./install.sh``."""
DEFAULT_MAX_TOKENS = 1536


def _cli(*flags: str, **typer_options: Any) -> dict[str, Any]:
    """A field's command-line form: its flags (default ``--`` plus the name with dashes) and further
    ``typer.Option`` arguments (``min``, ``metavar``) that the API does not enforce."""
    return {"cli": {"flags": list(flags), **typer_options}}


class ExtractOptions(BaseModel):
    """How one abstract is extracted: the backend and its options, the strategy, generation
    parameters, the response cache. Unknown options are refused (``extra="forbid"``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: str = Field(
        DEFAULT_BACKEND,
        json_schema_extra=_cli("--backend", "-b"),
        description=(
            "provider/model: local/qwen2.5-coder-0.5b, local/qwen2.5-coder-1.5b, local/path/to/model.gguf, "
            "openai/<model>, gemini/<model>, ollama/<model>, ... (any registered provider; `paperfields "
            "providers` lists them with their options), rules/baseline (model-free floor), rules/empty (the "
            "default record for every paper: what abstaining scores)."
        ),
    )
    strategy: str = Field(
        "zero_shot",
        json_schema_extra=_cli("--strategy", "-s"),
        description="Prompt strategy, a prompts/<name>.toml file.",  # `paperfields run --help` lists the files
    )
    base_url: Optional[str] = Field(
        None,
        description=(
            "OpenAI-compatible providers: the server's URL instead of the provider's own (openai/ at vLLM, "
            "Ollama, llama.cpp server, ...). A key in it (http://user:KEY@host/v1) is sent as the API key; every "
            "file of the run records the URL with its key masked."
        ),
    )
    mode: Optional[str] = Field(
        None,
        description=(
            "OpenAI-compatible providers: the instructor mode, json, md_json, tools, json_schema "
            "(tools and json_schema send OpenAI's strict structured outputs) [default: the "
            "provider's; openai/: json_schema, md_json with --base-url]."
        ),
    )
    grammar: bool = Field(
        False,
        description=(
            "OpenAI-compatible providers: send the JSON schema in response_format so a llama.cpp server constrains its "
            "output to it."
        ),
    )
    temperature: Optional[float] = Field(
        None,
        ge=0.0,
        le=2.0,
        description=("Sampling temperature [default: the strategy's own: 0.7 for self_consistency, else 0]."),
    )
    threads: Optional[int] = Field(
        None,
        ge=1,
        description=(
            "local/ backends: CPU threads of each llama.cpp worker [default: 1 with one worker per core; cores / "
            "--workers with --workers]; does not "
            "change the output. One worker per core beat one many-threaded process on idle cores and far more on a "
            "busy machine, where a thread that shares its core holds the others back (bench/bench_threads.py)."
        ),
    )
    workers: Optional[int] = Field(
        None,
        ge=1,
        description=(
            "local/ backends: llama.cpp instances answering papers at once, each with --threads threads "
            "[default: one per core, or cores / --threads]; the weights are shared, each worker adds "
            "its own context memory. Does not change the output."
        ),
    )
    reasoning_effort: Optional[Literal["low", "medium", "high"]] = Field(
        None,
        description=(
            "OpenAI reasoning models only (o1, o3, o4-mini, gpt-5 families): how long the model thinks "
            "before it answers [default: the model's own]. Those models sample at their fixed "
            "temperature, so --temperature is not sent to them."
        ),
    )
    max_tokens: int = Field(
        DEFAULT_MAX_TOKENS,
        ge=1,
        description=("Maximum output tokens per reply (a longer reply is a 'truncated' failure)."),
    )
    timeout: Optional[float] = Field(
        None,
        gt=0,
        description=(
            "OpenAI-compatible providers and anthropic/: seconds one HTTP request may take before it is retried "
            "[default: 120]; recorded in the manifest."
        ),
    )
    retries: Optional[int] = Field(
        None,
        ge=0,
        description=(
            "OpenAI-compatible providers and anthropic/: HTTP retries after a 429, a 5xx or a timeout, with backoff "
            "(Retry-After honored) [default: 4]; recorded in the manifest."
        ),
    )
    provider_options: dict[str, Any] = Field(
        default_factory=dict,
        json_schema_extra=_cli("--option", "-o", metavar="KEY=VALUE", type=Optional[list[str]], default=None),
        description=(
            "An option of the provider's own, KEY=VALUE, repeatable (-o thinking_budget=1024 for gemini/, "
            "-o reasks=2): checked against the provider's options, which `paperfields providers` lists; "
            "one that changes the output is recorded in the run config and the cache key. In Python a "
            "dict, provider_options={'thinking_budget': 1024}."
        ),
    )
    cache: bool = Field(
        True,
        description=(
            "Answer repeated requests from the response cache ($PAPERFIELDS_RESPONSE_CACHE, else responses.sqlite in "
            "~/.cache/paperfields or $PAPERFIELDS_CACHE)."
        ),
    )

    def temperature_for(self, strategy_temperature: Optional[float]) -> float:
        """The temperature to sample at: the one given, else the strategy's own (``strategy_temperature``), else 0."""
        if self.temperature is not None:
            return self.temperature
        return strategy_temperature or 0.0

    @field_validator("provider_options", mode="before")
    @classmethod
    def _key_value_pairs(cls, value: Any) -> Any:
        """``["key=value", ...]`` (the command line's ``-o``) as a dict; a key given twice is refused."""
        if value is None:
            return {}
        if not isinstance(value, (list, tuple)):
            return value
        out: dict[str, str] = {}
        for pair in value:
            key, sep, given = str(pair).partition("=")
            if not sep or not key.strip():
                raise ValueError(f"-o {pair!r}: give KEY=VALUE, e.g. -o reasks=2")
            if key.strip() in out:
                raise ValueError(f"-o {key.strip()} is given twice")
            out[key.strip()] = given
        return out

    @model_validator(mode="after")
    def _each_option_once(self) -> ExtractOptions:
        twice = sorted(set(self._flag_options()) & set(self.provider_options))
        if twice:
            raise ValueError(f"{twice[0]} is given twice, by its own flag and by -o {twice[0]}: give it once")
        return self

    def _flag_options(self) -> dict[str, Any]:
        given = {
            "base_url": self.base_url,
            "mode": self.mode,
            "grammar": self.grammar or None,
            "n_threads": self.threads,
            "timeout_s": self.timeout,
            "transport_retries": self.retries,
            "workers": self.workers,
        }
        return {k: v for k, v in given.items() if v is not None}

    def backend_options(self) -> dict[str, Any]:
        """The backend options given, by the backend's own names: the shared ones that have a flag of
        their own (unset ones left out: each backend refuses options that do not apply to it, and a
        default must not trip that) and ``provider_options``."""
        return self._flag_options() | dict(self.provider_options)


class RunOptions(ExtractOptions):
    """How a corpus is run: :class:`ExtractOptions` plus the split, how many papers, concurrency, the
    price, where the run folder goes, Batch API and scoring."""

    split: str = Field("test", description="Papers to run: test, dev or all.")
    limit: Optional[int] = Field(
        None,
        ge=1,
        description=("Only the first N papers of the split (a later run with a larger limit continues the same run)."),
    )
    concurrency: Optional[int] = Field(
        None,
        ge=1,
        description=(
            "Papers in flight at once [default: against a hosted API 8, halved on its 429s; against a server on "
            "this machine or a private network the slots it says it has (llama.cpp's /props; a vLLM server 8), "
            "else 1; for local/ its workers, one per core]. Recorded in the manifest's concurrency, with why."
        ),
    )
    price: Optional[Any] = Field(
        None,
        json_schema_extra=_cli("--price", metavar="IN,OUT", type=Optional[str]),
        description=(
            "USD per million input and output tokens (e.g. 0.2,0.8) for a model not in "
            "paperfields/core/tables/prices.toml (else $/run is '?'); recorded in the "
            "manifest. In Python also a (IN, OUT) tuple or a Price."
        ),
    )
    run_id: Optional[str] = Field(
        None,
        description=(
            "Run folder name under --runs-dir [default: <provider>_<model>__<strategy>__<split>, plus a tag of the "
            "corpus for a corpus of your own, the --mode given, __grammar with --grammar and __batch with --batch]."
        ),
    )
    runs_dir: Optional[Path] = Field(
        None,
        description=(
            "Where the run folder goes [default: runs/, git-ignored; the published runs "
            "are in results/runs, see `paperfields publish`]."
        ),
    )
    score: bool = Field(True, description="Score the run and print the leaderboard when done.")
    batch: bool = Field(
        False,
        json_schema_extra=_cli("--batch"),
        description=(
            "Providers that serve the OpenAI Batch API (openai/): submit all papers as one batch job (half price, "
            "results within 24 h); run the same command again to poll and ingest. A job holds at most 50,000 "
            "requests and 200 MB: submit more in parts with --limit."
        ),
    )
    engine: Literal["asyncio", "ray"] = Field(
        "asyncio",
        description=(
            "What sends the requests: asyncio (this process) or ray (a Ray Data pipeline over an actor pool, on "
            "$RAY_ADDRESS or a Ray started here; pip install 'paperfields[ray]'). The same requests, replies and run "
            "folder either way; a run started with one resumes with the other. See docs/scaling.md."
        ),
    )
    poll_interval: float = Field(
        30.0, ge=0.0, description="--batch: seconds between two polls of the batch job's status."
    )


def _typer_option(name: str, field: FieldInfo) -> tuple[Any, Any]:
    """(annotation, typer.Option) of one options field."""
    import typer

    cli = dict((field.json_schema_extra or {}).get("cli", {})) if isinstance(field.json_schema_extra, dict) else {}
    flags = cli.pop("flags", None) or []
    annotation = cli.pop("type", field.annotation)
    default = cli.pop("default", field.default)
    for bound in field.metadata:  # ge / le: the same bounds, checked by the parser with its own message
        for attr, key in (("ge", "min"), ("le", "max")):
            if getattr(bound, attr, None) is not None:
                cli.setdefault(key, getattr(bound, attr))
    return annotation, typer.Option(default, *flags, help=field.description, **cli)


def cli_parameters(options: type[BaseModel]) -> list[inspect.Parameter]:
    """The command-line parameters of every field of ``options``, for a typer command's signature."""
    params = []
    for name, field in options.model_fields.items():
        annotation, default = _typer_option(name, field)
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation))
    return params
