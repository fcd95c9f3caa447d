"""Outside predictions (minimal JSONL: paper_id + record) scored as a run: `paperfields score --predictions`."""

from __future__ import annotations

import json

import pytest

from paperfields.core.gold import load_gold
from paperfields.core.runlog import RunError
from paperfields.scoring.imported import import_predictions
from paperfields.scoring.runs import score_run
from tests.cli_in_process import run_cli
from tests.conftest import ROOT

GOLD = ROOT / "gold" / "gold.jsonl"
CORPUS = ROOT / "gold" / "corpus.jsonl"


def _test_gold():
    return [g for g in load_gold(GOLD) if g.split == "test"]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_gold_records_imported_as_predictions_score_perfectly_and_partially(tmp_path):
    test = _test_gold()
    rows = [{"paper_id": g.id, "record": g.record.model_dump(mode="json")} for g in test[:10]]
    run_dir = import_predictions(
        _write(tmp_path / "p.jsonl", rows), "my-system", "test", tmp_path / "runs", GOLD, CORPUS
    )
    scores = score_run(run_dir, GOLD)
    assert scores.headline == 1.0 and scores.papers == 10 and scores.papers_in_split == 60
    assert scores.partial and not scores.reference and scores.backend == "outside/my-system"
    # the same file again gives the same folder; another file under the same name is refused
    assert import_predictions(tmp_path / "p.jsonl", "my-system", "test", tmp_path / "runs", GOLD, CORPUS) == run_dir
    with pytest.raises(RunError, match="holds other predictions"):
        import_predictions(_write(tmp_path / "q.jsonl", rows[:3]), "my-system", "test", tmp_path / "runs", GOLD, CORPUS)


def test_an_annotators_labels_in_gold_format_are_a_reference(tmp_path):
    test = _test_gold()
    rows = [{"id": g.id, "split": "test", "record": g.record.model_dump(mode="json"), "notes": "x"} for g in test[:5]]
    run_dir = import_predictions(
        _write(tmp_path / "a.jsonl", rows), "annotator/second", "test", tmp_path / "runs", GOLD, CORPUS
    )
    scores = score_run(run_dir, GOLD)
    assert scores.reference and scores.comparable and scores.headline_ci95 == (1.0, 1.0)


@pytest.mark.parametrize(
    "line, message",
    [
        (
            {"paper_id": "p1c9192429b", "record": {"method_nam": "X"}},
            ":1: field 'record.method_nam': not a field of the record",
        ),
        (
            {"paper_id": "p1c9192429b", "record": {"research_area": "nonsense"}},
            ":1: not a PaperRecord: field 'record.research_area'",
        ),
        ({"paper_id": "nope", "record": {}}, ":1: field 'paper_id': 'nope' is not a paper of the corpus"),
        ({"record": {}}, ":1: field 'paper_id': missing"),
        (
            {"paper_id": "p1c9192429b", "record": None, "failure": "exploded"},
            ":1: field 'failure': 'exploded' is not a failure class",
        ),
        ([1, 2], ":1: a line must be a JSON object"),
    ],
)
def test_bad_lines_name_file_line_and_field(tmp_path, line, message):
    path = _write(tmp_path / "bad.jsonl", [line])
    with pytest.raises(RunError) as info:
        import_predictions(path, "x", "test", tmp_path / "runs", GOLD, CORPUS)
    assert str(info.value).startswith(str(path)) and message in str(info.value)
    assert not (tmp_path / "runs").exists()  # nothing written


def test_a_duplicate_paper_and_a_paper_outside_the_split_are_refused(tmp_path):
    test = _test_gold()
    twice = _write(tmp_path / "twice.jsonl", [{"paper_id": test[0].id, "record": {}}] * 2)
    with pytest.raises(RunError, match=r"twice.jsonl:2: field 'paper_id': .* already on line 1"):
        import_predictions(twice, "x", "test", tmp_path / "runs", GOLD, CORPUS)
    dev = next(g for g in load_gold(GOLD) if g.split == "dev")
    with pytest.raises(RunError, match="is not in the 'test' split"):
        import_predictions(
            _write(tmp_path / "dev.jsonl", [{"paper_id": dev.id, "record": {}}]),
            "x",
            "test",
            tmp_path / "runs",
            GOLD,
            CORPUS,
        )


def test_the_cli_scores_outside_predictions(tmp_path):
    test = _test_gold()
    path = _write(
        tmp_path / "p.jsonl", [{"paper_id": g.id, "record": {"method_name": g.record.method_name}} for g in test]
    )
    proc = run_cli(
        "score", "--predictions", str(path), "--name", "names-only", "--runs-dir", str(tmp_path / "runs"), "--json"
    )
    assert proc.returncode == 0, proc.stderr
    scores = json.loads(proc.stdout)
    assert scores["fields"]["method_name"]["score"] == 1.0 and scores["headline"] < 0.2
    missing = run_cli("score", "--predictions", str(path))
    assert missing.returncode == 2 and "--predictions needs --name" in missing.stderr


@pytest.mark.parametrize(
    "content, message",
    [
        (b'{"paper_id": "p1c9192429b", "rec": {}}\n', ":1: field 'record': missing"),
        (
            b'{"paper_id": "p1c9192429b", "record": {}, "failure": "truncated"}\n',
            ":1: field 'failure': a line with a record is not a failure",
        ),
        (b'{"paper_id": 42, "record": {}}\n', ":1: field 'paper_id': must be a string, got int 42"),
        (b'{"paper_id": "p1c9192429b", "record": {}}\n{"paper_id": "\xff"}\n', ":2: not UTF-8 (byte 0xff)"),
    ],
)
def test_more_bad_lines_name_file_line_and_field(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(RunError) as info:
        import_predictions(path, "x", "test", tmp_path / "runs", GOLD, CORPUS)
    assert str(info.value).startswith(str(path)) and message in str(info.value)
    assert not (tmp_path / "runs").exists()


def test_a_directory_is_named_as_one(tmp_path):
    with pytest.raises(RunError, match="is a directory; give the predictions JSONL file"):
        import_predictions(tmp_path, "x", "test", tmp_path / "runs", GOLD, CORPUS)


@pytest.mark.parametrize(
    "change, stored, repairs",
    [
        (
            {"results": [{"metric": "pass rate", "value": "56.61%", "unit": "times", "kind": "absolute"}]},
            {
                "results": [
                    {
                        "metric": "pass rate",
                        "value": 56.61,
                        "value_upper": None,
                        "unit": "percent",
                        "kind": "absolute",
                        "qualifier": "exact",
                        "dataset": None,
                        "model": None,
                        "baseline": None,
                    }
                ]
            },
            ["unit_conflict", "number_text"],
        ),  # the '%' written wins
        (
            {"research_area": "Code Software Engineering"},
            {"research_area": "code_software_engineering"},
            ["enum_spelling"],
        ),
        ({"method_name": "N/A"}, {"method_name": None}, ["placeholders"]),
        ({"training_free": "yes"}, {"training_free": True}, ["bool_text"]),
        ({"method_name": "FooNet", "training_free": False}, {"method_name": "FooNet", "training_free": False}, []),
    ],
)
def test_what_the_schema_tolerates_is_recorded_in_the_lines_repairs_and_counted_in_the_scores(
    tmp_path, change, stored, repairs
):
    """An imported record is read as a model's reply is, and every tolerated deviation is named, never silent."""
    paper = _test_gold()[0].id
    path = _write(tmp_path / "p.jsonl", [{"paper_id": paper, "record": change}])
    run_dir = import_predictions(path, "x", "test", tmp_path / "runs", GOLD, CORPUS)
    line = json.loads((run_dir / "predictions.jsonl").read_text())
    assert {key: line["record"][key] for key in stored} == stored
    assert line["repairs"] == repairs
    assert score_run(run_dir, GOLD).repairs == {name: 1 for name in repairs}
    from paperfields.scoring.imported import read_outside_predictions

    assert read_outside_predictions(path, {paper})[0].repairs == repairs  # pf.score(FILE) without a name reads the same


def test_a_paper_outside_the_split_names_file_line_field_and_the_split_that_fits(tmp_path):
    gold = load_gold(GOLD)
    test, dev = [g for g in gold if g.split == "test"], [g for g in gold if g.split == "dev"]
    devs = _write(
        tmp_path / "devs.jsonl", [{"paper_id": dev[0].id, "record": {}}, {"paper_id": dev[1].id, "record": {}}]
    )
    with pytest.raises(RunError) as info:
        import_predictions(devs, "x", "test", tmp_path / "runs", GOLD, CORPUS)
    assert str(info.value) == (
        f"{devs}:1: field 'paper_id': {dev[0].id} is not in the 'test' split of {GOLD} ({dev[0].id} is a dev paper); "
        "use --split dev (or --split all)"
    )
    assert (
        import_predictions(devs, "x", "dev", tmp_path / "runs", GOLD, CORPUS).name == "outside_x__imported__dev"
    )  # the advice, followed
    mixed = _write(
        tmp_path / "mixed.jsonl", [{"paper_id": test[0].id, "record": {}}, {"paper_id": dev[0].id, "record": {}}]
    )
    with pytest.raises(RunError) as info:
        import_predictions(mixed, "y", "test", tmp_path / "runs", GOLD, CORPUS)
    assert str(info.value) == (
        f"{mixed}:2: field 'paper_id': {dev[0].id} is not in the 'test' split of {GOLD} ({dev[0].id} is a dev paper); "
        "use --split all (the file holds papers of several splits)"
    )
    proc = run_cli("score", "--predictions", str(devs), "--name", "z", "--runs-dir", str(tmp_path / "runs"))
    assert proc.returncode == 2 and proc.stderr.startswith(
        f"error: {devs}:1: field 'paper_id': {dev[0].id} is not in the 'test' split"
    )
    assert "use --split dev (or --split all)" in proc.stderr


def test_the_cli_warns_when_a_result_item_was_left_out(tmp_path):
    """A repair that loses an item (result_dropped) is said in the terminal, not only stored in the line's repairs."""
    test = _test_gold()
    rows = [{"paper_id": g.id, "record": {"method_name": g.record.method_name}} for g in test]
    rows[0]["record"]["results"] = [{"metric": "acc", "value": "abc", "unit": "percent", "kind": "absolute"}]
    rows[1]["record"]["results"] = [
        {"metric": "acc", "value": "n/a?", "unit": "percent", "kind": "absolute"},
        {"metric": "acc", "value": 41.5, "unit": "percent", "kind": "absolute"},
    ]
    path = _write(tmp_path / "p.jsonl", rows)
    proc = run_cli("score", "--predictions", str(path), "--name", "dropped", "--runs-dir", str(tmp_path / "runs"))
    assert proc.returncode == 0, proc.stderr
    assert (
        "warning: outside_dropped__imported__test: a result item that did not validate was left out on 2 papers "
        "(result_dropped); each paper's line in predictions.jsonl lists its repairs"
    ) in proc.stderr.replace("\n", " ")
    clean = run_cli(
        "score",
        "--predictions",
        str(_write(tmp_path / "q.jsonl", rows[2:] + [{"paper_id": g.id, "record": {}} for g in test[:2]])),
        "--name",
        "clean",
        "--runs-dir",
        str(tmp_path / "runs"),
    )
    assert clean.returncode == 0 and "left out" not in clean.stderr


def test_score_predictions_reads_the_corpus_it_is_given(tmp_path):
    """`score --predictions --gold G --corpus C` on papers of one's own corpus: --corpus was ignored (the
    benchmark's corpus was read, so the paper was 'not a paper of the corpus'); now the given one is read."""
    gold_line = json.loads(GOLD.read_text(encoding="utf-8").splitlines()[0])
    text = next(json.loads(x) for x in CORPUS.read_text(encoding="utf-8").splitlines() if gold_line["id"] in x)["text"]
    mine = "pmine0000001"
    corpus = _write(tmp_path / "mine_corpus.jsonl", [{"id": mine, "text": text}])
    (tmp_path / "g").mkdir()
    gold = _write(tmp_path / "g" / "mygold.jsonl", [{**gold_line, "id": mine}])
    preds = _write(tmp_path / "p.jsonl", [{"paper_id": mine, "record": gold_line["record"]}])
    args = ["score", "--predictions", str(preds), "--name", "mine", "--split", "all", "--gold", str(gold)]
    refused = run_cli(*args, "--runs-dir", str(tmp_path / "runs0"))
    assert refused.returncode == 2 and "is not a paper of the corpus" in refused.stderr  # no corpus beside the gold
    proc = run_cli(*args, "--corpus", str(corpus), "--runs-dir", str(tmp_path / "runs"), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["headline"] == 1.0
