"""What the command line says (issue 15 follow-ups): counts in the right number ("1 abstract", never
"1 abstracts"), the paired-bootstrap p-value and the compare listing, publishing a run without gold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paperfields.core.plural import plural
from tests.cli_in_process import run_cli

FOO = "We propose FooNet for image classification, reaching 91.2% accuracy on ImageNet."


def _cli(*args: str):
    return run_cli(*args)


def _one_abstract_corpus(tmp_path: Path):
    seeds = tmp_path / "one.txt"
    seeds.write_text(f"My abstracts\n\n{FOO}\n")
    corpus = tmp_path / "one.jsonl"
    return _cli("corpus", "build", str(seeds), "--out", str(corpus)), seeds, corpus


def test_plural_says_one_noun_and_two_nouns():
    assert [plural(n, "abstract") for n in (0, 1, 2)] == ["0 abstracts", "1 abstract", "2 abstracts"]
    assert plural(1, "cache hit") == "1 cache hit" and plural(3, "model request") == "3 model requests"
    assert plural(1, "query", "queries") == "1 query" and plural(2, "query", "queries") == "2 queries"


def test_none_has_and_any_of_read_right_for_one():
    from paperfields.core.plural import any_of, none_has

    assert none_has(1, "paper", "the run's", "gold record") == "the run's one paper has no gold record"
    assert none_has(2, "paper", "its", "gold record") == "none of its 2 papers has a gold record"
    assert none_has(3, "paper", "its", "answer") == "none of its 3 papers has an answer"
    assert (
        any_of(1, "paper", "the run's") == "the run's one paper"
        and any_of(5, "paper", "the run's") == "any of the run's 5 papers"
    )


def test_one_abstract_is_counted_in_the_singular_by_corpus_build_run_score_and_report(tmp_path):
    built, seeds, corpus = _one_abstract_corpus(tmp_path)
    assert built.exit_code == 0, built.output
    assert built.stderr == (
        f"{seeds}: text, header line 1 'My abstracts' skipped, 1 abstract\nwrote 1 abstract from 1 file to {corpus}\n"
    )
    runs = tmp_path / "runs"
    ran = _cli(
        "run", "-b", "rules/baseline", "--corpus", str(corpus), "--split", "all", "--runs-dir", str(runs), "--no-cache"
    )
    assert ran.exit_code == 0, ran.output
    [run_dir] = runs.iterdir()  # a corpus of one's own: its tag in the default run id
    assert f"run {run_dir.name}: 1/1 paper, 1 valid, " in ran.stderr and run_dir.name.startswith(
        "rules_baseline__zero_shot__all__one-"
    )
    assert "not scored: the run's one paper has no gold record (a corpus of your own); " in ran.stderr
    scored = _cli("score", run_dir.name, "--runs-dir", str(runs))
    assert scored.exit_code == 1 and scored.stderr.startswith(f"error: {run_dir}: no gold for the run's one paper in ")
    assert len(scored.stderr.splitlines()) == 1 and "1 paper" not in scored.stderr  # one message, said once
    html = tmp_path / "r.html"
    reported = _cli("report", run_dir.name, "--runs-dir", str(runs), "--out", str(html))
    assert reported.exit_code == 0, reported.output
    assert "<b>all</b>, 1 paper (1 with a record)" in html.read_text()


def test_a_one_paper_benchmark_run_and_its_stale_scores_count_in_the_singular(tmp_path):
    from paperfields.core.runlog import RunError
    from paperfields.scoring.runs import load_scored_run

    runs = tmp_path / "runs"
    ran = _cli("run", "-b", "rules/baseline", "--limit", "1", "--runs-dir", str(runs), "--no-cache")
    assert ran.exit_code == 0, ran.output
    assert "run rules_baseline__zero_shot__test: 1/1 paper, 1 valid, " in ran.stderr
    run_dir = runs / "rules_baseline__zero_shot__test"
    (run_dir / "paper_scores.jsonl").write_text("")
    try:
        load_scored_run(run_dir)
    except RunError as exc:
        assert f"paper_scores.jsonl: 0 paper rows, but {run_dir / 'scores.json'} counts 1 paper; " in str(exc)
    else:
        raise AssertionError("an empty paper_scores.jsonl was accepted")


def test_a_p_value_below_a_thousandth_shows_as_such_and_never_as_zero():
    from paperfields.scoring.board import UNDEFINED, fmt_p

    assert [fmt_p(p) for p in (0.0002, 0.000999, 0.001, 0.0114, 1.0, None)] == [
        "< 0.001",
        "< 0.001",
        "0.001",
        "0.011",
        "1.000",
        UNDEFINED,
    ]


def test_the_paired_bootstrap_p_value_has_the_floor_two_over_b_plus_one():
    import numpy as np

    from paperfields.scoring.metrics import COMPARE_RESAMPLES, paired_bootstrap

    mean = lambda t: t[..., 0] / t[..., 1]  # noqa: E731  (counts summed over papers -> one score per resample)
    a = np.array([[0, 1]] * 30)
    b = np.array([[1, 1]] * 30)  # B right on every paper, A on none: no resample reaches zero
    ci, p = paired_bootstrap(a, b, mean)
    assert ci == (1.0, 1.0) and p == 2 / (COMPARE_RESAMPLES + 1)  # Davison & Hinkley's (k + 1) / (B + 1), two-sided
    b[:29] = [0, 1]  # B right on 1 of 30 papers: the k resamples without it (about 36%) give a difference of 0
    ci, p = paired_bootstrap(a, b, mean)
    k = p * (COMPARE_RESAMPLES + 1) / 2 - 1
    assert ci[0] == 0 and 0.6 < p < 0.85 and k == pytest.approx(round(k), abs=1e-6)  # k / B would not be a whole k here
    # one paper: every resample is the observed difference; undefined, not "significant"
    assert paired_bootstrap(a[:1], np.array([[1, 1]]), mean) == (None, None)
    assert paired_bootstrap(a[:1], a[:1], mean) == ((0.0, 0.0), 1.0)  # equal counts: no difference at all
    assert paired_bootstrap(a, a, mean)[1] == 1.0  # no difference at all


def test_compare_shows_small_p_values_as_below_a_thousandth_and_heads_the_paper_list():
    from paperfields.scoring.metrics import COMPARE_RESAMPLES

    args = ["compare", "rules_empty__zero_shot__test", "rules_baseline__zero_shot__test"]
    shown = run_cli(*args)
    assert shown.returncode == 0, shown.stderr
    headline = next(line for line in shown.stdout.splitlines() if line.startswith("│ headline "))
    assert headline.split("│")[6].strip() == "< 0.001" and "0.000 " not in headline
    assert "Papers where B and A differ most, largest per-paper F1 difference first (at most --top 5)" in shown.stdout
    assert "per-paper F1 A" in shown.stdout and "headline fields whose item counts differ" in shown.stdout
    fields = json.loads(run_cli(*args, "--json").stdout)["fields"]
    assert fields[0]["field"] == "headline" and fields[0]["p_value"] == round(2 / (COMPARE_RESAMPLES + 1), 4)
    assert all(f["p_value"] is None or f["p_value"] > 0 for f in fields)


def test_publishing_a_run_without_gold_says_why_and_writes_nothing(tmp_path):
    import os

    from paperfields import api
    from paperfields.scoring.runs import NoGoldError
    from tests.conftest import ROOT

    seeds = tmp_path / "mine.txt"
    seeds.write_text(f"My abstracts\n\n{FOO}\n\nWe introduce BazBench, a benchmark of 300 tasks for code repair.\n")
    env = dict(os.environ, PAPERFIELDS_ROOT=str(tmp_path))  # runs/ and results/ under tmp_path, never the repository's
    cli = lambda *args: run_cli(*args, env=env)  # noqa: E731
    published_before = sorted(p.name for p in (ROOT / "results" / "runs").iterdir())
    assert cli("corpus", "build", str(seeds), "--out", str(tmp_path / "mine.jsonl")).returncode == 0
    ran = cli("run", "-b", "rules/baseline", "--corpus", str(tmp_path / "mine.jsonl"), "--split", "all", "--no-cache")
    assert ran.returncode == 0, ran.stderr
    [run_dir] = (tmp_path / "runs").glob("rules_baseline__zero_shot__all__mine-*")
    refused = cli("publish", run_dir.name)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith(
        f"error: cannot publish {run_dir.name}: none of its 2 papers has a gold record in "
        f"{ROOT / 'gold' / 'gold.jsonl'} (its corpus: {(tmp_path / 'mine.jsonl').resolve()}), so the "
        "run has no scores and cannot be placed on the board, "
    )
    assert f"nothing was written to {tmp_path / 'results' / 'runs'}" in refused.stderr
    assert f"`paperfields report {run_dir.name}`" in refused.stderr and "benchmark's test split" in refused.stderr
    assert "not scored yet" not in refused.stderr and "Traceback" not in refused.stderr
    assert not (tmp_path / "results").exists() and (run_dir / "predictions.jsonl").is_file()
    # the API refuses alike, into any published folder
    try:
        api.publish(run_dir, published_dir=tmp_path / "published")
    except NoGoldError as exc:
        assert str(exc).startswith(f"cannot publish {run_dir.name}: none of its 2 papers has a gold record")
    else:
        raise AssertionError("a run without gold was published")
    assert not (tmp_path / "published").exists() and run_dir.is_dir()
    assert sorted(p.name for p in (ROOT / "results" / "runs").iterdir()) == published_before


def test_the_api_publishes_a_benchmark_run_into_the_folder_given(tmp_path):
    from paperfields import api
    from paperfields.core.runlog import RunError

    runs = tmp_path / "runs"
    ran = _cli("run", "-b", "rules/baseline", "--limit", "2", "--runs-dir", str(runs), "--no-cache", "--quiet")
    assert ran.exit_code == 0, ran.output
    source = runs / "rules_baseline__zero_shot__test"
    try:
        api.publish(source, published_dir=tmp_path / "published")
    except RunError as exc:
        assert "is partial (2/2 papers done, 2 of 60 in the split)" in str(exc)
    else:
        raise AssertionError("a partial run was published without allow_partial")
    target = api.publish(source, allow_partial=True, allow_dirty=True, published_dir=tmp_path / "published")
    assert target == tmp_path / "published" / "rules_baseline__zero_shot__test" and not source.exists()
    assert (target / "scores.json").is_file() and (target / "predictions.jsonl").is_file()


def _with_commit(run_dir, commit: str) -> None:
    from paperfields.core.runlog import load_manifest

    manifest = load_manifest(run_dir)
    (run_dir / "manifest.json").write_text(manifest.model_copy(update={"git_commit": commit}).model_dump_json(indent=2))


def test_publish_refuses_a_run_made_from_an_edited_checkout_unless_asked(tmp_path, monkeypatch):
    from paperfields import api
    from paperfields.core.runlog import RunError, load_manifest

    runs, published = tmp_path / "runs", tmp_path / "published"
    for run_id in ("dirty", "clean"):
        ran = _cli("run", "-b", "rules/baseline", "--runs-dir", str(runs), "--run-id", run_id, "--no-cache", "--quiet")
        assert ran.exit_code == 0, ran.output
    _with_commit(runs / "dirty", "0123abc-dirty")
    _with_commit(runs / "clean", "0123abc")
    monkeypatch.setenv(
        "PAPERFIELDS_ROOT", str(tmp_path)
    )  # the CLI's published folder: tmp_path/results/runs, never the repository's
    refused = _cli("publish", str(runs / "dirty"))
    assert refused.exit_code == 2 and not (tmp_path / "results").exists()
    message = " ".join(refused.stderr.split())
    assert (
        "dirty was made from a checkout with uncommitted changes (git_commit 0123abc-dirty in" in message
        and "--allow-dirty" in message
    )
    try:
        api.publish(runs / "dirty", published_dir=published)
    except RunError as exc:
        assert "uncommitted changes" in str(exc)
    else:
        raise AssertionError("a run made from an edited checkout was published")
    assert (runs / "dirty").is_dir() and not published.exists()
    assert api.publish(runs / "clean", published_dir=published) == published / "clean"
    kept = api.publish(runs / "dirty", allow_dirty=True, published_dir=published)
    assert load_manifest(kept).git_commit == "0123abc-dirty"  # published as it is, the mark kept


def test_compare_says_on_how_many_papers_both_runs_scored_and_warns_when_a_run_shows_fewer(tmp_path):
    from tests.conftest import ROOT

    full = ROOT / "results" / "runs" / "rules_baseline__zero_shot__test"  # 60 test papers
    ran = _cli(
        "run", "-b", "rules/empty", "--limit", "3", "--runs-dir", str(tmp_path / "runs"), "--no-cache", "--quiet"
    )
    assert ran.exit_code == 0, ran.output
    part = tmp_path / "runs" / "rules_empty__zero_shot__test"
    shown = _cli("compare", str(full), str(part))
    assert shown.exit_code == 0, shown.output
    # read without the spaces: the table's title wraps at the table's width, wherever the line ends, even inside a
    # path (whose length is the temporary folder's: pytest-xdist adds popen-gwN/ to it)
    said = (
        f"B = {part} vs A = {full} (on 3 papers both runs scored; A has 3 of "
        "its 60, B 3 of its 3; paired bootstrap over papers;"
    )
    assert said.replace(" ", "") in "".join(shown.stdout.split())
    assert shown.stderr == (
        f"warning: A's scores here are over 3 of the 60 papers {full} scored (the papers both runs scored), "
        "not its own scores over all of them\n"
    )
    as_json = _cli("compare", str(part), str(full), "--json")
    summary = {k: v for k, v in json.loads(as_json.stdout).items() if k not in ("fields", "papers")}
    assert summary == {
        "a": str(part),
        "b": str(full),
        "shared_papers": 3,
        "scored_papers_a": 3,
        "scored_papers_b": 60,
        "same_run": False,
        "same_predictions": False,
    }
    assert as_json.stderr.startswith("warning: B's scores here are over 3 of the 60 papers")
    itself = _cli("compare", str(full), str(full), "--json")
    assert itself.stderr == f"note: A and B are the same run ({full}): every difference is 0\n"
    assert json.loads(itself.stdout)["same_run"] is True and json.loads(itself.stdout)["shared_papers"] == 60
    assert "the same run with itself, on its 60 scored papers" in " ".join(
        _cli("compare", str(full), str(full)).stdout.split()
    )


def test_advice_about_a_run_without_gold_or_a_limited_run_works_when_followed(tmp_path):
    from paperfields import api
    from paperfields.core.runlog import RunError
    from tests.conftest import ROOT

    built, _, corpus = _one_abstract_corpus(tmp_path)
    assert built.exit_code == 0, built.output
    runs = tmp_path / "runs"
    for args in (("--corpus", str(corpus), "--split", "all"), ("--limit", "2")):
        ran = _cli("run", "-b", "rules/baseline", *args, "--runs-dir", str(runs), "--no-cache", "--quiet")
        assert ran.exit_code == 0, ran.output
    [own], limited = runs.glob("rules_baseline__zero_shot__all__*"), runs / "rules_baseline__zero_shot__test"
    gold = ROOT / "gold" / "gold.jsonl"
    # compare: why there are no scores (no gold), not "run `paperfields score`", which would only fail again
    compared = _cli("compare", str(limited), str(own))
    assert compared.exit_code == 1 and compared.stdout == ""
    assert compared.stderr.startswith(
        f"error: {own}: no gold for the run's one paper in {gold} (a corpus of your own), "
        "so there is nothing to score and the run has no scores; "
    )
    assert "not scored yet" not in compared.stderr and "paperfields score" not in compared.stderr
    assert _cli("score", str(own)).exit_code == 1  # what the old advice led to
    try:
        api.publish(own, published_dir=tmp_path / "published")
    except RunError as exc:
        assert str(exc).startswith(f"cannot publish {own.name}: its one paper has no gold record in {gold} ")
    else:
        raise AssertionError("a run without gold was published")
    # publish of a --limit run: the same command keeps its --limit, so the advice drops it
    try:
        api.publish(limited, published_dir=tmp_path / "published")
    except RunError as exc:
        assert str(exc) == (
            "rules_baseline__zero_shot__test is partial (2/2 papers done, 2 of 60 in the split): run its "
            "`paperfields run` command again without --limit (or with a larger one), which continues this run over "
            "the whole split, or publish it apart with --allow-partial"
        )
    else:
        raise AssertionError("a partial run was published")
    assert (
        _cli("run", "-b", "rules/baseline", "--runs-dir", str(runs), "--no-cache", "--quiet").exit_code == 0
    )  # the advice, followed
    assert api.publish(limited, published_dir=tmp_path / "published") == tmp_path / "published" / limited.name


def _every_paperfields_error() -> list[type]:
    """PaperFieldsError and every subclass of it in the package (each module imported first)."""
    import importlib
    import pkgutil

    from paperfields.core.errors import PaperFieldsError

    for name in (
        "paperfields",
        "paperfields.extract",
        "paperfields.scoring",
    ):  # three folders (pyproject's package-dir)
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, name + "."):
            importlib.import_module(module.name)
    found, todo = [], [PaperFieldsError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return found


def test_the_cli_prints_every_paperfields_error_as_one_line_and_exits_2(monkeypatch):
    errors = _every_paperfields_error()
    names = {cls.__name__ for cls in errors}
    assert {"InputError", "RunError", "BackendError", "WeightsError", "MixedVersionsError", "SubmissionError"} <= names
    import paperfields.api

    for cls in errors:

        def refuse(*args, cls=cls, **kwargs):
            raise cls(f"{cls.__name__} names the file")

        monkeypatch.setattr(paperfields.api, "find_run", refuse)
        result = _cli("publish", "some-run")  # publish looks the run up outside any handler of its own
        assert result.exit_code == 2, (cls, result.output)
        assert result.stderr == f"error: {cls.__name__} names the file\n", cls


def test_the_errors_module_draws_every_paperfields_error():
    """paperfields/core/errors.py's tree named neither HubResultError,
    RegisterError nor SemanticUnavailable: each class is in it."""
    import paperfields.core.errors

    tree = paperfields.core.errors.__doc__
    missing = [cls.__name__ for cls in _every_paperfields_error() if cls.__name__ not in tree]
    assert not missing, missing
    assert "exits 2" in tree and "Exit 1 is an outcome" in tree
