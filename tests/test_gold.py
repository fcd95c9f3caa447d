from __future__ import annotations

import json
import subprocess
import sys

import pytest

from paperfields.extract.schema import PaperRecord
from paperfields.scoring.gold import GoldError, check_gold, load_gold


def test_committed_gold_passes_the_check(gold, corpus, root):
    assert check_gold(gold, corpus, root / "gold" / "gold.jsonl") == []
    assert len(gold) == 76
    assert sum(g.split == "dev" for g in gold) == 16
    # Stratified: 4 dev papers per source file.
    by_id = {p.id: p for p in corpus}
    for source in {p.source for p in corpus}:
        assert sum(1 for g in gold if g.split == "dev" and by_id[g.id].source == source) == 4


def test_gold_records_are_complete_schema_records(root):
    for number, line in enumerate((root / "gold" / "gold.jsonl").read_text().splitlines(), start=1):
        record = json.loads(line)["record"]
        assert set(record) == set(PaperRecord.model_fields), f"line {number}"


def _corrupt(root, tmp_path, line_index: int, edit) -> "Path":
    lines = (root / "gold" / "gold.jsonl").read_text().splitlines()
    lines[line_index] = edit(lines[line_index])
    path = tmp_path / "gold.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _edit_record(change):
    def edit(line: str) -> str:
        obj = json.loads(line)
        change(obj)
        return json.dumps(obj, ensure_ascii=False)
    return edit


def test_cli_check_fails_naming_file_line_and_field(root, tmp_path):
    path = _corrupt(root, tmp_path, 4, _edit_record(lambda o: o["record"]["datasets"].append("ImaginaryBench-9000")))
    proc = subprocess.run([sys.executable, "-m", "paperfields.cli", "gold", "check", "--gold", str(path)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert f"{path}:5: datasets[" in proc.stderr and "ImaginaryBench-9000" in proc.stderr


def test_invented_number_is_caught(root, tmp_path, corpus):
    def change(o):
        o["record"]["results"].append({"metric": "accuracy", "value": 987.654, "unit": "percent", "kind": "absolute"})
    path = _corrupt(root, tmp_path, 10, _edit_record(change))
    problems = check_gold(load_gold(path), corpus, path)
    index = len(json.loads((root / "gold" / "gold.jsonl").read_text().splitlines()[10])["record"]["results"])
    assert f"{path}:11: results[{index}].value: 987.654 is not written in the abstract" in problems


def test_unknown_duplicate_and_missing_ids(root, tmp_path, corpus):
    lines = (root / "gold" / "gold.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    unknown = dict(first, id="p0000000000")
    path = tmp_path / "gold.jsonl"
    path.write_text("\n".join([lines[0], lines[0], json.dumps(unknown)] + lines[2:]) + "\n")
    problems = check_gold(load_gold(path, []), corpus, path)
    assert f"{path}:2: id: duplicate id '{first['id']}' (first on line 1)" in problems
    with pytest.raises(GoldError, match=rf"{path}:2: id: duplicate id '{first['id']}' \(first on line 1\)"):
        load_gold(path)  # what score --gold and the other readers use: a duplicate would count its paper twice
    assert f"{path}:3: id: unknown paper id 'p0000000000' (not in the corpus)" in problems
    second_id = json.loads(lines[1])["id"]
    assert any(p.startswith(f"{path}: id: paper '{second_id}'") and "has no gold record" in p for p in problems)


def test_corrupt_json_line_raises_with_line(root, tmp_path):
    path = _corrupt(root, tmp_path, 7, lambda line: line[: len(line) // 2])
    with pytest.raises(GoldError, match=rf"{path}:8: not valid JSON"):
        load_gold(path)


def test_bad_field_value_raises_with_field(root, tmp_path):
    path = _corrupt(root, tmp_path, 2, _edit_record(lambda o: o["record"].update(research_area="astrology")))
    with pytest.raises(GoldError, match=rf"{path}:3: field 'record.research_area'"):
        load_gold(path)


def test_non_utf8_and_unknown_keys_name_file_and_line(root, tmp_path):
    lines = (root / "gold" / "gold.jsonl").read_bytes().split(b"\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join(lines[:3] + [lines[3] + b"\xff"] + lines[4:]))
    with pytest.raises(GoldError, match=rf"{bad}:4: bytes are not valid UTF-8"):
        load_gold(bad)
    typo = _corrupt(root, tmp_path, 5, _edit_record(lambda o: o["record"].update(method_nmae="X")))
    with pytest.raises(GoldError, match=rf"{typo}:6: field 'record.method_nmae': unknown field"):
        load_gold(typo)


def _first_result_value(o, value):
    o["record"]["results"][0]["value"] = value


@pytest.mark.parametrize("change, message", [
    (lambda o: o.update(training_free="yes"), "field 'training_free': unknown field (a typo?)"),
    (lambda o: o["record"].update(training_free="yes"), "field 'record.training_free': must be true, false or null (a JSON boolean), not \"yes\""),
    (lambda o: o["record"].update(training_free=0), "field 'record.training_free': must be true, false or null (a JSON boolean), not 0"),
    (lambda o: _first_result_value(o, "12.5"), "field 'record.results.0.value': must be a JSON number, not \"12.5\""),
    (lambda o: o["record"]["results"][0].update(value_upper="63%"), "field 'record.results.0.value_upper': must be a JSON number, not \"63%\""),
    (lambda o: _first_result_value(o, True), "field 'record.results.0.value': must be a JSON number, not true"),
], ids=["unknown-top-level-key", "training_free-string", "training_free-0", "value-string", "value_upper-string", "value-bool"])
def test_gold_is_strict_where_model_replies_are_lenient(root, tmp_path, change, message):
    line = (root / "gold" / "gold.jsonl").read_text().splitlines()[0]
    assert json.loads(line)["record"]["results"]  # line 1 has a result to corrupt
    path = _corrupt(root, tmp_path, 0, _edit_record(change))
    with pytest.raises(GoldError) as err:
        load_gold(path)
    assert str(err.value) == f"{path}:1: {message}"
    proc = subprocess.run([sys.executable, "-m", "paperfields.cli", "gold", "check", "--gold", str(path)], capture_output=True, text=True)
    assert proc.returncode == 1 and f"{path}:1: {message}" in proc.stderr


def test_model_replies_stay_lenient_where_gold_is_strict():
    """PaperRecord (what a model's reply is parsed into) still coerces what gold refuses."""
    record = PaperRecord.model_validate({"training_free": "yes", "unknown": 1,
                                         "results": [{"metric": "accuracy", "value": "12.5", "unit": "percent", "kind": "absolute"}]})
    assert record.training_free is True and record.results[0].value == 12.5


def test_every_bad_line_is_reported_not_just_the_first(root, tmp_path):
    lines = (root / "gold" / "gold.jsonl").read_text().splitlines()
    lines[2] = lines[2][: len(lines[2]) // 2]
    lines[9] = _edit_record(lambda o: o["record"].update(research_area="astrology"))(lines[9])
    path = tmp_path / "gold.jsonl"
    path.write_text("\n".join(lines) + "\n")
    problems: list[str] = []
    records = load_gold(path, problems)
    assert len(records) == 74
    assert problems[0].startswith(f"{path}:3: not valid JSON")
    assert problems[1].startswith(f"{path}:10: field 'record.research_area'")
    assert len(problems) == 2
    proc = subprocess.run([sys.executable, "-m", "paperfields.cli", "gold", "check", "--gold", str(path)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert f"{path}:3: not valid JSON" in proc.stderr + proc.stdout and f"{path}:10: field 'record.research_area'" in proc.stderr + proc.stdout


def test_sample_pairs_draws_near_misses_and_reports_bad_runs_cleanly(tmp_path, gold):
    from typer.testing import CliRunner

    from paperfields.cli import app

    paper = next(g for g in gold if g.record.datasets)
    record = paper.record.model_dump()
    exact = record["datasets"][0]
    record["datasets"] = [exact, exact + " v2"]  # one identical to gold (no pair), one near miss (a pair)
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    (run / "predictions.jsonl").write_text(json.dumps({"paper_id": paper.id, "record": record}) + "\n")
    out = tmp_path / "new" / "folder" / "pairs.jsonl"
    args = ["gold", "sample-pairs", "r", "--runs-dir", str(tmp_path / "runs"), "--out", str(out)]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    pairs = [json.loads(l) for l in out.read_text().splitlines()]
    assert {"paper_id": paper.id, "field": "datasets", "prediction": exact + " v2", "gold": exact} in pairs
    assert not any(p["prediction"] == p["gold"] for p in pairs) and all("same" not in p for p in pairs)
    # A cut-off line in the middle is an error naming file and line, not a traceback.
    (run / "predictions.jsonl").write_text('{"paper_id": \n' + json.dumps({"paper_id": paper.id, "record": record}) + "\n")
    bad = CliRunner().invoke(app, args)
    assert bad.exit_code == 2 and f"{run / 'predictions.jsonl'}:1: bad prediction line" in bad.output and bad.exception.__class__ is SystemExit
    # A run without any usable item gives no pairs: an error, not an empty file to judge.
    (run / "predictions.jsonl").write_text(json.dumps({"paper_id": paper.id, "record": None, "failure": "truncated"}) + "\n")
    empty = CliRunner().invoke(app, args)
    assert empty.exit_code == 1 and "no (prediction, gold) item pairs in r" in empty.output


@pytest.mark.parametrize("line, message", [
    ('{"paper_id": "p1", "field": "datasets"', ":2: not JSON"),
    ('["a list"]', ":2: not a JSON object"),
    ('{"paper_id": "pnope", "field": "datasets", "prediction": "a", "gold": "b", "same": true}', ":2: field 'paper_id': 'pnope' has no gold record"),
    ('{"paper_id": "PID", "field": "colour", "prediction": "a", "gold": "b", "same": true}', ":2: field 'field': 'colour' is not one of"),
    ('{"paper_id": "PID", "field": "datasets", "prediction": 3, "gold": "b", "same": true}', ":2: field 'prediction' must be a string"),
    ('{"paper_id": "PID", "field": "datasets", "prediction": "a", "gold": "b", "same": "yes"}', ":2: field 'same' must be true or false"),
])
def test_bad_scorer_judgment_lines_name_file_line_and_field(root, tmp_path, gold, line, message):
    from paperfields.scoring.validity import load_judgments

    path = tmp_path / "scorer_judgments.jsonl"
    good = (root / "gold" / "scorer_judgments.jsonl").read_text().splitlines()[0]
    path.write_text(good + "\n" + line.replace("PID", gold[0].id) + "\n")
    with pytest.raises(GoldError) as err:
        load_judgments(path, {g.id for g in gold})
    assert str(err.value).startswith(f"{path}{message}")
    path.write_bytes(b'{"paper_id": "\xff"}\n')
    with pytest.raises(GoldError, match=f"{path}:1: bytes are not valid UTF-8"):
        load_judgments(path)
    path.write_text("\n")
    with pytest.raises(GoldError, match=f"{path}: no judgments"):
        load_judgments(path)


def test_agreement_refuses_an_empty_or_unknown_second_labeling_and_says_when_validity_is_missing(root, tmp_path):
    from paperfields.scoring.agreement import agreement_markdown

    gold_path, corpus_path = root / "gold" / "gold.jsonl", root / "gold" / "corpus.jsonl"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(GoldError, match=f"{empty}: no records"):
        agreement_markdown(gold_path, empty, corpus_path)
    first_lines = gold_path.read_text().splitlines()
    stranger = json.loads(first_lines[0]) | {"id": "p0000000000"}
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(json.dumps(stranger) + "\n")
    with pytest.raises(GoldError, match="paper ids with no record in .*: p0000000000"):
        agreement_markdown(gold_path, unknown, corpus_path)
    # A gold folder without scorer judgments: the report says validity is not reported, instead of leaving it out.
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "gold.jsonl").write_text(gold_path.read_text())
    text = agreement_markdown(alone / "gold.jsonl", root / "gold" / "second_annotation.jsonl", corpus_path)
    assert "Not reported: there is no `scorer_judgments.jsonl` beside the gold file" in text
    assert "Not reported" not in agreement_markdown(gold_path, root / "gold" / "second_annotation.jsonl", corpus_path)
