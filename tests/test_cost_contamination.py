"""Cost per correct item (retries and re-asks in, cache hits out) and the contamination status."""

from __future__ import annotations

import csv
import io
import math
from fractions import Fraction

import pytest

from paperfields.core.corpus import load_corpus
from paperfields.core.gold import load_gold
from paperfields.core.runlog import Manifest, PredictionLine, RunConfig
from paperfields.scoring.contamination import contamination_status, load_cutoffs
from paperfields.scoring.runs import score_run
from paperfields.scoring.score import HEADLINE_FIELDS, score_paper
from tests.conftest import ROOT

GOLD = ROOT / "gold" / "gold.jsonl"
ABSTRACTS = {p.id: p.text for p in load_corpus(ROOT / "gold" / "corpus.jsonl")}


def _run(tmp_path, lines: list[PredictionLine], dollars: float | None = 0.5):
    run_dir = tmp_path / "run"
    run_dir.mkdir(parents=True)
    ids = list(dict.fromkeys(line.paper_id for line in lines))
    config = RunConfig(
        backend="openai/gpt-4o-mini", strategy="zero_shot", prompt_version="1", prompt_sha256="x", split="test"
    )
    manifest = Manifest(
        run_id="run",
        config=config,
        started_at="2026-12-01T00:00:00+00:00",
        paper_ids=ids,
        papers_total=len(ids),
        papers_done=len(ids),
        dollars_total=dollars,
    )
    (run_dir / "manifest.json").write_text(manifest.model_dump_json())
    (run_dir / "predictions.jsonl").write_text("".join(line.model_dump_json() + "\n" for line in lines))
    return run_dir


def test_cost_per_correct_item_counts_retries_and_reasks_and_leaves_out_cache_hits(tmp_path):
    test = [g for g in load_gold(GOLD) if g.split == "test"]
    a, b, c = test[0], test[1], test[2]
    lines = [
        PredictionLine(
            paper_id=a.id, failure="transport_error", error="timeout", latency_s=4.0
        ),  # asked again later: still spent
        PredictionLine(
            paper_id=a.id, record=a.record.model_dump(mode="json"), latency_s=6.0, attempts=2
        ),  # a re-ask inside
        PredictionLine(
            paper_id=b.id, record=b.record.model_dump(mode="json"), latency_s=5.0, cached=True
        ),  # from the cache: free
        PredictionLine(paper_id=c.id, record={}, latency_s=2.0),
    ]
    scores = score_run(_run(tmp_path, lines), GOLD, write=False)
    correct = scores.correct_items
    expected = sum(
        score_paper(record, g, text)[f][0]
        for record, g, text in (
            (a.record.model_dump(mode="json"), a, ABSTRACTS[a.id]),
            (b.record.model_dump(mode="json"), b, ABSTRACTS[b.id]),
            ({}, c, ABSTRACTS[c.id]),
        )
        for f in HEADLINE_FIELDS
    )
    assert correct == expected
    assert correct > 0
    assert scores.model_seconds == 12.0  # 4 + 6 + 2; the cached 5 s are not this run's
    assert scores.seconds_per_correct == pytest.approx(12.0 / correct, abs=1e-4)
    assert scores.dollars_per_correct == pytest.approx(0.5 / correct, abs=1e-8)


def test_unknown_price_gives_no_dollars_per_correct_item(tmp_path):
    g = [g for g in load_gold(GOLD) if g.split == "test"][0]
    scores = score_run(
        _run(
            tmp_path,
            [PredictionLine(paper_id=g.id, record=g.record.model_dump(mode="json"), latency_s=1.0)],
            dollars=None,
        ),
        GOLD,
        write=False,
    )
    assert scores.dollars_per_correct is None and scores.seconds_per_correct is not None


def _table(tmp_path, cutoff: str):
    path = tmp_path / "cutoffs.toml"
    path.write_text(
        '[corpus]\nearliest_public = "2026-01"\nsource = "s"\nmargin_months = 6\n'
        f'[models."x/m"]\ncutoff = "{cutoff}"\nsource = "model card"\n'
    )
    return path


@pytest.mark.parametrize(
    "cutoff, status",
    [
        ("2023-10", "after cutoff"),
        ("2025-06", "after cutoff"),  # 7 months before the corpus: beyond the 6-month preprint margin
        ("2025-07", "possible overlap"),  # 6 months before: a preprint could be in the training data
        ("2026-03", "possible overlap"),
        ("unknown", "unknown"),
    ],
)
def test_contamination_status_from_the_cutoff(tmp_path, cutoff, status):
    result = contamination_status("x/m", path=_table(tmp_path, cutoff))
    assert result.status == status
    assert result.corpus_earliest_public == "2026-01"


def test_unlisted_models_are_unknown_and_references_not_applicable(tmp_path):
    path = _table(tmp_path, "2023-10")
    assert contamination_status("y/other", path=path).status == "unknown"
    assert contamination_status("rules/baseline", reference=True, path=path).status == "n/a"
    # a corpus of one's own with its own date
    assert contamination_status("x/m", corpus_date="2024-01", path=path).status == "possible overlap"


def test_a_bad_date_names_the_file_and_entry(tmp_path):
    with pytest.raises(ValueError, match=r"cutoffs.toml: x/m: '2024-13' is not a YYYY-MM date"):
        load_cutoffs(_table(tmp_path, "2024-13"))


def test_the_committed_table_covers_the_published_models_with_sources():
    corpus, models = load_cutoffs()
    assert corpus.earliest_public == "2026-01" and "icml.cc" in corpus.source
    for name in ("local/qwen2.5-coder-0.5b", "local/qwen2.5-coder-1.5b", "openai/gpt-4o-mini"):
        assert models[name].source
    assert contamination_status("local/qwen2.5-coder-0.5b").status == "after cutoff"


def test_seconds_per_correct_item_is_rounded_once_on_every_view(tmp_path, capsys):
    """A cost just above x.xx5 s per correct item shows rounded up (16.48504
    as 16.49), not first stored as 16.485 and then shown as 16.48."""

    from rich.console import Console

    from paperfields.scoring.board import Board

    golds = [g for g in load_gold(GOLD) if g.split == "test"][
        :6
    ]  # enough correct items for a millisecond to be finer than 0.00005 s per item

    def lines(seconds: float) -> list[PredictionLine]:
        return [
            PredictionLine(paper_id=g.id, record=g.record.model_dump(mode="json"), latency_s=seconds if i == 0 else 0.0)
            for i, g in enumerate(golds)
        ]

    correct = score_run(_run(tmp_path / "a", lines(1.0)), GOLD, write=False).correct_items
    assert correct > 20
    # model seconds are kept to the millisecond: find k ms with
    # k / correct in (t, t + 0.00005) for some t = x.xx5, exactly
    for cents in range(1000, 5000):
        t = Fraction(cents * 10 + 5, 1000)
        millis = math.floor(t * 1000 * correct) + 1
        if (
            Fraction(millis, 1000 * correct) < t + Fraction(5, 100000) and f"{float(t):.2f}" == f"{cents / 100:.2f}"
        ):  # t's float lies below t
            break
    else:
        raise AssertionError("no such cost")
    shown = f"{(cents + 1) / 100:.2f}"
    scores = score_run(_run(tmp_path, lines(millis / 1000)), GOLD, write=False)
    assert f"{round(scores.seconds_per_correct, 4):.2f}" != shown  # rounding twice would show the wrong cent
    assert scores.seconds_per_correct == scores.model_seconds / correct and f"{scores.seconds_per_correct:.2f}" == shown
    board = Board.of([scores])  # built once, every view below rendered from it
    markdown = board.markdown()
    cost_table = markdown.split("\n## Cost\n")[1].split("\n## ")[0]
    row = [line for line in cost_table.splitlines() if line.startswith("| run |")][
        1
    ]  # the header, then the run (its id is "run")
    assert f"| {shown} |" in row
    cell = next(csv.DictReader(io.StringIO(board.csv())))["seconds_per_correct"]
    assert float(cell) == round(scores.model_seconds / correct, 4)  # the csv keeps 4 decimals, rounded once
    Console(width=240).print(board.terminal(wide=True))
    assert f" {shown} " in capsys.readouterr().out
