"""Hugging Face dataset export: round trip through `datasets`, deterministic bytes, card, push."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from paperfields.core.gold import load_gold
from paperfields.export import card_extras, export_dataset, push_dataset, split_names
from paperfields.scoring.score import score_predictions
from tests.cli_in_process import run_cli
from tests.conftest import ROOT, SEEDS

GOLD = ROOT / "gold" / "gold.jsonl"
CORPUS = ROOT / "gold" / "corpus.jsonl"
FIELDS = list(load_gold(GOLD)[0].record.model_dump())


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """A results/ folder: the published runs' predictions, scored against today's gold, and their
    leaderboard.md (so these tests never depend on results/ having been regenerated)."""
    from paperfields.scoring.board import leaderboard_markdown
    from paperfields.scoring.difficulty import difficulty_markdown, load_difficulty
    from paperfields.scoring.runs import collect_scores, score_run

    folder = tmp_path_factory.mktemp("results")
    for manifest in sorted((ROOT / "results" / "runs").glob("*/manifest.json")):
        run = folder / "runs" / manifest.parent.name
        run.mkdir(parents=True)
        for name in ("manifest.json", "predictions.jsonl"):
            shutil.copy(manifest.parent / name, run / name)
        if run.name.startswith(
            "local_"
        ):  # the regenerated runs have no failed paper: three failed lines, as a truncated reply writes them
            lines = (run / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
            for i in range(3):
                line = json.loads(lines[i])
                line.update(
                    record=None,
                    failure="truncated",
                    error="reply cut at --max-tokens",
                    raw_text='{"method_name": "A',
                    grounding=None,
                )
                lines[i] = json.dumps(line, ensure_ascii=False)
            (run / "predictions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        score_run(run, GOLD)
    (folder / "leaderboard.md").write_text(
        leaderboard_markdown(collect_scores(folder / "runs"), GOLD), encoding="utf-8"
    )
    (folder / "difficulty.md").write_text(difficulty_markdown(load_difficulty(folder / "runs", GOLD)), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def exported(tmp_path_factory, results):
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ["HF_HUB_OFFLINE"] = "1"
    out = tmp_path_factory.mktemp("export") / "ds"
    export_dataset(out, GOLD, CORPUS, results / "runs", card_extras(ROOT / "gold", results))
    return out


def _copy_run(results: Path, runs: Path, name: str, source: str = "rules_baseline__zero_shot__test") -> Path:
    return shutil.copytree(results / "runs" / source, runs / name)


def test_gold_round_trips_through_load_dataset(exported, tmp_path):
    from datasets import load_dataset

    ds = load_dataset(str(exported), "gold", cache_dir=str(tmp_path / "hf"))
    assert ds["dev"].num_rows == 16 and ds["test"].num_rows == 60
    gold = {g.id: g for g in load_gold(GOLD)}
    for split in ("dev", "test"):
        for row in ds[split]:
            g = gold[row["id"]]
            assert row["split"] == g.split == split
            record = {k: row[k] for k in g.record.model_dump(mode="json")}
            assert record == g.record.model_dump(mode="json")
            assert {a["canonical"]: a["forms"] for a in row["alternates"]} == g.alternates


def test_parquet_files_carry_no_datasets_feature_metadata_and_keep_their_types(exported, tmp_path):
    """datasets >= 4 writes its `List` type into the schema metadata, which datasets 3.x cannot read:
    the files hold plain Arrow types only, and load back with the declared types."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from datasets import load_dataset

    files = sorted(exported.rglob("*.parquet"))
    assert len(files) > 2
    for path in files:
        schema = pq.read_schema(path)
        assert not schema.metadata or b"huggingface" not in schema.metadata, path
        assert "List" not in json.dumps({k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}), path
    gold_schema = pq.read_schema(exported / "gold" / "test.parquet")
    assert gold_schema.field("position").type == pa.int32() and gold_schema.field("training_free").type == pa.bool_()
    assert gold_schema.field("tasks").type == pa.list_(pa.string())
    assert pa.types.is_struct(gold_schema.field("results").type.value_type)
    row = load_dataset(str(exported), "gold", cache_dir=str(tmp_path / "hf"))["test"][0]
    assert isinstance(row["results"], list) and isinstance(row["position"], int) and isinstance(row["tasks"], list)


def test_prediction_split_rescores_to_its_run_scores(exported, results, tmp_path):
    from datasets import load_dataset

    runs = sorted(p.parent for p in (results / "runs").glob("*/scores.json"))
    assert len(runs) >= 2
    preds = load_dataset(str(exported), "predictions", cache_dir=str(tmp_path / "hf"))
    listing = json.loads((exported / "predictions" / "runs.json").read_text())
    assert sorted(e["run_id"] for e in listing.values()) == [r.name for r in runs] and set(preds) == set(listing)
    gold = load_gold(GOLD)
    for split_name, entry in listing.items():
        committed = json.loads((results / "runs" / entry["run_id"] / "scores.json").read_text())
        split = preds[split_name]
        assert set(split["run_id"]) == {committed["run_id"]}
        predictions = {r["id"]: ({k: r[k] for k in FIELDS} if r["valid"] else None) for r in split}
        failures = {r["id"]: r["failure"] for r in split if r["failure"]}
        scores, _ = score_predictions(
            predictions,
            [g for g in gold if g.id in predictions],
            failures=failures,
            run_id=committed["run_id"],
            split=committed["split"],
            gold_version=committed["gold_version"],
            abstracts={r["id"]: r["text"] for r in split},
        )
        assert scores.headline == committed["headline"], entry["run_id"]
        assert {f: a.score for f, a in scores.fields.items()} == {f: a["score"] for f, a in committed["fields"].items()}


def test_prediction_rows_carry_the_abstract_and_failed_rows_are_unmistakable(exported, results, tmp_path):
    from datasets import load_dataset

    from paperfields.core.corpus import load_corpus
    from paperfields.core.runlog import read_predictions

    texts = {p.id: p.text for p in load_corpus(CORPUS)}
    preds = load_dataset(str(exported), "predictions", cache_dir=str(tmp_path / "hf"))
    failed_seen = 0
    for split_name, entry in json.loads((exported / "predictions" / "runs.json").read_text()).items():
        # the records as read and normalized for scoring (a model's ["None"] is no item)
        lines = {l.paper_id: l for l in read_predictions(results / "runs" / entry["run_id"] / "predictions.jsonl")}
        assert sorted(lines) == sorted(preds[split_name]["id"])
        for row in preds[split_name]:
            line = lines[row["id"]]
            assert row["text"] == texts[row["id"]]
            if line.record is None:
                failed_seen += 1
                assert row["valid"] is False and line.failure and row["failure"] == line.failure.value
                assert all(row[f] is None for f in FIELDS), (entry["run_id"], row["id"])  # never an empty record
            else:
                assert row["valid"] is True and row["failure"] is None
                assert {f: row[f] for f in FIELDS} == line.record
    assert failed_seen >= 3  # the fixture's local-model runs have failed papers


def test_export_twice_gives_identical_bytes(exported, results, tmp_path):
    again = tmp_path / "again"
    export_dataset(again, GOLD, CORPUS, results / "runs", card_extras(ROOT / "gold", results))
    files = sorted(p.relative_to(exported) for p in exported.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for f in files:
        assert (exported / f).read_bytes() == (again / f).read_bytes(), f


def test_card_front_matter_license_and_provenance(exported):
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(exported / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "other" and data["license_link"] == "LICENSE.md" and data["license_name"]
    assert re.fullmatch(r"[a-z0-9.-]+", data["license_name"])
    assert data["configs"][0]["config_name"] == "gold" and {d["split"] for d in data["configs"][0]["data_files"]} == {
        "dev",
        "test",
    }
    text = card.text
    assert (
        "`method_name`" in text
        and "Overall agreement" in text
        and "| rank | run |" in text
        and "@misc{paperfields2026" in text
    )
    assert "cc-by" not in text.lower() and "cc-by" not in (exported / "README.md").read_text().lower()
    assert "written and published by the papers' authors" in text and "copyright belongs to their authors" in text
    assert "Apache-2.0" in text and "| `failure` |" in text and "| `text` |" in text
    terms = (exported / "LICENSE.md").read_text()
    assert (
        "Their copyright belongs to their authors" in terms
        and "grants\nno license for them" in terms
        and "Apache-2.0" in terms
    )
    assert "ICML 2026 Papers" in terms and "`source` column" in terms
    assert "Generated by" not in text  # the source files' "do not edit" line is not the card's


def _tables(markdown: str) -> tuple[list[str], list[tuple[int, int]]]:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    return markdown.splitlines(), [tuple(t.map) for t in tokens if t.type == "table_open"]


def test_every_table_in_the_card_is_well_formed_and_stands_apart(exported):
    from huggingface_hub import DatasetCard

    text = DatasetCard.load(exported / "README.md").text
    lines, tables = _tables(text)
    separator = re.compile(r"^\|( *:?-{3,}:? *\|)+$")
    in_table = {i for start, end in tables for i in range(start, end)}
    in_code = set()
    fence = None
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fence = None if fence is not None else i
        elif fence is not None:
            in_code.add(i)
    stray = [lines[i] for i, line in enumerate(lines) if line.lstrip().startswith("|") and i not in in_table | in_code]
    assert not stray, stray[:3]  # a `|` row markdown-it did not read as part of a table: no separator row
    assert len(tables) >= 6  # splits, columns, fields, agreement (3), leaderboard sections
    for start, end in tables:
        header, sep = lines[start], lines[start + 1]
        assert separator.match(sep), (header, sep)
        assert header.count("|") == sep.count("|"), header
        assert start > 0 and lines[start - 1] == "", header  # a blank line before ...
        assert end == len(lines) or lines[end] == "", header  # ... and after: tables never run into each other
    assert len([l for l in lines if separator.match(l)]) == len(tables)


def test_the_old_agreement_and_board_files_give_well_formed_tables_too(tmp_path):
    """The files this bug was seen on: tables right after a paragraph line, a second table after the first."""
    from paperfields.export import _card_section

    board = (
        "# PaperFields leaderboard\n\nGenerated by x; do not edit by hand.\nPer-field F1 is the mean.\n\n"
        "| rank | run |\n|---|---|\n| 1 | a |\n\n## Per-field F1\n\n| field | a |\n|---|---|\n| tasks | 0.5 |\n"
    )
    agreement = (
        "# Gold agreement\n\nOverall agreement: **0.9**\nresearch_area: raw "
        "1.0\n| field | F1 |\n|---|---|\n| tasks | 0.9 |\n\n"
        "## Scorer validity\n\nScorer-judge agreement: **0.947**\n\n| field | pairs |\n|---|---|\n| tasks | 65 |\n\n"
        "Remaining disagreements:\n\n- a\n- b\n\n## Not agreement: a note\n\nProse only.\n\n"
        "## Disagreements\n\nPer paper.\n\n### p1\n\n- `tasks`: x vs y\n"
    )
    for source in (board, agreement):
        section = _card_section(source, "file.md")
        lines, tables = _tables(section)
        assert len(tables) == 2, section
        for start, end in tables:
            assert (
                lines[start - 1] == ""
                and re.match(r"^\|(---\|)+$", lines[start + 1])
                and (end == len(lines) or lines[end] == "")
            )
    section = _card_section(agreement, "gold/AGREEMENT.md")
    assert (
        "### Scorer validity" in section
        and "Overall agreement: **0.9**" in section
        and "### Not agreement: a note\n\nProse only." in section
    )
    assert (
        "Remaining disagreements" not in section
        and "p1" not in section
        and "Disagreements" not in section
        and "Per paper" not in section
    )
    assert "Per-field F1 is the mean." in _card_section(board, "results/leaderboard.md")
    assert "do not edit" not in _card_section(board, "results/leaderboard.md")


def test_split_names_are_unique_deterministic_and_plain_when_nothing_collides():
    ids = [
        "openai_qwen2.5-7b__zero_shot__test",
        "openai_qwen2.5_7b__zero_shot__test",
        "rules_baseline__zero_shot__test",
    ]
    names = split_names(ids)
    assert names == split_names(list(reversed(ids)))
    assert names["rules_baseline__zero_shot__test"] == "rules_baseline__zero_shot__test"
    a, b = names[ids[0]], names[ids[1]]
    assert (
        a != b
        and re.fullmatch(r"openai_qwen2_5_7b__zero_shot__test__[0-9a-f]{8}", a)
        and re.fullmatch(r"openai_qwen2_5_7b__zero_shot__test__[0-9a-f]{8}", b)
    )


def test_run_ids_that_sanitize_alike_get_two_splits_and_both_load(results, tmp_path):
    """`openai/qwen2.5-7b` (vLLM) and `openai/qwen2.5:7b` (Ollama) give run folders that both sanitize to
    openai_qwen2_5_7b__zero_shot__test: each keeps its own parquet and split."""
    from datasets import load_dataset

    runs = tmp_path / "runs"
    vllm = _copy_run(results, runs, "openai_qwen2.5-7b__zero_shot__test")
    ollama = _copy_run(results, runs, "openai_qwen2.5_7b__zero_shot__test", source="rules_empty__zero_shot__test")
    out = tmp_path / "ds"
    export_dataset(out, GOLD, CORPUS, runs, card_extras(ROOT / "gold", results))
    listing = json.loads((out / "predictions" / "runs.json").read_text())
    assert sorted(e["run_id"] for e in listing.values()) == sorted([vllm.name, ollama.name]) and len(listing) == 2
    assert sorted(p.stem for p in (out / "predictions").glob("*.parquet")) == sorted(listing)
    preds = load_dataset(str(out), "predictions", cache_dir=str(tmp_path / "hf"))
    assert set(preds) == set(listing)
    by_run = {listing[name]["run_id"]: preds[name] for name in listing}
    assert set(by_run[vllm.name]["run_id"]) == {
        "rules_baseline__zero_shot__test"
    }  # the manifest's id: these are copies
    assert set(by_run[ollama.name]["backend"]) == {"rules/empty"} and set(by_run[vllm.name]["backend"]) == {
        "rules/baseline"
    }
    card = (out / "README.md").read_text()
    for name, entry in listing.items():
        assert f"| `{name}` | `{entry['run_id']}` |" in card


def test_push_dry_run_and_missing_token(exported, tmp_path):
    plan = push_dataset(exported, "someone/paperfields", private=True, dry_run=True)
    assert (
        plan["files"][:2] == ["LICENSE.md", "README.md"]
        and "gold/test.parquet" in plan["files"]
        and plan["private"] is True
    )
    env = dict(os.environ, HF_TOKEN="", HF_HOME=str(tmp_path / "hf-home"), HF_HUB_OFFLINE="1")
    env.pop("HUGGING_FACE_HUB_TOKEN", None)
    proc = run_cli("push", "someone/paperfields", "--folder", str(exported), env=env)
    assert proc.returncode == 2 and "no Hugging Face token" in proc.stderr


def test_export_without_predictions_into_an_earlier_export_removes_its_stale_predictions(exported, results, tmp_path):
    out = tmp_path / "ds"
    shutil.copytree(exported, out)
    earlier = sorted((out / "predictions").glob("*.parquet"))
    assert earlier, "the fixture export has predictions"
    (out / "NOTES.txt").write_text("mine")  # not written by the exporter: kept
    proc = run_cli("export", str(out), "--no-predictions")
    assert proc.returncode == 0, proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.startswith("removed ")] == [
        f"removed {p} (predictions of an earlier export that this one does not include)" for p in earlier
    ]
    assert not (out / "predictions").exists() and (out / "NOTES.txt").read_text() == "mine"
    files = push_dataset(out, "someone/paperfields", private=False, dry_run=True)["files"]
    assert files == ["LICENSE.md", "NOTES.txt", "README.md", "eval.yaml", "gold/dev.parquet", "gold/test.parquet"]
    assert "predictions/" not in (out / "README.md").read_text()
    # A runs folder with fewer runs: only that run's parquet stays.
    runs = tmp_path / "runs"
    _copy_run(results, runs, "rules_baseline__zero_shot__test")
    shutil.copytree(exported, tmp_path / "ds2")
    written = export_dataset(tmp_path / "ds2", GOLD, CORPUS, runs, card_extras(ROOT / "gold", results))
    assert sorted(p.name for p in (tmp_path / "ds2" / "predictions").iterdir()) == [
        "rules_baseline__zero_shot__test.parquet",
        "runs.json",
    ]
    assert tmp_path / "ds2" / "predictions" / "rules_baseline__zero_shot__test.parquet" in written


def test_export_refuses_a_run_whose_scores_are_stale(results, tmp_path):
    from paperfields.core.runlog import RunError

    runs = tmp_path / "runs"
    run = _copy_run(results, runs, "rules_baseline__zero_shot__test")
    lines = (run / "predictions.jsonl").read_text().splitlines()
    (run / "predictions.jsonl").write_text("\n".join(lines[:20]) + "\n")  # 40 papers gone since scoring
    with pytest.raises(RunError, match="scores are stale: .*predictions.jsonl changed since the run was scored"):
        export_dataset(tmp_path / "ds", GOLD, CORPUS, runs, card_extras(ROOT / "gold", results))
    assert not (tmp_path / "ds" / "predictions").exists()


def test_the_cards_provenance_statement_holds_for_the_seed_files():
    """What LICENSE.md and the card say of the abstracts: each is verbatim from the seed list named in
    `source`, and each list is headed as an ICML 2026 paper list."""
    from paperfields.core.corpus import load_corpus
    from paperfields.export import ABSTRACTS_SOURCE

    seeds = {f.name: f.read_text(encoding="utf-8") for f in SEEDS.glob("*.txt")}
    papers = load_corpus(CORPUS)
    assert len(seeds) == 4 and "four plain-text lists" in ABSTRACTS_SOURCE
    assert all(p.text in seeds[p.source] for p in papers)
    assert all(text.splitlines()[0].strip() in ("ICML 2026 Papers", "ICML 2026 论文列表") for text in seeds.values())


def _card_rows(text: str, section: str) -> dict[str, dict[str, str]]:
    """Run id -> {column: cell} of the table under the card's ``### <section>...`` heading in the
    per-run cost and contamination part."""
    part = text[text.index("## Cost per correct item and contamination status, per run") : text.index("## Citation")]
    block = part[part.index(f"### {section}") :].split("\n\n")[1]
    lines = block.splitlines()

    def cells(line):
        return [c.strip() for c in line.strip("|").split(" | ")]

    head = cells(lines[0])
    return {row[0].strip("`"): dict(zip(head, row)) for row in map(cells, lines[2:])}


def test_card_shows_cost_per_correct_item_and_contamination_per_run_with_references_apart(exported, results):
    from paperfields.scoring.contamination import load_cutoffs
    from paperfields.scoring.score import RunScores

    _, cutoffs = load_cutoffs()
    text = (exported / "README.md").read_text(encoding="utf-8")
    contenders, references = _card_rows(text, "Contenders"), _card_rows(text, "References")
    scores = {
        p.parent.name: RunScores.model_validate_json(p.read_bytes()) for p in (results / "runs").glob("*/scores.json")
    }
    assert set(contenders) == {r for r, s in scores.items() if not s.reference}
    assert (
        set(references)
        == {r for r, s in scores.items() if s.reference}
        >= {"rules_baseline__zero_shot__test", "rules_empty__zero_shot__test"}
    )
    for run_id, row in contenders.items():
        s = scores[run_id]
        assert s.backend.startswith("local/")  # the committed contenders are local models: cost in model seconds
        assert row["correct items"] == str(s.correct_items) and s.correct_items > 0
        assert (
            row["cost / correct item"] == f"{s.model_seconds / s.correct_items:.2f} s"
            and row["$ / correct"] == "0 (local)"
        )
        cutoff = cutoffs[s.backend]  # each contender's own entry of the table (Qwen2.5-Coder, Gemma 3, ...)
        assert (row["contamination"], row["model cutoff"], row["corpus first public"]) == (
            "after cutoff",
            cutoff.cutoff,
            "2026-01 (cutoffs.toml)",
        )
        assert row["cutoff source"].startswith(cutoff.source[:60])
    for run_id, row in references.items():
        assert row["correct items"] == str(scores[run_id].correct_items)
        assert (row["cost / correct item"], row["$ / correct"], row["contamination"], row["model cutoff"]) == (
            "–",
            "–",
            "n/a",
            "–",
        )
    assert "The benchmark corpus was first public 2026-01 (cutoffs.toml: ICML 2026 dates page" in text


def test_card_says_what_models_get_wrong(exported, results):
    """The card carries results/difficulty.md's tables: the most-missed
    gold items with their sentence and each run's errors by kind."""
    card = (exported / "README.md").read_text(encoding="utf-8")
    section = card.split("## What models get wrong", 1)[1].split("\n## ", 1)[0]
    assert "From `results/difficulty.md`:" in section
    assert (
        "### The 20 most-missed gold items" in section
        and "| paper | field | gold item | contenders right | sentence |" in section
    )
    assert "### Errors of local_qwen2.5-coder-0.5b__zero_shot__test, per field" in section
    # the failed lines the fixture wrote are missed items, so the card's counts are the fixture's, not results/'s
    assert section.count("| all fields |") == len(list((results / "runs").glob("*/scores.json")))


def test_the_card_names_repository_files_as_code_instead_of_linking_where_the_dataset_has_nothing(exported):
    """The board links a submitted row to its folder (../submissions/x/) and its text to difficulty.md: the
    dataset folder holds neither, so the card writes the target as code; absolute links and anchors stay."""
    from paperfields.export import _card_section

    board = (
        "# Board\n\nSee [difficulty.md](difficulty.md), the [site](https://example.org/a_(b)) and [top](#board).\n\n"
        "| rank | model |\n|---|---|\n| – | x (submitted) [submissions/x](../submissions/x/) |\n"
        "| – | y [`submissions/y`](../submissions/y/) |\n"
    )
    section = _card_section(board, "results/leaderboard.md")
    assert "See `difficulty.md`, the [site](https://example.org/a_(b)) and [top](#board)." in section
    assert "| – | x (submitted) `submissions/x` |" in section and "| – | y `submissions/y` |" in section
    card = (exported / "README.md").read_text(encoding="utf-8")
    assert "](../" not in card and "](difficulty.md)" not in card
    assert "`submissions/agent-zero-shot`" in card
