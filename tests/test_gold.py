from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from paperfields.core.gold import GoldError, check_gold, load_gold
from paperfields.core.schema import PaperRecord
from tests.cli_in_process import run_cli


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


def _corrupt(root, tmp_path, line_index: int, edit) -> Path:
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
    proc = run_cli("gold", "check", "--gold", str(path))
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


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda o: o.update(training_free="yes"), "field 'training_free': unknown field (a typo?)"),
        (
            lambda o: o["record"].update(training_free="yes"),
            "field 'record.training_free': must be true, false or null (a JSON boolean), not \"yes\"",
        ),
        (
            lambda o: o["record"].update(training_free=0),
            "field 'record.training_free': must be true, false or null (a JSON boolean), not 0",
        ),
        (
            lambda o: _first_result_value(o, "12.5"),
            "field 'record.results.0.value': must be a JSON number, not \"12.5\"",
        ),
        (
            lambda o: o["record"]["results"][0].update(value_upper="63%"),
            "field 'record.results.0.value_upper': must be a JSON number, not \"63%\"",
        ),
        (lambda o: _first_result_value(o, True), "field 'record.results.0.value': must be a JSON number, not true"),
    ],
    ids=[
        "unknown-top-level-key",
        "training_free-string",
        "training_free-0",
        "value-string",
        "value_upper-string",
        "value-bool",
    ],
)
def test_gold_is_strict_where_model_replies_are_lenient(root, tmp_path, change, message):
    line = (root / "gold" / "gold.jsonl").read_text().splitlines()[0]
    assert json.loads(line)["record"]["results"]  # line 1 has a result to corrupt
    path = _corrupt(root, tmp_path, 0, _edit_record(change))
    with pytest.raises(GoldError) as err:
        load_gold(path)
    assert str(err.value) == f"{path}:1: {message}"
    proc = run_cli("gold", "check", "--gold", str(path))
    assert proc.returncode == 1 and f"{path}:1: {message}" in proc.stderr


def test_model_replies_stay_lenient_where_gold_is_strict():
    """PaperRecord (what a model's reply is parsed into) still coerces what gold refuses."""
    record = PaperRecord.model_validate(
        {
            "training_free": "yes",
            "unknown": 1,
            "results": [{"metric": "accuracy", "value": "12.5", "unit": "percent", "kind": "absolute"}],
        }
    )
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
    proc = run_cli("gold", "check", "--gold", str(path))
    assert proc.returncode == 1
    assert (
        f"{path}:3: not valid JSON" in proc.stderr + proc.stdout
        and f"{path}:10: field 'record.research_area'" in proc.stderr + proc.stdout
    )


def test_sample_pairs_draws_near_misses_and_reports_bad_runs_cleanly(tmp_path, gold):

    paper = next(g for g in gold if g.record.datasets)
    record = paper.record.model_dump()
    exact = record["datasets"][0]
    record["datasets"] = [exact, exact + " v2"]  # one identical to gold (no pair), one near miss (a pair)
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    (run / "predictions.jsonl").write_text(json.dumps({"paper_id": paper.id, "record": record}) + "\n")
    out = tmp_path / "new" / "folder" / "pairs.jsonl"
    args = ["gold", "sample-pairs", "r", "--runs-dir", str(tmp_path / "runs"), "--out", str(out)]
    done = run_cli(*args)
    assert done.exit_code == 0, done.output
    pairs = [json.loads(l) for l in out.read_text().splitlines()]
    assert {"paper_id": paper.id, "field": "datasets", "prediction": exact + " v2", "gold": exact} in pairs
    assert not any(p["prediction"] == p["gold"] for p in pairs) and all("same" not in p for p in pairs)
    # A cut-off line in the middle is an error naming file and line, not a traceback.
    (run / "predictions.jsonl").write_text(
        '{"paper_id": \n' + json.dumps({"paper_id": paper.id, "record": record}) + "\n"
    )
    bad = run_cli(*args)
    assert (
        bad.exit_code == 2
        and f"{run / 'predictions.jsonl'}:1: bad prediction line" in bad.output
        and bad.exception.__class__ is SystemExit
    )
    # A run without any usable item gives no pairs: an error, not an empty file to judge.
    (run / "predictions.jsonl").write_text(
        json.dumps({"paper_id": paper.id, "record": None, "failure": "truncated"}) + "\n"
    )
    empty = run_cli(*args)
    assert empty.exit_code == 1 and "no (prediction, gold) item pairs in r" in empty.output


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"paper_id": "p1", "field": "datasets"', ":2: not JSON"),
        ('["a list"]', ":2: not a JSON object"),
        (
            '{"paper_id": "pnope", "field": "datasets", "prediction": "a", "gold": "b", "same": true}',
            ":2: field 'paper_id': 'pnope' has no gold record",
        ),
        (
            '{"paper_id": "PID", "field": "colour", "prediction": "a", "gold": "b", "same": true}',
            ":2: field 'field': 'colour' is not one of",
        ),
        (
            '{"paper_id": "PID", "field": "datasets", "prediction": 3, "gold": "b", "same": true}',
            ":2: field 'prediction' must be a string",
        ),
        (
            '{"paper_id": "PID", "field": "datasets", "prediction": "a", "gold": "b", "same": "yes"}',
            ":2: field 'same' must be true or false",
        ),
    ],
)
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


def _gold_folder(root, tmp_path, *names):
    """A gold folder holding copies of the named files of gold/ (gold.jsonl always)."""
    folder = tmp_path / "gold"
    folder.mkdir()
    for name in ("gold.jsonl",) + names:
        shutil.copy(root / "gold" / name, folder / name)
    return folder


def test_agreement_refuses_an_empty_or_unknown_second_labeling_and_says_when_validity_is_missing(root, tmp_path):
    from paperfields.scoring.agreement import agreement_markdown

    folder = _gold_folder(root, tmp_path)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(GoldError, match=f"{empty}: no records"):
        agreement_markdown(folder, empty)
    stranger = json.loads((root / "gold" / "gold.jsonl").read_text().splitlines()[0]) | {"id": "p0000000000"}
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(json.dumps(stranger) + "\n")
    with pytest.raises(GoldError, match=f"{unknown}: paper ids with no record in the gold: p0000000000"):
        agreement_markdown(folder, unknown)
    # Without any labeling or judgments the report says what is missing instead of leaving it out.
    text = agreement_markdown(folder)
    assert "Not yet available: `second_annotation_2.jsonl` does not exist." in text
    assert (
        "No held-out judged pairs (`gold/scorer_stratified_judgments.jsonl`)" in text
        and "`gold/scorer_judgments.jsonl`:" not in text
    )


# Compared labelings are never edited after the comparison; the frozen first labelings neither.
FROZEN_FILES = {
    # commit 665db69
    "second_annotation_blind_2026.jsonl": "ef208a278bc3139e3bd5f54d518f2da037316e5c95b93eff6f7cda41e3489f3c",
    # gold.jsonl lines at 665db69
    "first_labeling_v1.1_sample1.jsonl": "dd1e367ba81cbd017b4ba7ce119de196ef944ae0f385c42ee4739ae276aea53a",
    "second_annotation_2.jsonl": "f2eb7c645a3dc098c06497de98db0242345e0d71ed74319877ff9b5143b97581",  # commit 3ea23ac
    # gold v1.3 (8f5e453) lines
    "first_labeling_v1.3_sample2.jsonl": "b9d111decea38a9c0827854f62ecda4138e3f8e486b0f0796db8c7c80ace4b1a",
}


@pytest.mark.parametrize("name", sorted(FROZEN_FILES))
def test_blind_labelings_and_frozen_first_labelings_are_never_edited(root, name):
    digest = hashlib.sha256((root / "gold" / name).read_bytes()).hexdigest()
    assert digest == FROZEN_FILES[name], f"gold/{name} was edited; a compared or frozen labeling must stay as it was"


def test_second_blind_sample_is_fresh_and_its_first_labeling_is_gold_v1_3_frozen(root, gold):
    from paperfields.scoring.agreement import CURRENT_SAMPLE, FIRST_SAMPLE

    first = {g.id for g in load_gold(root / "gold" / FIRST_SAMPLE.second)}
    second = [g.id for g in load_gold(root / "gold" / CURRENT_SAMPLE.second)]
    assert len(second) == len(set(second)) >= 24 and not set(second) & first
    split = {g.id: g.split for g in gold}
    assert {split[i] for i in second} == {"test"}
    frozen = load_gold(root / "gold" / CURRENT_SAMPLE.reference)
    assert [g.id for g in frozen] == [g.id for g in gold if g.id in set(second)]
    assert (root / "gold" / CURRENT_SAMPLE.who_file).read_text().strip()


def test_field_agreement_pools_items_and_averages_defined_papers():
    import numpy as np

    from paperfields.scoring.agreement import cohen_kappa, field_agreement

    # Paper 1 agrees on 3 items, paper 2 has one item only the second labeling gives, paper 3 is empty in both.
    a = field_agreement(np.array([[3, 0, 0], [0, 1, 0], [0, 0, 0]]))
    assert a.papers == 2
    assert a.pooled == round(6 / 7, 4) and a.per_paper == 0.5
    assert a.precision == 0.75 and a.recall == 1.0
    assert a.pooled_ci95[0] <= a.pooled <= a.pooled_ci95[1] and a.per_paper_ci95 == (0.0, 1.0)
    nothing = field_agreement(np.zeros((4, 3), dtype=int))
    assert nothing.papers == 0 and nothing.pooled is None and nothing.per_paper is None
    assert cohen_kappa([("a", "a"), ("a", "b"), ("b", "b"), ("b", "b")]) == 0.5
    assert cohen_kappa([(None, None), (True, True)]) == 1.0 and cohen_kappa([]) is None


def test_current_agreement_is_reported_from_a_fresh_blind_sample(root, tmp_path, gold):
    from paperfields.scoring.agreement import agreement_markdown, check_current_sample

    folder = _gold_folder(root, tmp_path, "first_labeling_v1.3_sample2.jsonl")
    frozen = load_gold(folder / "first_labeling_v1.3_sample2.jsonl")
    labeled = [g for g in frozen if len(g.record.tasks) >= 2][:3]
    second = [g.model_dump(mode="json") for g in labeled]
    second[0]["record"]["tasks"][0] = "underwater basket weaving"
    (folder / "second_annotation_2.jsonl").write_text("".join(json.dumps(g) + "\n" for g in second))
    text = agreement_markdown(folder)
    assert text.index("## Current agreement (second blind sample)") < text.index("## Scorer validity")
    assert "Overall agreement, current sample, blind (macro over fields, 3 papers): pooled **" in text
    total, first_tasks = sum(len(g.record.tasks) for g in labeled), len(labeled[0].record.tasks)
    pooled, per_paper = (total - 1) / total, ((first_tasks - 1) / first_tasks + 2) / 3
    row = next(line for line in text.splitlines() if line.startswith("| tasks |"))
    assert row.startswith(f"| tasks | 3 | {pooled:.3f} [") and f"| {per_paper:.3f} [" in row
    assert next(line for line in text.splitlines() if line.startswith("| research_area |")).startswith(
        "| research_area | 3 | 1.000 [1.000, 1.000] |"
    )
    assert f"#### {labeled[0].id}" in text and "underwater basket weaving" in text
    assert "Who labeled, and how: not recorded" in text
    (folder / "second_annotation_2_who.txt").write_text(
        "Annotator B, 2026-12-01; had seen neither gold nor model output.\n"
    )
    assert "Who labeled, and how: Annotator B, 2026-12-01" in agreement_markdown(folder)
    # The default labeling is second_annotation_2.jsonl; --second (current_path) points elsewhere.
    assert "papers): pooled **" in agreement_markdown(folder, folder / "second_annotation_2.jsonl")
    # Later gold fixes do not move the figure: it is computed against the frozen first labeling.
    lines = (folder / "gold.jsonl").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line)["id"] == labeled[1].id)
    lines[at] = _edit_record(lambda o: o["record"].update(tasks=[]))(lines[at])
    (folder / "gold.jsonl").write_text("\n".join(lines) + "\n")
    moved = agreement_markdown(folder)
    assert next(line for line in moved.splitlines() if line.startswith("| tasks |")) == row
    # The edit above, plus any paper later rulings relabeled (gold v1.4 ruling 26 changed p2b9b8df0e2's results).
    today = {g.id: g.record for g in load_gold(folder / "gold.jsonl")}
    differing = sum(today[g.id] != g.record for g in labeled)
    assert differing >= 1
    assert (
        "Secondary: the same blind labeling against today's gold (which differs from the "
        f"frozen first labeling on {differing} of these papers" in moved
    )
    # A fresh sample reuses no first-sample paper and holds test papers only.
    path = folder / "second_annotation_2.jsonl"
    with pytest.raises(
        GoldError, match=rf"{path}: papers already in the first sample \(not a fresh sample\): {labeled[0].id}"
    ):
        check_current_sample(load_gold(path), gold, {labeled[0].id}, path)
    dev = next(g for g in gold if g.split == "dev")
    path.write_text(json.dumps(dev.model_dump(mode="json")) + "\n")
    with pytest.raises(GoldError, match=rf"{path}: papers that are not in the test split: {dev.id}"):
        agreement_markdown(folder)


def test_first_sample_headline_is_the_blind_labeling_against_the_first_labeling_of_its_time(root):
    from paperfields.scoring.agreement import agreement_markdown

    text = agreement_markdown(root / "gold")
    assert "blind to the first labeling" not in text
    first = text.index("## First sample (2026, blind)")
    assert (
        text.index("## Current agreement")
        < first
        < text.index("## Not agreement: the copies relabeled after the comparison")
    )
    section = text[first:]
    assert (
        "Second labeling `second_annotation_blind_2026.jsonl`, first labeling `first_labeling_v1.1_sample1.jsonl`."
        in section
    )
    # Disagreements the edited copy hid are back: the blind annotator's own tasks.
    assert (
        "#### p8fe892f47d\n\n- `tasks`: ['KV caching', 'retrieval-augmented "
        "generation', 'in-context learning'] vs ['KV reuse']" in section
    )
    assert next(line for line in section.splitlines() if line.startswith("| tasks |")).endswith("| yes |")
    # 14 records (16 values) edited under the v1.2 rulings, and p5840fb4073's tasks under ruling 27 of v1.4.
    assert "15 of 28 records changed, 17 field values" in section
    headline = next(
        line
        for line in section.splitlines()
        if line.startswith("Overall agreement, first sample, blind (macro over fields, 28 papers)")
    )
    committed = (root / "gold" / "AGREEMENT.md").read_text()
    assert headline in committed, "gold/AGREEMENT.md is stale: run `paperfields gold agreement`"


def test_gold_v1_4_rulings_are_applied(gold):
    """The five borderline items of issue 27 and every other record the v1.4 rulings touch (GUIDELINES.md, 26-30)."""
    by_id = {g.id: g.record for g in gold}
    travel = [(r.value, r.metric) for r in by_id["pe3cd84f965"].results]
    assert (5, "cities") not in travel and (150, "real-world travel scenarios") in travel  # 26: coverage is not size
    assert [(r.value, r.metric) for r in by_id["p2b9b8df0e2"].results] == [(2000, "instances")]  # 26
    assert by_id["p59349ff425"].results[0].metric == "game settings"  # 26: the benchmark's own units stay
    assert by_id["p7fc2ae8831"].tasks == ["threat-investigation"]  # 27: a field of knowledge is not a task
    assert "narrative tasks" not in by_id["p5840fb4073"].tasks and "code generation" in by_id["p5840fb4073"].tasks  # 27
    assert by_id["pda362999fe"].contribution_types == ["method"]  # 28: no software system presented
    assert "system" in by_id["pc68ddf2687"].contribution_types  # 28: "an inference system" stays
    assert by_id["p38ca4435eb"].method_name is None  # 29: "Self Distillation" is a generic technique term
    assert by_id["p5ca80ee616"].metrics == ["average reward", "upper-bound"]  # 30: "... but not the upper-bound"


def test_relabeled_copies_differ_from_their_blind_labelings_only_by_the_later_rulings(root):
    """A ruling made after a comparison edits a copy of the blind labeling (the blind file is pinned above)."""
    from paperfields.scoring.agreement import RELABELED_COPIES

    def fields_changed(copy, blind):
        edited, original = (
            {g.id: g.record for g in load_gold(root / "gold" / copy)},
            {g.id: g.record for g in load_gold(root / "gold" / blind)},
        )
        assert edited.keys() == original.keys()
        return {
            (pid, f)
            for pid in edited
            for f in PaperRecord.model_fields
            if getattr(edited[pid], f) != getattr(original[pid], f)
        }

    current = next(c for c in RELABELED_COPIES if c.copy == "second_annotation_2_relabeled.jsonl")
    assert fields_changed(current.copy, current.sample.second) == {("p38ca4435eb", "method_name")}  # ruling 29
    first = next(c for c in RELABELED_COPIES if c.copy == "second_annotation_adjudicated.jsonl")
    changed = fields_changed(first.copy, first.sample.second)
    assert ("p5840fb4073", "tasks") in changed and len(changed) == 17  # 16 values under v1.2, one under ruling 27
    assert (
        "narrative tasks"
        not in next(g for g in load_gold(root / "gold" / first.copy) if g.id == "p5840fb4073").record.tasks
    )
