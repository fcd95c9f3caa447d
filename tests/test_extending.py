"""The two seams of docs/extending.md, used as a contributor would: a new OpenAI-compatible provider with
an option of its own (a row of data and a request-body hook) and a strategy whose second request depends
on the first answer (a kind of two rounds and its prompt file), run end to end over HTTP against the
stub servers (tests/openai_stub.py, tests/batch_stub.py): one by one, through --batch and through the
inspect task. Nothing else in the package is edited for either."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Optional

import pytest
from pydantic import Field

import paperfields as pf
from paperfields.core.paths import prompts_dir
from paperfields.core.runlog import load_manifest, read_predictions
from paperfields.extract.backends import base
from paperfields.extract.backends.openai_compat import (
    OPENAI_COMPATIBLE,
    OpenAICompatible,
    OpenAIOptions,
    register_openai_compatible,
)
from paperfields.extract.strategies import _KINDS, Kind, PromptTemplate, compact, kind
from tests.cli_in_process import run_cli
from tests.openai_stub import reply

KEY = "sk-toy-0000000000000000000000"
FIRST = {"method_name": "ToyNet", "tasks": ["toy task"], "datasets": ["ToySet"]}
CHECKED = {"method_name": "ToyNet", "tasks": ["toy task"], "datasets": ["ToySet", "ToySet-2"]}
CHECK = "Check your record against the abstract once more and answer with the corrected record only."


# --- the provider: one row of data, one option of its own, one hook (docs/extending.md, "A provider") ---


class ToyOptions(OpenAIOptions):
    """toyai/: the OpenAI-compatible options, and how deep the toy model thinks."""

    depth: Optional[int] = Field(default=None, ge=1, description="how deep the toy model thinks")


def _toy_body(model: str, options: ToyOptions) -> dict[str, Any]:
    return {"toy_depth": options.depth} if options.depth is not None else {}


TOY = OpenAICompatible(
    "toyai", None, "TOYAI_API_KEY", options=ToyOptions, body=_toy_body, batch=True, about="a toy provider"
)


# --- the strategy: one kind of two rounds and its prompt file (docs/extending.md, "A strategy") ---------


class SelfCheckTemplate(PromptTemplate):
    check: str  # the second round's question, after the model's first record


class SelfCheck(Kind):
    """Extract, then show the model its own record and ask for the corrected one; the checked record
    when it is valid, else the first."""

    template = SelfCheckTemplate
    templates = ("system", "user", "check")

    def conversation(self, paper, params):
        [first] = yield self.strategy.requests(paper, params)
        if first.record is None:
            return self.finalize(paper, [first])
        (request,) = self.strategy.requests(paper, params)
        messages = request.messages + [
            {"role": "assistant", "content": compact(first.record)},
            {"role": "user", "content": self.strategy.render("check", paper=paper)},
        ]
        [second] = yield [request.model_copy(update={"messages": messages})]
        return self.finalize(paper, [second, first])


SELF_CHECK_TOML = f'''name = "self_check"
version = "1"
description = "Extract, then check the record once."
kind = "self_check"
system = """{{% include "field_guide.jinja" %}}"""
user = """Abstract:\\n{{{{ paper.text }}}}"""
check = """{CHECK}"""
'''


@pytest.fixture()
def extended(hermetic, monkeypatch):
    """The toy provider and the self_check kind registered, its prompt file among the project's prompts;
    the registries put back afterwards."""
    base.providers()  # the built-in providers registered first, so that putting the registry back keeps them
    providers, rows, kinds = dict(base._PROVIDERS), dict(OPENAI_COMPATIBLE), dict(_KINDS)
    register_openai_compatible(TOY)
    kind("self_check")(SelfCheck)
    shutil.copytree(prompts_dir(), hermetic / "prompts")  # the project's prompts dir: $PAPERFIELDS_ROOT/prompts
    (hermetic / "prompts" / "self_check.toml").write_text(SELF_CHECK_TOML, encoding="utf-8")
    monkeypatch.setenv("TOYAI_API_KEY", KEY)
    yield hermetic
    for registry, before in ((base._PROVIDERS, providers), (OPENAI_COMPATIBLE, rows), (_KINDS, kinds)):
        registry.clear()
        registry.update(before)


def _records(run_dir: Path) -> dict[str, Any]:
    return {line.paper_id: line for line in read_predictions(run_dir / "predictions.jsonl")}


def test_a_toy_provider_and_a_two_round_strategy_run_one_by_one(extended, stub, monkeypatch, tmp_path):
    monkeypatch.setenv("TOYAI_BASE_URL", stub.url)  # the provider's own server: the stub
    stub.script[:] = [reply(json.dumps(FIRST)), reply(json.dumps(CHECKED))]
    result = pf.run(
        backend="toyai/toy-1", strategy="self_check", limit=1, provider_options={"depth": 3}, runs_dir=tmp_path / "runs"
    )
    assert result.run_dir.name == "toyai_toy-1__self_check__test__depth-3"  # the option names the run
    first, second = (r["body"] for r in stub.requests)
    assert first["toy_depth"] == second["toy_depth"] == 3  # the hook's key, in both rounds' requests
    headers = {k.lower(): v for k, v in stub.requests[0]["headers"].items()}
    assert headers["authorization"] == f"Bearer {KEY}"  # the key from the provider's variable
    # the second request: the first one's conversation, the model's record, the check (md_json: instructor's
    # instructions follow the last user message, the paper's in the first request, the check in the second)
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user"]
    assert second["messages"][0] == first["messages"][0]
    assert first["messages"][1]["content"].startswith(second["messages"][1]["content"])
    assert second["messages"][2] == {"role": "assistant", "content": compact(_valid(FIRST))}
    assert second["messages"][3]["content"].startswith(CHECK)
    (line,) = _records(result.run_dir).values()
    assert line.record["datasets"] == ["ToySet", "ToySet-2"]  # the checked record
    assert line.attempts == 2 and line.usage.input_tokens == 200  # both rounds counted
    config = load_manifest(result.run_dir).config
    assert config.provider_options == {"depth": 3} and config.mode == "md_json"  # recorded; the row's mode
    assert KEY not in (result.run_dir / "manifest.json").read_text()

    # The option is part of the cache key: the same call is answered from the cache, another depth asks again.
    asked = len(stub.requests)
    again = pf.run(
        backend="toyai/toy-1",
        strategy="self_check",
        limit=1,
        provider_options={"depth": 3},
        runs_dir=tmp_path / "again",
    )
    assert len(stub.requests) == asked and _records(again.run_dir)[line.paper_id].cached
    deeper = pf.run(
        backend="toyai/toy-1", strategy="self_check", limit=1, provider_options={"depth": 4}, runs_dir=tmp_path / "runs"
    )
    assert len(stub.requests) == asked + 2 and stub.requests[-1]["body"]["toy_depth"] == 4
    assert deeper.run_dir != result.run_dir


def _valid(record: dict[str, Any]) -> dict[str, Any]:
    from paperfields.core.schema import PaperRecord

    return PaperRecord.model_validate(record).model_dump(mode="json")


def test_the_command_line_takes_the_option_and_names_a_wrong_one(extended, stub, monkeypatch, tmp_path):
    monkeypatch.setenv("TOYAI_BASE_URL", stub.url)
    runs = str(tmp_path / "runs")
    args = ["run", "-b", "toyai/toy-1", "-s", "self_check", "--limit", "1", "--no-score", "-q", "--runs-dir", runs]
    wrong = run_cli(*args, "-o", "dept=3")
    assert wrong.returncode == 2 and "options that do not apply to toyai/toy-1: -o dept" in wrong.stderr
    assert "toyai/ takes --base-url, --grammar, --mode, --retries, --timeout, -o depth, -o reasks" in wrong.stderr
    bad = run_cli(*args, "-o", "depth=0")
    assert bad.returncode == 2 and "toyai/toy-1: -o depth: Input should be greater than or equal to 1" in bad.stderr
    assert not stub.requests  # refused before any request
    ok = run_cli(*args, "-o", "depth=2")
    assert ok.returncode == 0, ok.stderr
    assert [r["body"]["toy_depth"] for r in stub.requests] == [2, 2]
    listed = run_cli("providers")
    assert "toyai/" in listed.stdout and "TOYAI_API_KEY" in listed.stdout
    helped = run_cli("run", "--help").stdout
    assert "toyai/" in helped  # the provider list is the registry's
    assert "self_check" in " ".join(helped.split())  # the strategies are the prompt files


def test_the_same_run_through_the_batch_api_asks_the_second_round_as_a_second_job(extended, monkeypatch, tmp_path):
    from tests.batch_stub import BatchStub

    with BatchStub(polls_in_progress=0) as server:
        monkeypatch.setenv("TOYAI_BASE_URL", server.url)
        server.script[:] = [reply(json.dumps(FIRST)), reply(json.dumps(CHECKED))]
        result = pf.run(
            backend="toyai/toy-1",
            strategy="self_check",
            limit=1,
            provider_options={"depth": 3},
            batch=True,
            poll_interval=0,
            runs_dir=tmp_path / "runs",
        )
    (line,) = _records(result.run_dir).values()
    assert line.record["datasets"] == ["ToySet", "ToySet-2"] and line.attempts == 2
    jobs = [
        [json.loads(raw) for raw in (result.run_dir / f"batch_{job}_input.jsonl").read_text().splitlines()]
        for job in (1, 2)
    ]
    assert [[r["custom_id"] for r in job] for job in jobs] == [[f"{line.paper_id}#0"], [f"{line.paper_id}#0@1"]]
    assert jobs[0][0]["body"]["toy_depth"] == jobs[1][0]["body"]["toy_depth"] == 3
    assert jobs[1][0]["body"]["messages"][-1] == {
        "role": "user",
        "content": CHECK,
    }  # batch sends the messages as they are
    assert len(load_manifest(result.run_dir).batch_ids) == 2


def test_the_two_round_strategy_in_the_inspect_task(extended, stub, monkeypatch, tmp_path):
    inspect_ai = pytest.importorskip("inspect_ai")
    from paperfields.integrations.inspect_task import paperfields_task

    monkeypatch.setenv("STUB_API_KEY", "sk-test-not-a-real-key")
    stub.script[:] = [reply(json.dumps(FIRST)), reply(json.dumps(CHECKED))]
    (log,) = inspect_ai.eval(
        paperfields_task(strategy="self_check"),
        model="openai-api/stub/stub-model",
        model_base_url=stub.url,
        limit=1,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    first, second = (r["body"]["messages"] for r in stub.requests)
    assert second[: len(first)] == first and second[-1] == {"role": "user", "content": CHECK}  # inspect: as they are
    (sample,) = log.samples
    generation = next(iter(sample.scores.values())).metadata["generation"]
    assert generation["record"]["datasets"] == ["ToySet", "ToySet-2"] and generation["attempts"] == 2


def test_a_batch_run_interrupted_in_its_second_round_resumes_from_the_first_job_s_files(extended, tmp_path):
    """No response cache: the first round's answers come back from the folder's first job's output file
    when the rerun replays each paper's rounds; the second job is polled again, never submitted twice."""
    import asyncio
    import time

    from paperfields.api import load_papers
    from paperfields.core.runlog import RunConfig
    from paperfields.extract.backends import get_backend
    from paperfields.extract.batch import load_state, run_batch
    from paperfields.extract.strategies import Strategy
    from tests.batch_stub import BatchStub

    papers = load_papers()[0][:2]
    strategy = Strategy("self_check", split=None)
    config = RunConfig(
        backend="toyai/toy-1",
        strategy="self_check",
        prompt_version="1",
        prompt_sha256=strategy.sha256,
        split="all",
        batch=True,
        provider_options={"depth": 3},
    )
    run_dir = tmp_path / "run"
    with BatchStub(polls_in_progress=0) as server:
        server.held.add("batch_2")
        client = lambda: get_backend("toyai/toy-1", base_url=server.url).raw_client  # noqa: E731

        async def interrupted() -> None:
            task = asyncio.ensure_future(run_batch(papers, strategy, config, run_dir, client(), poll_interval_s=0.01))
            deadline = time.monotonic() + 120
            while server.count("GET", "/v1/batches/batch_2") < 2:  # the second job is being polled: a state, not a time
                assert not task.done(), task.exception()
                assert time.monotonic() < deadline, "the second job was never polled"
                await asyncio.sleep(0.01)
            task.cancel()
            await task

        server.script[:] = [reply(json.dumps(FIRST)), reply(json.dumps(FIRST)), reply(json.dumps(CHECKED))]
        with pytest.raises(asyncio.CancelledError):
            asyncio.run(interrupted())
        assert load_state(run_dir).batch_id == "batch_2" and not _records(run_dir)
        server.held.clear()
        manifest = asyncio.run(run_batch(papers, strategy, config, run_dir, client(), poll_interval_s=0.01))
    assert manifest.status == "complete" and manifest.batch_ids == ["batch_1", "batch_2"]
    assert server.count("POST", "/v1/batches") == 2  # nothing asked again
    lines = _records(run_dir)
    assert [lines[p.id].attempts for p in papers] == [2, 2]
    assert lines[papers[0].id].record["datasets"] == ["ToySet", "ToySet-2"]  # the checked record of the first paper


# --- a board number: a key of the row and one number(...) declaration (docs/extending.md, "A board metric") -----


def test_a_new_number_of_the_board_row_reaches_the_markdown_the_csv_and_the_terminal(monkeypatch):
    """The board half of a new metric, made from a test: the row gains a key (here computed from the published
    scores, where scoring/score.py would store it in RunScores), and one ``number(...)`` puts it in the Markdown
    table, the web page's and, among TERMINAL_WIDE_COLUMNS, the terminal; the csv flattens the row, so it
    has the column with nothing more."""
    import csv
    import io

    from rich.console import Console

    from paperfields.scoring import board
    from paperfields.scoring.runs import _read_scores
    from tests.conftest import PUBLISHED_RUNS

    row = board._row
    monkeypatch.setattr(board, "_row", lambda s, rank: {**row(s, rank), "toy_rate": 0.25 if s.reference else 0.5})
    toy = board.number("toy_rate", "toy", board._percent)
    monkeypatch.setattr(board, "MAIN_COLUMNS", board.MAIN_COLUMNS + (toy,))
    monkeypatch.setattr(board, "TERMINAL_WIDE_COLUMNS", board.TERMINAL_WIDE_COLUMNS + (toy,))
    scores = [_read_scores(path) for path in sorted(PUBLISHED_RUNS.glob("*/scores.json"))]
    built = board.Board.of(scores)
    header = next(line for line in built.markdown().splitlines() if line.startswith("| rank |"))
    assert header.endswith("| contamination | toy |")
    assert {
        line.rsplit("|", 2)[-2].strip() for line in built.markdown().splitlines() if "| after cutoff |" in line
    } == {"50%"}
    rows = list(csv.DictReader(io.StringIO(built.csv())))
    assert {r["toy_rate"] for r in rows} == {"0.5", "0.25"} and len(rows) == len(scores)
    console = Console(file=io.StringIO(), width=400)
    console.print(built.terminal(wide=True))
    lines = console.file.getvalue().splitlines()
    assert lines[1].rstrip().endswith(" toy") and " 50%" in lines[2]
    console = Console(file=io.StringIO(), width=400)
    console.print(built.terminal())
    assert " toy" not in console.file.getvalue().splitlines()[1]  # not among the default columns


def test_the_local_provider_offers_every_model_whose_weights_it_knows():
    """`paperfields providers` read the local models from a hand-typed text that left gemma3-270m out."""
    from paperfields.extract.backends.base import providers
    from paperfields.extract.backends.weights import WEIGHTS

    about = providers()["local"].about
    assert set(WEIGHTS) == {"qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b", "gemma3-270m"}
    assert all(name in about for name in WEIGHTS), about
