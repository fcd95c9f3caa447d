"""The paperfields/paperfields task inside inspect_ai, offline: inspect's own mock model with scripted
replies, and inspect's OpenAI-compatible provider talking HTTP to the local stub server; then the log
back into a run folder whose ``paperfields score`` headline equals the task's own metric."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

inspect_ai = pytest.importorskip("inspect_ai")  # the [inspect] extra; ./install.sh test installs it

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.scorer import SampleScore, Score  # noqa: E402

from paperfields.core.corpus import load_corpus  # noqa: E402
from paperfields.core.gold import load_gold  # noqa: E402
from paperfields.core.runlog import RunError, load_manifest, read_predictions  # noqa: E402
from paperfields.core.schema import PaperRecord  # noqa: E402
from paperfields.extract.backends.openai_compat import strict_schema  # noqa: E402
from paperfields.extract.strategies import PromptError, Strategy, compact  # noqa: E402
from paperfields.integrations.inspect_log import import_inspect_log  # noqa: E402
from paperfields.integrations.inspect_task import paperfields_task, per_paper_counts  # noqa: E402
from paperfields.scoring.imported import import_predictions  # noqa: E402
from paperfields.scoring.runs import score_run  # noqa: E402
from paperfields.scoring.score import REPORTED_FIELDS, score_paper  # noqa: E402
from tests.cli_in_process import run_cli  # noqa: E402
from tests.conftest import ROOT  # noqa: E402
from tests.openai_stub import VALID, StubServer, reply  # noqa: E402

TASK = (
    "paperfields/paperfields"  # the name inspect's entry point gives the task (the command-line test runs it by name)
)
GOLD = {g.id: g for g in load_gold(ROOT / "gold" / "gold.jsonl")}
PAPERS = load_corpus(ROOT / "gold" / "corpus.jsonl")
TEST_IDS = [p.id for p in PAPERS if GOLD.get(p.id) and GOLD[p.id].split == "test"]


def _paper_of_text(text: str) -> str:
    return next(p.id for p in PAPERS if p.text in text)


def _paper_of(messages) -> str:
    """The paper a request is about: the one whose abstract is in its last user message."""
    return _paper_of_text(messages[-1].text)


def _gold_json(paper_id: str, **change) -> str:
    return json.dumps({**GOLD[paper_id].record.model_dump(mode="json"), **change})


def mock_model(replies: dict[str, tuple[str, str]], requests: list | None = None):
    """inspect's mockllm model answering each paper with its scripted (text, stop_reason); every request's
    (paper id, config) is appended to ``requests``."""

    def answer(messages, tools, tool_choice, config):
        paper_id = _paper_of(messages)
        if requests is not None:
            requests.append((paper_id, config, messages))
        text, stop = replies[paper_id]
        output = ModelOutput.from_content("mockllm/model", text, stop_reason=stop)
        output.usage = ModelUsage(
            input_tokens=100, output_tokens=20, total_tokens=120
        )  # else mockllm counts tokens with a downloaded encoding
        return output

    return get_model("mockllm/model", custom_outputs=answer)


def _eval(model, tmp_path, limit=None, **task_args):
    (log,) = inspect_eval(
        paperfields_task(**task_args), model=model, limit=limit, log_dir=str(tmp_path / "logs"), display="none"
    )
    assert log.status == "success", log.error
    return log


def _metrics(log) -> dict[str, float]:
    (scores,) = log.results.scores
    return {name: m.value for name, m in scores.metrics.items()}


# Six test papers: two right, one with a field wrong and an item
# invented, one malformed, one truncated, one fenced with prose.
SCRIPT_IDS = TEST_IDS[:6]


def _script() -> dict[str, tuple[str, str]]:
    a, b, c, d, e, f = SCRIPT_IDS
    return {
        a: (_gold_json(a), "stop"),
        b: (_gold_json(b), "stop"),
        c: (_gold_json(c, research_area="other", datasets=GOLD[c].record.datasets + ["InventedBench"]), "stop"),
        d: ('{"method_name": "Stub", "tasks": ["a"', "stop"),
        e: (_gold_json(e)[:120], "max_tokens"),
        f: ("Here is the record:\n```json\n" + _gold_json(f, tasks=[]) + "\n```\nDone.", "stop"),
    }


@pytest.fixture(scope="module")
def scripted(tmp_path_factory):
    """One mockllm eval of the six scripted papers (limit 6: the first six test papers in corpus order)."""
    tmp = tmp_path_factory.mktemp("mock")
    requests: list = []
    log = _eval(mock_model(_script(), requests), tmp, limit=6)
    return log, requests, tmp


def test_each_reply_kind_gets_its_failure_class_and_counts(scripted):
    log, requests, _ = scripted
    a, b, c, d, e, f = SCRIPT_IDS
    assert sorted(s.id for s in log.samples) == sorted(SCRIPT_IDS)
    assert len(requests) == 6  # one request per paper: no re-ask, no retry
    by_id = {s.id: next(iter(s.scores.values())) for s in log.samples}
    expected_failure = {a: None, b: None, c: None, d: "malformed_json", e: "truncated", f: None}
    assert {pid: score.metadata["failure"] for pid, score in by_id.items()} == expected_failure
    assert by_id[d].reason == by_id[e].reason == "invalid_response_format" and by_id[a].reason is None
    assert (
        "fenced" in by_id[f].metadata["generation"]["repairs"] and "prose" in by_id[f].metadata["generation"]["repairs"]
    )
    texts = {p.id: p.text for p in PAPERS}
    for pid, score in by_id.items():
        record = score.metadata["generation"]["record"]
        counts = score_paper(record, GOLD[pid], texts[pid])
        assert score.value == {
            **{f"{k}_{n}": counts[k][i] for k in REPORTED_FIELDS for i, n in enumerate(("tp", "fp", "fn"))},
            "answered": int(record is not None),
        }
        assert (score.answer is None) == (record is None)
    assert by_id[c].value["research_area_tp"] == 0 and by_id[c].value["datasets_fp"] == 1
    assert (
        by_id[d].value["answered"] == 0
        and by_id[d].value["tasks_tp"] == 0
        and by_id[d].value["tasks_fn"] == len(GOLD[d].record.tasks)
    )


def test_samples_carry_the_run_messages_and_prompt_hashes(scripted):
    log, requests, _ = scripted
    strategy = Strategy("zero_shot")
    papers = {p.id: p for p in PAPERS}
    for paper_id, config, messages in requests:
        assert [{"role": m.role, "content": m.text} for m in messages] == strategy.messages(papers[paper_id])
        assert config.temperature == 0.0 and config.max_tokens == 1536 and config.seed == 0
        schema = config.response_schema
        assert schema.name == "PaperRecord" and schema.strict is True
        assert schema.json_schema.additionalProperties is False and set(schema.json_schema.required) == set(
            schema.json_schema.properties
        )
    sample = log.samples[0]
    assert (
        sample.metadata["prompt_sha256"] == strategy.sha256
        and sample.metadata["prompt_version"] == strategy.template.version
    )
    assert sample.target == compact(GOLD[sample.id].record.model_dump(mode="json"))
    assert log.eval.metadata["prompt_sha256"] == strategy.sha256 and log.eval.metadata["split"] == "test"


def test_the_same_predictions_give_the_same_headline_in_inspect_and_in_paperfields_score(scripted):
    log, _, tmp = scripted
    metrics = _metrics(log)
    run_dir = import_inspect_log(Path(log.location), tmp / "runs")
    scores = score_run(run_dir, ROOT / "gold" / "gold.jsonl")
    assert scores.papers == 6 and scores.valid_rate == metrics["valid_rate"] == round(4 / 6, 4)
    assert 0 < scores.headline < 1
    assert metrics["headline"] == scores.headline != scores.per_paper_f1  # pooled counts, not a mean of per-paper F1s
    assert (metrics["headline_ci95_low"], metrics["headline_ci95_high"]) == scores.headline_ci95
    for field in REPORTED_FIELDS:
        assert metrics.get(field) == scores.fields[field].score, field

    # the same records written as an outside predictions file, scored by `paperfields score --predictions`
    lines = [
        {"paper_id": line.paper_id, "record": line.record, **({"failure": line.failure.value} if line.failure else {})}
        for line in read_predictions(run_dir / "predictions.jsonl")
    ]
    file = tmp / "same.jsonl"
    file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    outside = score_run(
        import_predictions(
            file, "same-records", "test", tmp / "outside", ROOT / "gold" / "gold.jsonl", ROOT / "gold" / "corpus.jsonl"
        ),
        ROOT / "gold" / "gold.jsonl",
    )
    assert outside.headline == metrics["headline"] and outside.headline_ci95 == scores.headline_ci95


def test_the_imported_run_records_model_usage_time_and_prompt(scripted):
    log, _, tmp = scripted
    run_dir = import_inspect_log(Path(log.location), tmp / "runs2", run_id="mine")
    manifest = load_manifest(run_dir)
    strategy = Strategy("zero_shot")
    config = manifest.config
    assert run_dir.name == "mine" and config.backend == "inspect/mockllm/model" and config.mode == "json_schema"
    assert (config.strategy, config.prompt_version, config.prompt_sha256, config.split) == (
        "zero_shot",
        strategy.template.version,
        strategy.sha256,
        "test",
    )
    assert config.params.temperature == 0.0 and config.params.max_tokens == 1536 and config.corpus is None
    assert manifest.paper_ids == SCRIPT_IDS and manifest.status == "complete" and manifest.papers_valid == 4
    assert manifest.failures_by_class == {"malformed_json": 1, "truncated": 1}
    assert manifest.usage.input_tokens == 600 and manifest.usage.output_tokens == 120 and manifest.model_requests == 6
    assert manifest.started_at and manifest.finished_at and manifest.dollars_total is None
    raw = json.loads((run_dir / "manifest.json").read_text())
    assert (
        raw["import"]["inspect_headline"] == _metrics(log)["headline"]
        and raw["import"]["imported_from"] == Path(log.location).name
    )
    lines = read_predictions(run_dir / "predictions.jsonl")
    assert [line.paper_id for line in lines] == SCRIPT_IDS and all(line.grounding for line in lines if line.record)
    # importing the same log again changes nothing; another log into the same folder is refused
    assert import_inspect_log(Path(log.location), tmp / "runs2", run_id="mine") == run_dir
    (run_dir / "predictions.jsonl").write_text(
        (run_dir / "predictions.jsonl").read_text().replace('"paper_id"', ' "paper_id"', 1)
    )
    with pytest.raises(RunError, match="holds other predictions"):
        import_inspect_log(Path(log.location), tmp / "runs2", run_id="mine")


def test_few_shot_sends_the_examples_and_records_them(tmp_path):
    requests: list = []
    paper = TEST_IDS[0]
    log = _eval(mock_model({paper: (_gold_json(paper), "stop")}, requests), tmp_path, limit=1, strategy="few_shot")
    strategy = Strategy("few_shot")
    ((_, _, messages),) = requests
    papers = {p.id: p for p in PAPERS}
    assert [{"role": m.role, "content": m.text} for m in messages] == strategy.messages(papers[paper])
    assert [m.role for m in messages].count("assistant") == strategy.template.k
    assert log.samples[0].metadata["example_ids"] == strategy.example_ids(papers[paper])
    assert log.eval.metadata["prompt_sha256"] == strategy.sha256 != Strategy("zero_shot").sha256
    with pytest.raises(
        PromptError, match="few-shot"
    ):  # as paperfields run: examples come from dev, so dev is never scored with them
        paperfields_task(strategy="few_shot", split="dev")


def test_self_consistency_asks_each_sample_with_its_own_seed_and_votes(tmp_path):
    requests: list = []
    paper = TEST_IDS[0]
    strategy = Strategy("self_consistency")
    log = _eval(
        mock_model({paper: (_gold_json(paper), "stop")}, requests), tmp_path, limit=1, strategy="self_consistency"
    )
    assert [config.seed for _, config, _ in requests] == [0] + list(range(1, strategy.samples))
    assert all(config.temperature == strategy.template.temperature for _, config, _ in requests)
    generation = next(iter(log.samples[0].scores.values())).metadata["generation"]
    assert (
        generation["notes"] == {"samples": strategy.samples, "valid_samples": strategy.samples}
        and generation["attempts"] == strategy.samples
    )
    assert generation["record"] == GOLD[paper].record.model_dump(mode="json")


def _failing_on(failing: str, answer_with: str):
    """mockllm raising for the paper ``failing`` and answering every other with the gold of ``answer_with``."""

    def answer(messages, tools, tool_choice, config):
        if _paper_of(messages) == failing:
            raise ValueError("scripted failure")
        output = ModelOutput.from_content("mockllm/model", _gold_json(answer_with))
        output.usage = ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120)
        return output

    return get_model("mockllm/model", custom_outputs=answer)


def test_an_errored_sample_imports_as_a_transport_error(tmp_path):
    a, b = TEST_IDS[:2]

    (log,) = inspect_eval(
        paperfields_task(),
        model=_failing_on(b, answer_with=a),
        limit=2,
        fail_on_error=False,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    run_dir = import_inspect_log(Path(log.location), tmp_path / "runs")
    manifest = load_manifest(run_dir)
    lines = {line.paper_id: line for line in read_predictions(run_dir / "predictions.jsonl")}
    assert (
        lines[a].record is not None
        and lines[b].failure.value == "transport_error"
        and "scripted failure" in lines[b].error
    )
    assert manifest.status == "incomplete" and manifest.papers_done == 1
    assert score_run(run_dir, ROOT / "gold" / "gold.jsonl").unfinished


def test_import_inspect_exits_1_for_an_errored_eval(tmp_path):
    """inspect eval exits 0 whatever happened to the samples (inspect 0.3.276's choice); the import, the
    second of the README's commands, is where a script notices, as after paperfields run."""
    a, b = TEST_IDS[:2]

    (log,) = inspect_eval(
        paperfields_task(),
        model=_failing_on(b, answer_with=a),
        limit=2,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "error"
    result = run_cli("import-inspect", log.location, "--runs-dir", tmp_path / "runs")
    assert result.returncode == 1, result.output
    said = " ".join(result.output.split())  # the console wraps at its width
    assert "error: the eval is incomplete: 1 paper of 2 errored or never ran" in said
    assert f"run `inspect eval-retry {log.location}`" in said
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert load_manifest(run_dir).status == "incomplete"  # the run folder is written all the same
    (ok,) = inspect_eval(
        paperfields_task(),
        model=mock_model({a: (_gold_json(a), "stop")}),
        limit=1,
        log_dir=str(tmp_path / "logs_ok"),
        display="none",
    )
    result = run_cli("import-inspect", ok.location, "--runs-dir", tmp_path / "runs_ok")
    assert result.returncode == 0, result.output


def test_the_headline_metric_is_there_before_any_sample_is_scored():
    """inspect resolves the declared headline on its first progress update, over no scores: a headline
    left out (None) made it warn "Headline metric 'headline' not found" on every eval (the command-line
    test below sees no warning)."""
    import math

    from paperfields.integrations.inspect_task import headline

    empty = headline()([])
    assert math.isnan(empty["headline"]) and empty["headline_ci95_low"] is None


def test_mockllm_runs_offline_from_the_command_line(tmp_path):
    """inspect eval paperfields/paperfields --model mockllm/model with no network: the mock model's usage
    is counted at 4 characters a token (it loaded tiktoken's o200k_base, a download, and every sample
    errored while the command exited 0); no headline warning; the made-up replies are malformed_json."""
    bin_dir = Path(sys.executable).parent
    tiktoken_cache = tmp_path / "tiktoken"
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(tiktoken_cache))
    for proxy in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy"):
        env[proxy] = "http://127.0.0.1:9"  # the discard port: any download fails at once, online or not
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    proc = subprocess.run(
        [str(bin_dir / "inspect"), "eval", TASK, "--model", "mockllm/model", "--limit", "2"]
        + ["--log-dir", str(tmp_path / "logs"), "--display", "plain"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "Headline metric" not in output and "WARNING" not in output, output
    (log_path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(log_path))
    assert log.status == "success", log.error
    assert not tiktoken_cache.exists() or not any(tiktoken_cache.iterdir())
    strategy, papers = Strategy("zero_shot"), {p.id: p for p in PAPERS}
    assert [s.id for s in log.samples] == TEST_IDS[:2]
    for sample in log.samples:
        assert next(iter(sample.scores.values())).metadata["failure"] == "malformed_json"
        prompt = "\n".join(m["content"] for m in strategy.messages(papers[sample.id]))
        assert sample.model_usage["mockllm/model"].input_tokens == -(-len(prompt) // 4)
    assert _metrics(log)["headline"] == 0.0


def test_a_second_epoch_is_refused(tmp_path):
    paper = TEST_IDS[0]
    (log,) = inspect_eval(
        paperfields_task(),
        model=mock_model({paper: (_gold_json(paper), "stop")}),
        limit=1,
        epochs=2,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "error" and "one epoch" in log.error.message


def test_the_metrics_refuse_averaged_counts():
    value = {f"{f}_{k}": 0 for f in REPORTED_FIELDS for k in ("tp", "fp", "fn")} | {"answered": 1, "tasks_tp": 0.5}
    with pytest.raises(ValueError, match="one epoch"):
        per_paper_counts([SampleScore(score=Score(value=value), sample_id="p1")])


def test_a_log_of_another_task_is_refused(tmp_path):
    from inspect_ai import Task
    from inspect_ai.dataset import Sample

    (log,) = inspect_eval(
        Task(dataset=[Sample(input="hi", target="x")], name="other"),
        model=mock_model({}),
        log_dir=str(tmp_path),
        display="none",
    )
    with pytest.raises(RunError, match="a log of the task 'other', not of paperfields/paperfields"):
        import_inspect_log(Path(log.location), tmp_path / "runs")
    with pytest.raises(RunError, match="missing.eval: no such file"):
        import_inspect_log(tmp_path / "missing.eval", tmp_path / "runs")
    (tmp_path / "text.eval").write_text("not a log")
    with pytest.raises(RunError, match="text.eval: not an inspect eval log"):
        import_inspect_log(tmp_path / "text.eval", tmp_path / "runs")


@pytest.fixture()
def stub(monkeypatch):
    with StubServer() as server:
        server.strict_schemas = True  # the task's response_schema must pass OpenAI's strict rules
        monkeypatch.setenv("STUB_API_KEY", "sk-test-not-a-real-key")
        yield server


def test_the_openai_compatible_provider_over_http(stub, tmp_path):
    a, b, c = TEST_IDS[:3]
    stub.script[:] = [
        reply(_gold_json(a)),
        reply("```json\n" + VALID + "\n```"),
        reply('{"method_name": "Stub", "tasks": ["a', finish_reason="length"),
    ]
    (log,) = inspect_eval(
        paperfields_task(),
        model="openai-api/stub/stub-model",
        model_base_url=stub.url,
        limit=3,
        max_samples=1,
        max_connections=1,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    assert len(stub.requests) == 3
    body = stub.requests[0]["body"]
    assert body["response_format"]["type"] == "json_schema" and body["response_format"]["json_schema"]["strict"] is True
    assert body["max_tokens"] == 1536 and body["temperature"] == 0 and body["seed"] == 0
    papers = {p.id: p for p in PAPERS}
    sent = {_paper_of_text(r["body"]["messages"][-1]["content"]): r["body"]["messages"] for r in stub.requests}
    assert sent[a] == Strategy("zero_shot").messages(papers[a])
    failures = {s.id: next(iter(s.scores.values())).metadata["failure"] for s in log.samples}
    assert failures == {a: None, b: None, c: "truncated"}
    run_dir = import_inspect_log(Path(log.location), tmp_path / "runs")
    assert load_manifest(run_dir).usage.input_tokens == 300
    assert score_run(run_dir, ROOT / "gold" / "gold.jsonl").headline == _metrics(log)["headline"]
    assert (
        "sk-test-not-a-real-key"
        not in (run_dir / "manifest.json").read_text() + (run_dir / "predictions.jsonl").read_text()
    )


@pytest.mark.parametrize(
    "structured, sent, mode, grammar",
    [
        (False, None, None, False),
        ("none", None, None, False),
        ("grammar", "json_object", None, True),  # what paperfields run --grammar sends a llama.cpp server
        ("schema", "json_schema", "json_schema", False),
    ],
)
def test_how_the_schema_is_sent(stub, tmp_path, structured, sent, mode, grammar):
    (log,) = inspect_eval(
        paperfields_task(structured=structured),
        model="openai-api/stub/stub-model",
        model_base_url=stub.url,
        limit=1,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    body = stub.requests[0]["body"]
    assert (body.get("response_format") or {}).get("type") == sent
    if sent == "json_object":
        assert body["response_format"]["schema"] == strict_schema(PaperRecord)
    config = load_manifest(import_inspect_log(Path(log.location), tmp_path / "runs")).config
    assert (config.mode, config.grammar) == (mode, grammar)


def test_an_unknown_structured_value_is_refused():
    with pytest.raises(ValueError, match="structured=json: give true"):
        paperfields_task(structured="json")


def test_inspect_eval_and_import_inspect_from_the_command_line(stub, tmp_path):
    """The three commands of docs/inspect.md, the last two: the task
    found through inspect's entry point, its log imported and scored."""
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, STUB_BASE_URL=stub.url, STUB_API_KEY="sk-test-not-a-real-key")
    proc = subprocess.run(
        [
            str(bin_dir / "inspect"),
            "eval",
            TASK,
            "--model",
            "openai-api/stub/stub-model",
            "--limit",
            "3",
            "-T",
            "split=test",
            "-T",
            "strategy=zero_shot",
            "--log-dir",
            str(tmp_path / "logs"),
            "--display",
            "plain",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (log_path,) = (tmp_path / "logs").glob("*.eval")
    headline = _metrics(read_eval_log(str(log_path)))["headline"]
    proc = subprocess.run(
        [str(bin_dir / "paperfields"), "import-inspect", str(log_path), "--runs-dir", str(tmp_path / "runs")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"headline {headline:.3f}" in proc.stdout and "papers 3 of" in proc.stdout
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert json.loads((run_dir / "scores.json").read_text())["headline"] == headline


def test_the_test_extra_installs_the_pinned_inspect_extra():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (pin,) = extras["inspect"]
    assert pin == f"inspect_ai=={inspect_ai.__version__}"  # the version these tests ran against is the one pinned
    own = next(item for item in extras["test"] if item.startswith("paperfields["))
    assert "inspect" in own.removeprefix("paperfields[").rstrip("]").split(
        ","
    )  # ./install.sh test installs it, so CI runs these tests


def test_the_docs_give_the_three_commands_and_what_differs():
    section = (ROOT / "docs" / "inspect.md").read_text()
    for needle in (
        "pip install -e '.[inspect]'",
        "inspect eval paperfields/paperfields --model",
        "paperfields import-inspect logs/",
        "--cache",
        "response cache is not used",
        "--max-retries",
        "-T strategy=",
        "-T corpus=FILE",
        "-T split=",
    ):
        assert needle in section, needle
