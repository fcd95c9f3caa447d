"""Hugging Face dataset export: round trip through `datasets`, deterministic bytes, card, push."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from paperfields.export import card_extras, export_dataset, push_dataset
from paperfields.scoring.gold import load_gold
from paperfields.scoring.score import score_predictions
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ["HF_HUB_OFFLINE"] = "1"
    out = tmp_path_factory.mktemp("export") / "ds"
    export_dataset(out, ROOT / "gold" / "gold.jsonl", ROOT / "gold" / "corpus.jsonl", ROOT / "results" / "runs",
                   card_extras(ROOT / "gold", ROOT / "results"))
    return out


def test_gold_round_trips_through_load_dataset(exported, tmp_path):
    from datasets import load_dataset

    ds = load_dataset(str(exported), "gold", cache_dir=str(tmp_path / "hf"))
    assert ds["dev"].num_rows == 16 and ds["test"].num_rows == 60
    gold = {g.id: g for g in load_gold(ROOT / "gold" / "gold.jsonl")}
    for split in ("dev", "test"):
        for row in ds[split]:
            g = gold[row["id"]]
            assert row["split"] == g.split == split
            record = {k: row[k] for k in g.record.model_dump(mode="json")}
            assert record == g.record.model_dump(mode="json")
            assert {a["canonical"]: a["forms"] for a in row["alternates"]} == g.alternates


def test_prediction_split_rescores_to_committed_scores(exported, tmp_path):
    from datasets import load_dataset

    runs = sorted(p.parent for p in (ROOT / "results" / "runs").glob("*/scores.json"))
    assert runs
    preds = load_dataset(str(exported), "predictions", cache_dir=str(tmp_path / "hf"))
    gold = load_gold(ROOT / "gold" / "gold.jsonl")
    fields = list(gold[0].record.model_dump())
    for run in runs:
        committed = json.loads((run / "scores.json").read_text())
        if committed["papers_done"] < committed["papers"]:
            continue  # an unfinished run's missing papers score 0 but have no row in the predictions split
        split = preds[run.name.replace("-", "_").replace(".", "_")]
        predictions = {r["id"]: ({k: r[k] for k in fields} if r["valid"] else None) for r in split}
        failures = {r["id"]: r["failure"] for r in split if r["failure"]}
        asked = set(predictions)
        scores, _ = score_predictions(predictions, [g for g in gold if g.id in asked], failures, committed["run_id"], committed["split"], committed["gold_version"])
        assert scores.headline == committed["headline"], run.name
        assert {f: a.score for f, a in scores.fields.items()} == {f: a["score"] for f, a in committed["fields"].items()}


def test_export_twice_gives_identical_bytes(exported, tmp_path):
    again = tmp_path / "again"
    export_dataset(again, ROOT / "gold" / "gold.jsonl", ROOT / "gold" / "corpus.jsonl", ROOT / "results" / "runs",
                   card_extras(ROOT / "gold", ROOT / "results"))
    files = sorted(p.relative_to(exported) for p in exported.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for f in files:
        assert (exported / f).read_bytes() == (again / f).read_bytes(), f


def test_card_front_matter_and_content(exported):
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(exported / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "cc-by-4.0" and data["configs"][0]["config_name"] == "gold"
    assert {d["split"] for d in data["configs"][0]["data_files"]} == {"dev", "test"}
    text = card.text
    assert "`method_name`" in text and "Overall agreement" in text and "| rank | run |" in text and "@misc{paperfields2026" in text


def test_push_dry_run_and_missing_token(exported, tmp_path):
    plan = push_dataset(exported, "someone/paperfields", private=True, dry_run=True)
    assert plan["files"][0] == "README.md" and "gold/test.parquet" in plan["files"] and plan["private"] is True
    env = dict(os.environ, HF_TOKEN="", HF_HOME=str(tmp_path / "hf-home"), HF_HUB_OFFLINE="1")
    env.pop("HUGGING_FACE_HUB_TOKEN", None)
    proc = subprocess.run([sys.executable, "-m", "paperfields.cli", "push", "someone/paperfields", "--folder", str(exported)],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 2 and "no Hugging Face token" in proc.stderr


def test_export_without_predictions_into_an_earlier_export_removes_its_stale_predictions(exported, tmp_path):
    import shutil

    out = tmp_path / "ds"
    shutil.copytree(exported, out)
    earlier = sorted((out / "predictions").glob("*.parquet"))
    assert earlier, "the fixture export has predictions"
    (out / "NOTES.txt").write_text("mine")  # not written by the exporter: kept
    proc = subprocess.run([sys.executable, "-m", "paperfields.cli", "export", str(out), "--no-predictions"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.startswith("removed ")] == [
        f"removed {p} (predictions of an earlier export that this one does not include)" for p in earlier]
    assert not (out / "predictions").exists() and (out / "NOTES.txt").read_text() == "mine"
    files = push_dataset(out, "someone/paperfields", private=False, dry_run=True)["files"]
    assert files == ["NOTES.txt", "README.md", "gold/dev.parquet", "gold/test.parquet"]
    assert "predictions/" not in (out / "README.md").read_text()
    # A runs folder with fewer runs: only that run's parquet stays.
    runs = tmp_path / "runs"
    shutil.copytree(ROOT / "results" / "runs" / "rules_baseline__zero_shot__test", runs / "rules_baseline__zero_shot__test")
    shutil.copytree(exported, tmp_path / "ds2")
    written = export_dataset(tmp_path / "ds2", ROOT / "gold" / "gold.jsonl", ROOT / "gold" / "corpus.jsonl", runs,
                             card_extras(ROOT / "gold", ROOT / "results"))
    assert sorted(p.name for p in (tmp_path / "ds2" / "predictions").iterdir()) == ["rules_baseline__zero_shot__test.parquet", "runs.json"]
    assert tmp_path / "ds2" / "predictions" / "rules_baseline__zero_shot__test.parquet" in written


def test_export_refuses_a_run_whose_scores_are_stale(tmp_path):
    import shutil

    from paperfields.extract.runner import RunError

    runs = tmp_path / "runs"
    run = shutil.copytree(ROOT / "results" / "runs" / "rules_baseline__zero_shot__test", runs / "rules_baseline__zero_shot__test")
    lines = (run / "predictions.jsonl").read_text().splitlines()
    (run / "predictions.jsonl").write_text("\n".join(lines[:20]) + "\n")  # 40 papers gone since scoring
    with pytest.raises(RunError, match="scores are stale: .*predictions.jsonl changed since the run was scored"):
        export_dataset(tmp_path / "ds", ROOT / "gold" / "gold.jsonl", ROOT / "gold" / "corpus.jsonl", runs,
                       card_extras(ROOT / "gold", ROOT / "results"))
    assert not (tmp_path / "ds" / "predictions").exists()
