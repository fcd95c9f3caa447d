"""Inter-annotator agreement: blind second labelings scored with the project's own scorer.

The first labeling is taken as gold and a second, blind labeling of the same papers as the
prediction, so per-field F1 is the pairwise F1 agreement used for span/slot annotation (Hripcsak &
Rothschild 2005, "Agreement, the F-measure, and reliability in information retrieval"). For the
single-label ``research_area`` and ``training_free`` Cohen's kappa (Cohen 1960) is reported beside
raw agreement.

Each field is reported two ways, both with a 95% percentile bootstrap interval over papers
(:mod:`paperfields.scoring.metrics.bootstrap`, the scorer's draws; none under 2 papers):

- pooled (micro) F1: every item of every paper counted once, ``2tp / (2tp + fp + fn)``;
- per-paper F1: the mean over the papers where the field is defined (at least one labeling has
  something there; a paper both labelings leave empty says nothing about agreement).

Samples (files in ``gold/``; a labeling file is never edited once compared, see ``SAMPLES``):

- the first sample: ``second_annotation_blind_2026.jsonl`` (28 papers) against the first labeling
  as it stood then, ``first_labeling_v1.1_sample1.jsonl``; both byte-identical to commit 665db69.
  ``second_annotation_adjudicated.jsonl`` is a copy edited after adjudication (and under later
  rulings): it is reported only as a labeled secondary figure, never as agreement.
- the current sample: ``second_annotation_2.jsonl``, a fresh blind labeling of test papers outside the
  first sample, against ``first_labeling_v1.3_sample2.jsonl``, the first labeling (gold v1.3) frozen
  before the comparison; ``second_annotation_2_who.txt`` says who labeled it and what they had seen.
  ``second_annotation_2_relabeled.jsonl`` is its copy relabeled under later rulings, reported like the
  first sample's edited copy (``RELABELED_COPIES``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from paperfields.core.fields import record_fields
from paperfields.core.gold import GoldError, GoldRecord, load_gold
from paperfields.core.plural import plural
from paperfields.core.schema import PaperRecord
from paperfields.scoring.board import fmt
from paperfields.scoring.metrics.bootstrap import index_bootstrap_ci
from paperfields.scoring.metrics.f1 import f1, f1_pooled
from paperfields.scoring.metrics.kappa import cohen_kappa
from paperfields.scoring.score import ACCURACY_FIELDS, HEADLINE_FIELDS, REPORTED_FIELDS, SCORER_VERSION, score_paper

_RESULT_LISTS = {
    f.name for f in record_fields(PaperRecord) if f.is_record_list
}  # shown by (value, metric) in disagreements

LOW_AGREEMENT = 0.90


@dataclass(frozen=True)
class Sample:
    """One double-annotated sample: the blind second labeling, the first labeling it is compared
    with (frozen when the comparison was first made), and who labeled it and how blind it is."""

    key: str
    title: str
    second: str
    reference: str
    provenance: str
    who_file: Optional[str] = None


FIRST_SAMPLE = Sample(
    key="first",
    title="First sample (2026, blind)",
    second="second_annotation_blind_2026.jsonl",
    reference="first_labeling_v1.1_sample1.jsonl",
    provenance=(
        "28 papers drawn at random, 7 per source file (2 dev, 5 test). The first labeling is gold v1.1, made by the "
        "project's annotators, AI agent sessions, from the abstracts (the first pass of `GUIDELINES.md`). The second "
        "labeling was made from `GUIDELINES.md` v1.1 and the abstracts without the first labeling, as commit 665db69 "
        '("second blind annotation of 28 papers") states; the repository records neither who the second annotator '
        "was nor anything that would verify the blindness beyond that statement (nothing says it was a person, so "
        "this is not a human ceiling either). Both files here are byte-identical to that commit and were never "
        "edited. After this comparison the first labeling was adjudicated (gold v1.2, then v1.3), and a copy of the "
        "second labeling was edited to follow the v1.2 rulings, and later the v1.4 rulings; that copy is not "
        "agreement (see below). When first made, this comparison was reported as 0.977 overall (macro of per-paper "
        "F1) and 0.883 on tasks, by scorer 2, which counted a field both labelings leave empty as full agreement; "
        "the figures below are recomputed with today's scorer."
    ),
)
CURRENT_SAMPLE = Sample(
    key="current",
    title="Current agreement (second blind sample)",
    second="second_annotation_2.jsonl",
    reference="first_labeling_v1.3_sample2.jsonl",
    provenance=(
        "Test papers outside the first sample, labeled from `GUIDELINES.md` v1.3 and the abstracts by an annotator who "
        "has seen neither gold nor any model output for them; the labeling is never edited after the comparison (a "
        "copy relabeled under later rulings is shown apart, as not agreement). The first labeling is gold v1.3 frozen "
        "in `first_labeling_v1.3_sample2.jsonl` before the comparison, so later gold fixes cannot raise the figure "
        "(the same labeling against today's gold is shown apart when the two differ)."
    ),
    who_file="second_annotation_2_who.txt",
)
SAMPLES = (FIRST_SAMPLE, CURRENT_SAMPLE)


@dataclass(frozen=True)
class RelabeledCopy:
    """A copy of a sample's blind second labeling edited after the comparison to follow later rulings
    (the blind file itself is never edited); reported against today's gold, never as agreement."""

    copy: str
    sample: Sample
    what: str


RELABELED_COPIES = (
    RelabeledCopy(
        copy="second_annotation_adjudicated.jsonl",
        sample=FIRST_SAMPLE,
        what=(
            "the first sample's second labeling after it was edited to follow the v1.2 rulings (commit 684c90d) and "
            "the v1.4 rulings (the v1.3 rulings were not applied to it)"
        ),
    ),
    RelabeledCopy(
        copy="second_annotation_2_relabeled.jsonl",
        sample=CURRENT_SAMPLE,
        what="the current sample's second labeling with the v1.4 rulings applied (made in v1.4)",
    ),
)


@dataclass
class FieldAgreement:
    """Agreement on one field: pooled (micro) F1 and mean per-paper F1, each with a 95% CI.
    ``per_paper`` is None when no paper defines the field; ``pooled`` None when no item exists."""

    papers: int
    pooled: Optional[float]
    pooled_ci95: Optional[tuple[float, float]]
    per_paper: Optional[float]
    per_paper_ci95: Optional[tuple[float, float]]
    precision: Optional[float]
    recall: Optional[float]


@dataclass
class AgreementReport:
    """Agreement of a second labeling with a first on the papers both labeled."""

    papers: list[str]
    fields: dict[str, FieldAgreement]
    overall_pooled: float
    overall_pooled_ci95: Optional[tuple[float, float]]
    overall_per_paper: float
    overall_per_paper_ci95: Optional[tuple[float, float]]
    kappa: dict[str, tuple[float, Optional[float]]] = field(default_factory=dict)
    counts: dict[str, np.ndarray] = field(default_factory=dict, repr=False)


def _f1(counts: np.ndarray) -> Optional[float]:
    return f1(*(int(x) for x in counts))


def field_agreement(counts: np.ndarray) -> FieldAgreement:
    """Pooled and per-paper agreement of one field from its per-paper (tp, fp, fn) rows (shape (n, 3))."""
    defined = counts[counts.sum(axis=1) > 0]
    if not len(defined):
        return FieldAgreement(
            papers=0, pooled=None, pooled_ci95=None, per_paper=None, per_paper_ci95=None, precision=None, recall=None
        )
    tp, fp, fn = (int(x) for x in defined.sum(axis=0))
    per = np.array([_f1(row) for row in defined], dtype=float)
    return FieldAgreement(
        papers=len(defined),
        pooled=round(_f1(defined.sum(axis=0)), 4),
        pooled_ci95=index_bootstrap_ci(
            lambda idx: _f1(defined[idx].sum(axis=0)),
            len(defined),
            rows=lambda indices: f1_pooled(defined[indices].sum(axis=1)),
        ),
        per_paper=round(float(per.mean()), 4),
        per_paper_ci95=index_bootstrap_ci(
            lambda idx: float(per[idx].mean()), len(per), rows=lambda indices: per[indices].mean(axis=-1)
        ),
        precision=round(tp / (tp + fp), 4) if tp + fp else None,
        recall=round(tp / (tp + fn), 4) if tp + fn else None,
    )


def _macro(counts: dict[str, np.ndarray], idx: np.ndarray, pooled: bool) -> float:
    """Mean over HEADLINE_FIELDS defined on papers ``idx`` of pooled F1, or of mean per-paper F1."""
    values = []
    for name in HEADLINE_FIELDS:
        rows = counts[name][idx]
        rows = rows[rows.sum(axis=1) > 0]
        if len(rows):
            values.append(_f1(rows.sum(axis=0)) if pooled else float(np.mean([_f1(r) for r in rows])))
    return float(np.mean(values))


def _macro_of_resamples(counts: dict[str, np.ndarray], indices: np.ndarray, pooled: bool) -> np.ndarray:
    """:func:`_macro` of each resample (``indices`` of shape (chunk, n)) -> (chunk,): each field's F1 over the
    chunk at once, then, row by row, ``np.mean`` of the defined fields' values in HEADLINE_FIELDS order, the very
    floats :func:`_macro` gives (a per-paper field's mean is taken row by row too, over its defined papers in
    the resample's order, as :func:`_macro` takes it)."""
    by_field = []
    for name in HEADLINE_FIELDS:
        rows = counts[name][indices]  # (chunk, n, 3)
        if pooled:
            by_field.append(f1_pooled(rows.sum(axis=1)))
            continue
        per = f1_pooled(rows)  # (chunk, n), NaN where a paper leaves the field empty in both labelings
        defined = ~np.isnan(per)
        by_field.append(np.array([float(np.mean(p[d])) if d.any() else np.nan for p, d in zip(per, defined)]))
    values = np.stack(by_field, axis=-1)
    return np.array([float(np.mean(row[~np.isnan(row)])) for row in values])


def agreement(first: list[GoldRecord], second: list[GoldRecord]) -> AgreementReport:
    """Score the second labeling against the first on the papers the second labeled.

    Raises GoldError if the second labeling is empty or names a paper the first has no record for.
    """
    if not second:
        raise GoldError("the second labeling has no records")
    by_first = {g.id: g for g in first}
    unknown = sorted(g.id for g in second if g.id not in by_first)
    if unknown:
        raise GoldError(f"paper ids with no first-labeling record: {', '.join(unknown)}")
    per_paper = [score_paper(g.record.model_dump(mode="json"), by_first[g.id]) for g in second]
    counts = {name: np.array([p[name] for p in per_paper], dtype=int).reshape(-1, 3) for name in REPORTED_FIELDS}
    n = len(second)
    kappa = {}
    for name in ACCURACY_FIELDS:
        pairs = [(getattr(by_first[g.id].record, name), getattr(g.record, name)) for g in second]
        kappa[name] = (round(sum(a == b for a, b in pairs) / n, 4), cohen_kappa(pairs))
    return AgreementReport(
        papers=[g.id for g in second],
        fields={name: field_agreement(counts[name]) for name in REPORTED_FIELDS},
        overall_pooled=round(_macro(counts, np.arange(n), pooled=True), 4),
        overall_pooled_ci95=index_bootstrap_ci(
            lambda idx: _macro(counts, idx, pooled=True),
            n,
            rows=lambda indices: _macro_of_resamples(counts, indices, pooled=True),
        ),
        overall_per_paper=round(_macro(counts, np.arange(n), pooled=False), 4),
        overall_per_paper_ci95=index_bootstrap_ci(
            lambda idx: _macro(counts, idx, pooled=False),
            n,
            rows=lambda indices: _macro_of_resamples(counts, indices, pooled=False),
        ),
        kappa=kappa,
        counts=counts,
    )


def check_current_sample(second: list[GoldRecord], gold: list[GoldRecord], first_sample: set[str], path: Path) -> None:
    """A fresh blind sample must hold gold test papers outside the first sample. Raises GoldError naming
    ``path`` and the offending ids (unknown to the gold, already in the first sample, or not test papers)."""
    split = {g.id: g.split for g in gold}
    unknown = sorted(g.id for g in second if g.id not in split)
    if unknown:
        raise GoldError(f"{path}: paper ids with no record in the gold: {', '.join(unknown)}")
    reused = sorted(g.id for g in second if g.id in first_sample)
    if reused:
        raise GoldError(f"{path}: papers already in the first sample (not a fresh sample): {', '.join(reused)}")
    not_test = sorted(g.id for g in second if split.get(g.id) != "test")
    if not_test:
        raise GoldError(f"{path}: papers that are not in the test split: {', '.join(not_test)}")


def _ci(ci: Optional[tuple[float, float]]) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""


def _num(x: Optional[float]) -> str:
    return fmt(x)


def _table(report: AgreementReport) -> list[str]:
    lines = [
        "| field | papers | pooled (micro) F1 [95% CI] | per-paper F1 [95% CI] | pooled P | pooled R | below 0.90 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in REPORTED_FIELDS:
        a = report.fields[name]
        low = a.pooled is not None and a.pooled < LOW_AGREEMENT and name in HEADLINE_FIELDS
        lines.append(
            f"| {name} | {a.papers} | {_num(a.pooled)} {_ci(a.pooled_ci95)} | {_num(a.per_paper)} "
            f"{_ci(a.per_paper_ci95)} | {_num(a.precision)} | {_num(a.recall)} | {'yes' if low else ''} |"
        )
    return lines


def _summary(label: str, report: AgreementReport) -> list[str]:
    kappa = "; ".join(f"{name}: raw {raw:.3f}, Cohen's kappa {_num(k)}" for name, (raw, k) in report.kappa.items())
    return [
        f"Overall agreement, {label} (macro over fields, {len(report.papers)} papers): pooled "
        f"**{report.overall_pooled:.3f}** {_ci(report.overall_pooled_ci95)}; per paper "
        f"{report.overall_per_paper:.3f} {_ci(report.overall_per_paper_ci95)}",
        f"Single-label fields: {kappa}",
    ]


def _disagreements(report: AgreementReport, first: dict[str, GoldRecord], second: dict[str, GoldRecord]) -> list[str]:
    lines: list[str] = []
    for i, pid in enumerate(report.papers):
        diffs = []
        for name in HEADLINE_FIELDS:
            _, fp, fn = report.counts[name][i]
            if fp or fn:
                a, b = getattr(first[pid].record, name), getattr(second[pid].record, name)
                if name in _RESULT_LISTS:  # result tuples, by what the headline matches on
                    a, b = [(r.value, r.metric) for r in a], [(r.value, r.metric) for r in b]
                diffs.append(f"- `{name}`: {a!r} vs {b!r}")
        if diffs:
            lines += [f"#### {pid}", ""] + diffs + [""]
    return lines or ["None.", ""]


def _differs(a: list[GoldRecord], b: dict[str, GoldRecord]) -> list[str]:
    return sorted(g.id for g in a if g.id in b and g.record != b[g.id].record)


def sample_section(
    sample: Sample, gold_dir: Path, gold: list[GoldRecord], second_path: Optional[Path] = None
) -> list[str]:
    """Markdown for one sample: provenance, the headline (blind second labeling against the frozen first
    labeling), the same labeling against today's gold if that differs, and every disagreement.

    Raises GoldError for a bad labeling file or a labeled paper with no frozen first record.
    """
    second_path = second_path or gold_dir / sample.second
    reference_path = gold_dir / sample.reference
    second = load_gold(second_path)
    if not second:
        raise GoldError(f"{second_path}: no records; a second labeling needs at least one paper")
    reference = (
        load_gold(reference_path) if reference_path.is_file() else [g for g in gold if g.id in {s.id for s in second}]
    )
    frozen = reference_path.is_file()
    try:
        report = agreement(reference, second)
    except GoldError as exc:
        raise GoldError(
            f"{second_path}: {exc} (first labeling: {reference_path if frozen else 'gold.jsonl'})"
        ) from None
    lines = [
        f"## {sample.title}",
        "",
        sample.provenance,
        "",
        f"Second labeling `{second_path.name}`, first labeling `"
        f"{reference_path.name if frozen else 'gold.jsonl (no frozen copy yet)'}`.",
        "",
    ]
    if sample.who_file:
        who = gold_dir / sample.who_file
        lines += [
            f"Who labeled, and how: {who.read_text(encoding='utf-8').strip()}"
            if who.is_file()
            else "Who labeled, and how: not recorded; write it in "
            f"`{sample.who_file}` (annotator, date, what they had seen).",
            "",
        ]
    lines += _summary(f"{sample.key} sample, blind", report) + [""] + _table(report) + [""]
    by_gold = {g.id: g for g in gold}
    labeled = {g.id for g in second}  # the frozen file may hold papers this labeling left out
    changed = _differs([g for g in reference if g.id in labeled], by_gold)
    if changed:
        today = agreement(gold, second)
        lines += [
            "Secondary: the same blind labeling against today's gold (which differs from the frozen first labeling on "
            f"{len(changed)} of these papers, by adjudication or rulings after this comparison, so this figure is not "
            f"blind agreement): pooled {today.overall_pooled:.3f} {_ci(today.overall_pooled_ci95)}, per paper "
            f"{today.overall_per_paper:.3f}; tasks pooled {_num(today.fields['tasks'].pooled)}.",
            "",
        ]
    lines += ["### Disagreements", "", "Per paper and field, first labeling vs second (only fields that differ).", ""]
    lines += _disagreements(report, {g.id: g for g in reference}, {g.id: g for g in second})
    return lines


def _relabeled_section(gold_dir: Path, gold: list[GoldRecord]) -> list[str]:
    """Markdown for the copies of the blind labelings relabeled after their comparison (:data:`RELABELED_COPIES`):
    how far each was edited from its blind file and what it scores against today's gold, stated as not agreement."""
    by_gold = {g.id: g for g in gold}
    paragraphs = []
    for entry in RELABELED_COPIES:
        path, blind_path = gold_dir / entry.copy, gold_dir / entry.sample.second
        if not path.is_file() or not blind_path.is_file():
            continue
        edited, blind = load_gold(path), {g.id: g for g in load_gold(blind_path)}
        changed = _differs(edited, blind)
        fields_changed = sum(
            getattr(g.record, f) != getattr(blind[g.id].record, f)
            for g in edited
            if g.id in blind
            for f in HEADLINE_FIELDS
        )
        equal_now = sum(
            getattr(g.record, f) == getattr(by_gold[g.id].record, f) != getattr(blind[g.id].record, f)
            for g in edited
            if g.id in blind and g.id in by_gold
            for f in HEADLINE_FIELDS
        )
        report = agreement(gold, edited)
        paragraphs += [
            f"`{entry.copy}` is {entry.what}: {len(changed)} of {plural(len(edited), 'record')} changed, "
            f"{plural(fields_changed, 'field value')}; {equal_now} of those edited values "
            f"{'equals' if equal_now == 1 else 'equal'} today's gold. Against today's gold it scores pooled "
            f"{report.overall_pooled:.3f} (per paper {report.overall_per_paper:.3f}).",
            "",
        ]
    if not paragraphs:
        return []
    return (
        [
            "## Not agreement: the copies relabeled after the comparison",
            "",
            "A ruling made after a comparison is applied to a copy of the blind labeling, never to the blind "
            "file, so the blind figures above stay what they were.",
        ]
        + [""]
        + paragraphs
        + [
            "These numbers measure how well the edits followed the rulings, not how far two independent annotators "
            "agree; none is a headline and none may be quoted as agreement.",
            "",
        ]
    )


TARGET_OVERALL, TARGET_FIELD = 0.97, 0.90
# The earlier held-out figure, measured by scorer 3.0 (the 3.1 field rules) while its pairs were still
# held out; since it was published those pairs are tuning material, so it is kept as history only.
EARLIER_HELDOUT_FIGURE = (189, 201, "3.0")


def _proportion_ci(k: int, n: int) -> tuple[float, float]:
    """95% Wilson score interval of k agreeing out of n pairs (Wilson 1927; scipy's binomtest)."""
    from scipy import stats  # imported here: scipy.stats costs about 0.7 s of every command that imports this module

    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return (round(float(ci.low), 3), round(float(ci.high), 3))


def _judged_rows(report: dict) -> list[str]:
    lines = ["| field | pairs | agreement [95% CI] |", "|---|---|---|"]
    for name, (k, n) in sorted(report["per_field"].items()):
        low, high = _proportion_ci(k, n)
        flag = " (below 0.90)" if k / n < TARGET_FIELD else ""
        lines.append(f"| {name} | {n} | {k / n:.3f} [{low:.3f}, {high:.3f}]{flag} |")
    return lines


def _disagreement_lines(report: dict, known: bool = True) -> list[str]:
    """One line per disagreement: the judge's note, then the scorer's reason (on tuning pairs the
    explained reason of ``KNOWN_DISAGREEMENTS`` where there is one; else the mechanism that decided)."""
    from paperfields.scoring.validity import KNOWN_DISAGREEMENTS

    lines = []
    for r in report["disagreements"]:
        why = KNOWN_DISAGREEMENTS.get((r["field"], r["prediction"], r["gold"])) if known else None
        why = why or r["reason"]
        lines.append(
            f"- {r['paper_id']} `{r['field']}`: {r['prediction']!r} vs gold {r['gold']!r}: judge "
            f"{'same' if r['same'] else 'different'}, scorer "
            f"{'same' if r['scorer'] else 'different'}. Judge: {r.get('note', '')} Scorer: {why}."
        )
    return lines


# The fresh held-out figure, measured by scorer 3.3 while its pairs were still held out; published (gold/AGREEMENT.md)
# before scorer 3.4's rules were written, those pairs are tuning material since, so it is kept as history only.
FRESH_FIGURE = (218, 230, "3.3")


@dataclass(frozen=True)
class HeldOutSet:
    """One stratified held-out set of judged pairs in gold/: its pairs and judgments files, the brief, the commit
    that added the judgments unedited (and the start of their sha256 when the lead gave it), and the commit at
    which the rules it checks were frozen. The judgments are never opened while either commit is None: the rules
    not frozen yet, or the commit of the unedited judgments not entered yet (the lead enters it to read the set)."""

    pairs: str
    judgments: str
    committed_at: Optional[str]
    sha256_prefix: Optional[str]
    rules_frozen_at: Optional[str]
    brief: str = "scorer_stratified_brief.md"


# The first stratified set, read once with scorer 3.4 (rules frozen at 75e4452); published, a tuning set since.
FIRST_STRATIFIED = HeldOutSet(
    "scorer_stratified_pairs.jsonl", "scorer_stratified_judgments.jsonl", "22c5752", "ad4e5e51", "75e4452"
)
# What scorer 3.4 measured on it when it was read (gold/AGREEMENT.md at ef50fc0): (agreeing, pairs) overall, on the
# contested band and on results; kept as history.
FIRST_STRATIFIED_FIGURE = {"overall": (161, 240), "contested": (67, 77), "results": (94, 163), "version": "3.4"}
# The second stratified set (drawn with scorer 3.4, seed 39, after the first was read), judged blind and committed
# unedited at de7febf; read once with scorer 3.5 (rules frozen at ac6bd12); published, a tuning set since.
SECOND_STRATIFIED = HeldOutSet(
    "scorer_stratified2_pairs.jsonl", "scorer_stratified2_judgments.jsonl", "de7febf", None, "ac6bd12"
)
# What scorer 3.5 measured on it when it was read (gold/AGREEMENT.md at 1f4d11f); kept as history.
SECOND_STRATIFIED_FIGURE = {"overall": (217, 244), "contested": (11, 16), "results": (206, 228), "version": "3.5"}
# The third stratified set (drawn with scorer 3.5, seed 40, after the second was read), judged blind and committed
# unedited at 7cab0a5; read once with scorer 3.6 (rules frozen at 71d5bad); published, a tuning set since.
THIRD_STRATIFIED = HeldOutSet(
    "scorer_stratified3_pairs.jsonl", "scorer_stratified3_judgments.jsonl", "7cab0a5", "2b966b43", "71d5bad"
)
# What scorer 3.6 measured on it when it was read (gold/AGREEMENT.md at 373313a); kept as history.
THIRD_STRATIFIED_FIGURE = {"overall": (115, 120), "contested": (40, 43), "results": (75, 77), "version": "3.6"}
# The fourth stratified set (drawn with scorer 3.6, seed 41, after the third was read), judged blind and committed
# unedited at 8198002; read once with scorer 3.7 (rules frozen at 88c37e0); published, a tuning set since.
FOURTH_STRATIFIED = HeldOutSet(
    "scorer_stratified4_pairs.jsonl", "scorer_stratified4_judgments.jsonl", "8198002", "429da9bb", "88c37e0"
)
# What scorer 3.7 measured on it when it was read (gold/AGREEMENT.md at 6aa8113); kept as history.
FOURTH_STRATIFIED_FIGURE = {"overall": (79, 82), "contested": (41, 44), "results": (38, 38), "version": "3.7"}
# The fifth stratified set (drawn with scorer 3.7, seed 42, after the fourth was read), judged blind and committed
# unedited at 2b3c985; read once with scorer 3.8 (rules frozen at 985ffc1); published, a tuning set since.
FIFTH_STRATIFIED = HeldOutSet(
    "scorer_stratified5_pairs.jsonl", "scorer_stratified5_judgments.jsonl", "2b3c985", "462beead", "985ffc1"
)
# What scorer 3.8 measured on it when it was read (gold/AGREEMENT.md at 57e86a8); kept as history.
FIFTH_STRATIFIED_FIGURE = {"overall": (44, 47), "contested": (12, 15), "results": (32, 32), "version": "3.8"}
# The sixth stratified set (drawn with scorer 3.8, seed 43, after the fifth was read), judged blind and committed
# unedited at 55eb1c5; read once with scorer 3.9 (rules frozen at f944ada); published, a tuning set since.
SIXTH_STRATIFIED = HeldOutSet(
    "scorer_stratified6_pairs.jsonl", "scorer_stratified6_judgments.jsonl", "55eb1c5", "b4b0ad2c", "f944ada"
)
# What scorer 3.9 measured on it when it was read (gold/AGREEMENT.md at d02dc38); kept as history.
SIXTH_STRATIFIED_FIGURE = {"overall": (21, 22), "contested": (5, 5), "results": (16, 17), "version": "3.9"}
# The seventh stratified set (drawn with scorer 3.9, seed 44, after the sixth was read), judged blind and committed
# unedited at 0a618a4; read once with scorer 3.9 (rules kept, frozen at e330039); published, a tuning set since.
SEVENTH_STRATIFIED = HeldOutSet(
    "scorer_stratified7_pairs.jsonl", "scorer_stratified7_judgments.jsonl", "0a618a4", "9830ff8e", "e330039"
)
# What scorer 3.9 measured on it when it was read (gold/AGREEMENT.md at 81e755a); kept as history.
SEVENTH_STRATIFIED_FIGURE = {"overall": (31, 33), "contested": (3, 3), "results": (28, 30), "version": "3.9"}
# The commit at which scorer 3.10's rules are frozen (issue 38, round eight), before the eighth set is drawn.
RULES_FROZEN_AT: Optional[str] = "0cd4c67"
# The eighth stratified set, drawn with scorer 3.10 (seed 45) after its rules were frozen and judged blind, its
# judgments committed unedited at aa8a1c0; before the lead entered that commit (and the start of their sha256)
# `paperfields gold agreement` never opened its files.
EIGHTH_STRATIFIED = HeldOutSet(
    "scorer_stratified8_pairs.jsonl", "scorer_stratified8_judgments.jsonl", "aa8a1c0", "fedadace", RULES_FROZEN_AT
)
# What scorer 3.10 measured on it when it was read (gold/AGREEMENT.md at c3f4f32): no disagreement, so no rule was
# written after it and scorer 3.10 was kept for the ninth set; a tuning set since, and a held-out read of 3.10 still.
EIGHTH_STRATIFIED_FIGURE = {"overall": (6, 6), "contested": (0, 0), "results": (6, 6), "version": "3.10"}
# The ninth stratified set, drawn with scorer 3.10 (seed 46, rules unchanged since 0cd4c67) after the eighth was read:
# the published runs had no candidate pair left, so all 21 pairs come from the five self-consistency sample answer
# files committed in submissions/agent-self-consistency/. Judged blind; its files are never opened before the lead
# enters the commit of the unedited judgments (and the start of their sha256).
NINTH_STRATIFIED = HeldOutSet(
    "scorer_stratified9_pairs.jsonl", "scorer_stratified9_judgments.jsonl", "e5926ec", "12e99f1a", RULES_FROZEN_AT
)
HELD_OUT = NINTH_STRATIFIED  # the set `paperfields gold agreement` reads by default
HELDOUT_SETS = {
    s.judgments: s
    for s in (
        FIRST_STRATIFIED,
        SECOND_STRATIFIED,
        THIRD_STRATIFIED,
        FOURTH_STRATIFIED,
        FIFTH_STRATIFIED,
        SIXTH_STRATIFIED,
        SEVENTH_STRATIFIED,
        EIGHTH_STRATIFIED,
        NINTH_STRATIFIED,
    )
}
# The stratified sets read and published before today's rules were chosen: tuning sets, shown with today's scorer.
TUNING_STRATIFIED = (
    (FIRST_STRATIFIED, FIRST_STRATIFIED_FIGURE, "the first stratified set", 38, "3.3", "value_metric"),
    (SECOND_STRATIFIED, SECOND_STRATIFIED_FIGURE, "the second stratified set", 39, "3.4", "claim"),
    (THIRD_STRATIFIED, THIRD_STRATIFIED_FIGURE, "the third stratified set", 40, "3.5", "claim"),
    (FOURTH_STRATIFIED, FOURTH_STRATIFIED_FIGURE, "the fourth stratified set", 41, "3.6", "claim"),
    (FIFTH_STRATIFIED, FIFTH_STRATIFIED_FIGURE, "the fifth stratified set", 42, "3.7", "claim"),
    (SIXTH_STRATIFIED, SIXTH_STRATIFIED_FIGURE, "the sixth stratified set", 43, "3.8", "claim"),
    (SEVENTH_STRATIFIED, SEVENTH_STRATIFIED_FIGURE, "the seventh stratified set", 44, "3.9", "claim"),
    (EIGHTH_STRATIFIED, EIGHTH_STRATIFIED_FIGURE, "the eighth stratified set", 45, "3.10", "claim"),
)
TARGET_CONTESTED = 0.90
JUDGE = (
    "a separate AI agent session (a large language model working as a blind judge, not a person), which saw only "
    "the brief, the pairs and the abstracts, never the scorer's verdicts, code or strata"
)
VALIDITY_FILE = "validity.json"  # in gold/: the held-out figures, for the board and the README


def _cell_ci(figure: dict) -> str:
    if not figure["pairs"]:
        return "–"
    low, high = figure["ci95"]
    return f"{figure['agreement']:.3f} [{low:.3f}, {high:.3f}]"


def _kappa_cell(figure: dict) -> str:
    if figure["kappa"] is None:
        return "–"
    ci = figure["kappa_ci95"]
    return f"{figure['kappa']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _figure_rows(named: list[tuple[str, dict]]) -> list[str]:
    lines = [
        "| pairs of | pairs | agreement [95% CI] | Cohen's kappa [95% CI] | scorer "
        "same, judge different | scorer different, judge same |",
        "|---|---|---|---|---|---|",
    ]
    for name, f in named:
        lines.append(
            f"| {name} | {f['pairs']} | {_cell_ci(f)} | {_kappa_cell(f)} | {f['scorer_same_judge_different']} | "
            f"{f['scorer_different_judge_same']} |"
        )
    return lines


def _shown(value) -> str:
    if isinstance(value, dict):
        keys = ("value", "value_upper", "unit", "kind", "qualifier", "metric", "dataset", "model", "baseline")
        return "(" + ", ".join(f"{k}={value[k]!r}" for k in keys if value.get(k) not in (None, "")) + ")"
    return repr(value)


def _store_cosines(path: Path, lines: list[str]) -> None:
    """Add the judged pairs' cosine ``lines`` to the ones ``path`` keeps (one per pair, sorted)."""
    kept = [line for line in path.read_text(encoding="utf-8").splitlines() if line] if path.is_file() else []
    path.write_text("".join(line + "\n" for line in sorted(set(kept) | set(lines))), encoding="utf-8")


def _stratified_section(
    folder: Path,
    gold: list[GoldRecord],
    abstracts: dict[str, str],
    embedder=None,
    figures: Optional[dict] = None,
    held_out: Optional[HeldOutSet] = None,
) -> list[str]:
    """The held-out stratified set ``held_out`` (default :data:`HELD_OUT`; read once its rules are frozen):
    figures, target, semantic tier and every disagreement with its kind; ``figures`` (when given) gets the
    numbers ``gold/validity.json`` holds. [] when not judged."""
    import hashlib

    from paperfields.scoring.semantic import COSINES_FILE, cosine_lines, judged_verdicts, read_cosines
    from paperfields.scoring.validity import (
        StratifiedDraw,
        agreement_figures,
        disagreement_kind,
        load_stratified_judgments,
        stratified_report,
    )

    held_out = held_out or HELD_OUT
    judgments_name, pairs_name = held_out.judgments, held_out.pairs
    frozen_at = held_out.rules_frozen_at
    path, pairs_path = folder / judgments_name, folder / pairs_name
    if not path.is_file() or not pairs_path.is_file():
        return []
    if frozen_at is None or held_out.committed_at is None:
        return [
            "### Held-out stratified pairs",
            "",
            f"`gold/{judgments_name}` is held out: it is read once, after the rules are frozen "
            "(`RULES_FROZEN_AT` in scoring/agreement.py names that commit"
            + (f": {frozen_at}" if frozen_at else "")
            + ") and the commit that added the judgments unedited is entered beside it"
            + ("" if held_out.committed_at is None else f" ({held_out.committed_at})")
            + f"; scorer {SCORER_VERSION}'s figure on it is not read yet.",
            "",
        ]
    draw_path = pairs_path.with_name(pairs_path.stem + ".draw.json")
    draw = StratifiedDraw.model_validate_json(draw_path.read_text(encoding="utf-8")) if draw_path.is_file() else None
    seed, drawn_with = (draw.seed, draw.scorer_version) if draw else ("?", "?")
    # A pool smaller than the quotas is said: the set is every candidate pair left, not a sample of them.
    short = draw is not None and all(draw.counts.get(k, 0) < q for k, q in draw.quotas.items())
    quotas = ", ".join(str(q) for q in draw.quotas.values()) if draw else ""
    pool = f" (every candidate pair left after the exclusions: the quotas were {quotas})" if short else ""
    sha_prefix = held_out.sha256_prefix
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    report = stratified_report(load_stratified_judgments(path, pairs_path, {g.id for g in gold}), gold, abstracts)
    rows = report["rows"]
    cosines = read_cosines(folder / COSINES_FILE)
    missing = judged_verdicts(rows, {g.id: g for g in gold}, abstracts, cosines, embedder)
    if embedder is not None:
        _store_cosines(folder / COSINES_FILE, cosine_lines(rows))
    o, c, r = report["overall"], report["contested"], report["results"]
    strata = report["strata"]
    met = o["agreement"] >= TARGET_OVERALL and (c["agreement"] or 0) >= TARGET_CONTESTED
    lines = [
        "### Held-out stratified pairs (the figure to quote)",
        "",
        f"{o['pairs']} pairs{pool} drawn with seed {seed} by `paperfields gold stratified-pairs` (scoring/validity.py "
        f"`stratified_pairs`, at scorer {drawn_with}) from every published run and the agent reference runs"
        + _off_board(draw, folder)
        + ", in three strata: string pairs the scorer "
        f"matched that are not identical ({strata['matched']['pairs']}), close near misses it left unmatched "
        f"({strata['near_miss']['pairs']}), and result tuples beside the gold result they were aligned with "
        f"({strata['results']['pairs']}); every pair of the judged sets below was excluded "
        f"(`gold/{pairs_name}`, `.draw.json`). Judged same thing or not by "
        f"{JUDGE} (`gold/{held_out.brief}`); `gold/{judgments_name}` was committed unedited at "
        f"{held_out.committed_at} (sha256 {digest}"
        + (
            ""
            if not sha_prefix or digest.startswith(sha_prefix)
            else f", NOT the {sha_prefix}... it was committed with"
        )
        + f"); scorer {SCORER_VERSION}'s rules were written by a helper that never opened the set's files. "
        "The rules, gold alternates and semantic tier of "
        f"scorer {SCORER_VERSION} were chosen on the tuning pairs and the dev split only and frozen at commit "
        f"{frozen_at}; these judgments were then read once, by this command, and no rule was changed after.",
        "",
        "The scorer's verdict is the one the headline uses: a list field's rule as it aligns the item against the "
        "paper's gold list (reading the abstract), `method_name` and `method_full_name` at the strict level, and a "
        "result tuple at the headline's result level, `claim` (scorer 3.5), against the paper's gold results: the "
        "value, a compatible unit and the same kind, the metric the same or naming no quantity where the number "
        "picks one gold result, and no dataset, model or baseline that contradicts gold's (the qualifier is not "
        "asked). The contested band is the string pairs (the matched and near-miss strata).",
        "",
    ]
    lines += _figure_rows(
        [
            ("all", o),
            ("contested band (string pairs)", c),
            ("results", r),
            ("matched stratum", strata["matched"]),
            ("near-miss stratum", strata["near_miss"]),
        ]
    )
    lines += [
        "",
        "Intervals: agreement, 95% Wilson; kappa, 95% percentile bootstrap over pairs.",
        "",
        *_one_sided_judge(rows),
        f"Target: at least {TARGET_OVERALL:.2f} overall and at least {TARGET_CONTESTED:.2f} on the contested band: "
        + (
            "met."
            if met
            else f"not met ({'met' if o['agreement'] >= TARGET_OVERALL else 'not met'} overall, "
            f"{'met' if (c['agreement'] or 0) >= TARGET_CONTESTED else 'not met'} on the contested band). The figure "
            "is published as it is; no rule was changed after this read."
        ),
        "",
    ]
    pooled = _pooled_reads(held_out, {"overall": o, "contested": c, "results": r})
    if pooled:
        lines += [
            f"Every held-out read of scorer {SCORER_VERSION} pooled (this set and {', '.join(pooled['sets'])}, each "
            f"read once with the rules frozen at {frozen_at} and no rule changed after): "
            + _band_cells(pooled["bands"])
            + ".",
            "",
            "Per field:",
            "",
        ]
    lines += _figure_rows(list(report["fields"].items()))
    semantic_rows = [x for x in rows if x["semantic"] is not None]
    semantic = {}
    lines += ["", "#### The semantic tier on these pairs", ""]
    if missing:
        lines += [
            f"Not computed: {len(missing)} cosines are not stored in `gold/{COSINES_FILE}`; run "
            "`paperfields gold agreement --semantic` with the extra installed (`pip install -e '.[semantic]'`).",
            "",
        ]
    else:
        semantic = {
            "overall": agreement_figures(semantic_rows, "semantic"),
            "contested": agreement_figures([x for x in semantic_rows if x["stratum"] != "results"], "semantic"),
        }
        band = sum(x["cosine"] is not None for x in rows)
        lines += [
            f"The embedding model decides the {band} string pairs of the band (scoring/semantic.py; results keep the "
            "deterministic verdict):",
            "",
        ] + _figure_rows([("all", semantic["overall"]), ("contested band (string pairs)", semantic["contested"])])
        lines.append("")
    disagreements = [x for x in rows if x["scorer"] != x["same"]]
    kinds = {k: sum(disagreement_kind(x) == k for x in disagreements) for k in ("too lenient", "too strict")}
    lines += [
        f"#### Every disagreement ({len(disagreements)}: {kinds['too lenient']} "
        f"too lenient, {kinds['too strict']} too strict)",
        "",
        "Each with its kind (too lenient: the scorer says same, the judge different; too strict: the other way), its "
        "stratum, the judge's note, then the mechanism of the scorer that decided the pair.",
        "",
    ]
    for x in sorted(disagreements, key=lambda x: (x["stratum"], x["field"], x["paper_id"], x["pair_id"])):
        lines.append(
            f"- {disagreement_kind(x)}, {x['stratum']}: {x['paper_id']} `{x['field']}` "
            f"{_shown(x['prediction'])} vs gold {_shown(x['gold'])}: judge "
            f"{'same' if x['same'] else 'different'}. Judge: {x.get('note', '')} Scorer: {x['reason']}."
        )
    lines.append("")
    found = {
        "scorer_version": SCORER_VERSION,
        "set": pairs_name,
        "rules_frozen_at": frozen_at,
        "judgments_sha256": digest,
        "judge": JUDGE,
        "overall": o,
        "contested": c,
        "results": r,
        "semantic": semantic,
        "target": {"overall": TARGET_OVERALL, "contested": TARGET_CONTESTED, "met": met},
    }
    if pooled:
        found["pooled"] = {"sets": [pairs_name, *pooled["files"]], **{b: list(v) for b, v in pooled["bands"].items()}}
    if figures is not None:
        figures.update(found)
    return lines


def _semantic_tuning_line(
    report: dict, folder: Path, gold: list[GoldRecord], abstracts: dict[str, str], embedder
) -> list[str]:
    """The semantic tier's agreement on one tuning set, or [] while its cosines are not stored."""
    from paperfields.scoring.semantic import COSINES_FILE, cosine_lines, judged_verdicts, read_cosines
    from paperfields.scoring.validity import agreement_figures

    rows = [dict(r) for r in report["rows"]]
    cosines = read_cosines(folder / COSINES_FILE)
    if judged_verdicts(rows, {g.id: g for g in gold}, abstracts, cosines, embedder):
        return []
    if embedder is not None:
        _store_cosines(folder / COSINES_FILE, cosine_lines(rows))
    det, sem = agreement_figures(rows), agreement_figures(rows, "semantic")
    return [
        f"Semantic tier on it: {_cell_ci(sem)}, kappa {_kappa_cell(sem)} (deterministic: {_cell_ci(det)}, kappa "
        f"{_kappa_cell(det)}).",
        "",
    ]


# What a reader of the held-out figures should know about how the stratified sets were made and kept (issue 38).
DISCLOSURES = [
    "#### Disclosures",
    "",
    "- The stratified sets were judged by AI agent sessions (large language models working as blind judges), "
    "a different session for each set; no person judged them.",
    "- 10 of the 13 example pairs that issue 38 quotes (the kinds of disagreement it asks to fix) are pairs of the "
    "first stratified set, so the issue's text already pointed at part of that set before it was read.",
    "- Some pairs of the first stratified set were printed in the sessions that wrote scorer 3.4, before its rules "
    "were frozen, so that set was not fully unseen when it was read.",
    "- The two AI-agent reference answer files that both draws read (`annotator_agent-zero-shot__imported__test` "
    "and `annotator_agent-few-shot__imported__test`, their sha256 in `gold/scorer_stratified_pairs.draw.json` and "
    "`gold/scorer_stratified2_pairs.draw.json`) were lost with an earlier machine: neither draw can be redrawn "
    "whole, only over the committed runs (tests/test_stratified_pairs.py skips the whole redraw and says why).",
    "- Scorer 3.5's rules were chosen on the first stratified set (read and published), the earlier judged sets "
    "and the dev split; the second set's judgments and judge's notes were not opened before the rules were frozen.",
    "- Scorer 3.6's rules were chosen on the first and second stratified sets (both read and published) and the "
    "earlier judged sets, by an AI agent session working as a helper; it never opened the third set's files (pairs, "
    "judgments, judge's notes or draw), and its rules were frozen at 71d5bad before the third set was read.",
    "- Scorer 3.7's rules were chosen on the first, second and third stratified sets (all read and published) and the "
    "earlier judged sets, by an AI agent session working as a helper; it never opened, listed or searched the fourth "
    "set's files (pairs, judgments, judge's notes or draw), and its rules were frozen at 88c37e0 before the fourth set "
    "was read.",
    "- Scorer 3.8's rules were chosen on the first, second, third and fourth stratified sets (all read and published) "
    "and the earlier judged sets, by an AI agent session working as a helper; it never opened or searched the fifth "
    "set's files (pairs, judgments, judge's notes or draw), and its rules were frozen at 985ffc1 before the fifth set "
    "was read.",
    "- Scorer 3.9's rules were chosen on the first to fifth stratified sets (all read and published) and the earlier "
    "judged sets, by an AI agent session working as a helper; it never opened, listed or searched the sixth set's "
    "files (pairs, judgments, judge's notes or draw)"
    + ", and its rules were frozen at f944ada before the sixth set was read.",
    "- Scorer 3.9 was kept for the seventh stratified set: the sixth set's one disagreement (a result tied to a model "
    "the abstract never names, 'Alpaca' beside 'AlpacaEval 2.0') is a judge split, the second set's judge having "
    "called the same tuple the same; a rule refusing that kind was written and measured on the first to sixth sets by "
    "an AI agent session working as a helper (it fixed the sixth set's pair and broke the second's) and not taken. "
    "That helper never opened, listed or searched the seventh set's files (pairs, judgments, judge's notes or draw)"
    + ", and the rules were frozen at e330039 before the seventh set was drawn.",
    "- Scorer 3.10's rules were chosen on the first to seventh stratified sets (all read and published) and the "
    "earlier judged sets, by an AI agent session working as a helper; the eighth set did not exist while it worked "
    "and it never opened, listed or searched its files (pairs, judgments, judge's notes or draw)"
    + (
        f", and its rules were frozen at {RULES_FROZEN_AT} before the eighth set was drawn." if RULES_FROZEN_AT else "."
    ),
    "- Scorer 3.10 was kept for the ninth stratified set: the eighth set had no disagreement (6 of 6 result tuples), "
    "so no rule was written after it was read. The ninth set was drawn at the same freeze after the eighth was read; "
    "the published runs had no candidate pair left after the exclusions, so all its pairs come from the five "
    "self-consistency sample answer files (`submissions/agent-self-consistency/answers_sample1.jsonl` to "
    "`answers_sample5.jsonl`, answered after the freeze by five separate AI agent sessions), imported by `paperfields "
    "score --predictions` and not on the board themselves (the board holds their majority vote). The pool of pairs "
    "the scorer can be checked on is now what new runs bring: every string pair of today's runs has been judged.",
    "",
]


# Every published run's headline (and results F1, true positives) under scorer 3.9 and gold 1.6, before the re-score
# with scorer 3.10 (gold unchanged), with why it moved: each reason counts the items a 3.10 rule decides otherwise.
RESCORED_FROM = ("3.9", "1.6")
PREVIOUS_HEADLINES: dict[str, tuple[float, float, int, str]] = {
    "agent-confidence__submitted__test": (0.9008, 0.9172, 72, "no change"),
    "agent-evidence__submitted__test": (0.8855, 0.9542, 73, "no change"),
    "agent-few-shot__submitted__test": (0.8969, 0.9412, 72, "no change"),
    "agent-reasoning-first__submitted__test": (0.8814, 0.9125, 73, "no change"),
    "agent-zero-shot__submitted__test": (0.8684, 0.9103, 71, "no change"),
    "annotator_second-blind__imported__test": (0.9821, 1.0, 34, "no change"),
    "local_gemma3-270m__confidence__test": (0.1426, 0.0, 0, "no change"),
    "local_gemma3-270m__evidence__test": (0.1269, 0.0, 0, "no change"),
    "local_gemma3-270m__few_shot__test": (0.1705, 0.0074, 1, "no change"),
    "local_gemma3-270m__reasoning_first__test": (0.1364, 0.0, 0, "no change"),
    "local_gemma3-270m__zero_shot__test": (0.1574, 0.0038, 1, "no change"),
    "local_qwen2.5-coder-0.5b__confidence__test": (0.3661, 0.0533, 4, "no change"),
    "local_qwen2.5-coder-0.5b__evidence__test": (0.2602, 0.0593, 4, "no change"),
    "local_qwen2.5-coder-0.5b__few_shot__test": (0.3334, 0.0703, 11, "no change"),
    "local_qwen2.5-coder-0.5b__reasoning_first__test": (0.3377, 0.0513, 4, "no change"),
    "local_qwen2.5-coder-0.5b__zero_shot__test": (0.3638, 0.0288, 2, "no change"),
    "local_qwen2.5-coder-1.5b__confidence__test": (
        0.4351,
        0.0857,
        15,
        "results -1 (refused: metric 'auc' for gold's 8.27% average gain whose metric, 'performance', names no "
        "quantity: a measure the abstract never writes)",
    ),
    "local_qwen2.5-coder-1.5b__evidence__test": (0.417, 0.0719, 6, "no change"),
    "local_qwen2.5-coder-1.5b__few_shot__test": (0.4548, 0.1929, 27, "no change"),
    "local_qwen2.5-coder-1.5b__zero_shot__test": (0.4635, 0.1062, 18, "no change"),
    "rules_baseline__zero_shot__test": (0.5099, 0.6935, 43, "no change"),
    "rules_empty__zero_shot__test": (0.0292, 0.0, 0, "no change: it predicts nothing"),
}


def _rescored_lines(gold_dir: Path) -> list[str]:
    """Old (:data:`RESCORED_FROM`: scorer and gold) and new headline of every published run, from its ``scores.json``,
    with the reason it moved (:data:`PREVIOUS_HEADLINES`); [] when the runs are not re-scored yet."""
    runs_dir = gold_dir.parent / "results" / "runs"
    rows = []
    for run, (headline, results, tp, why) in PREVIOUS_HEADLINES.items():
        path = runs_dir / run / "scores.json"
        if not path.is_file():
            continue
        now = json.loads(path.read_text(encoding="utf-8"))
        if now.get("scorer_version") != SCORER_VERSION:
            return []
        field = now["fields"]["results"]
        rows.append(
            f"| {run} | {headline:.4f} | {now['headline']:.4f} | {now['headline'] - headline:+.4f} | {results:.4f} "
            f"({tp}) | {field['score']:.4f} ({field['tp']}) | {why} |"
        )
    if not rows:
        return []
    old_scorer, old_gold = RESCORED_FROM
    return [
        f"### Published headlines, scorer {old_scorer} and gold {old_gold} to scorer {SCORER_VERSION}",
        "",
        "Every published run re-scored by `paperfields score --semantic` (no model called); each headline moves only "
        "by the rule changes and gold alternates named beside it (results F1, with its true positives in brackets).",
        "",
        f"| run | headline {old_scorer} | headline {SCORER_VERSION} | change | results {old_scorer} (tp) | results "
        f"{SCORER_VERSION} (tp) | why |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]


def _pooled_reads(held_out: HeldOutSet, figures: dict) -> Optional[dict]:
    """Today's held-out read pooled with the earlier reads of the same scorer under the same freeze (a set read once,
    with no rule changed after it): ``{"sets": titles, "files": pairs files, "bands": {band: (agreeing, pairs)}}``
    over the bands overall, contested and results, or None when there is no such earlier read."""
    earlier = [
        t
        for t in TUNING_STRATIFIED
        if _kept(t[1]) and t[0] is not held_out and t[0].rules_frozen_at == held_out.rules_frozen_at
    ]
    if not earlier:
        return None
    bands = {}
    for band in ("overall", "contested", "results"):
        k, n = figures[band]["agree"], figures[band]["pairs"]
        for t in earlier:
            k, n = k + t[1][band][0], n + t[1][band][1]
        bands[band] = (k, n)
    return {"sets": [t[2] for t in earlier], "files": [t[0].pairs for t in earlier], "bands": bands}


def _band_cells(bands: dict[str, tuple[int, int]]) -> str:
    """``{band: (agreeing, pairs)}`` as one clause per band, each share with its 95% Wilson interval, joined by "; "; a
    band with no pair (none was left to draw) says "–": no figure, not a perfect one."""
    cells = []
    for band, (k, n) in bands.items():
        if not n:
            cells.append(f"{band} – (0 of 0)")
            continue
        low, high = _proportion_ci(k, n)
        cells.append(f"{band} {k / n:.3f} [{low:.3f}, {high:.3f}] ({k} of {n})")
    return "; ".join(cells)


def _off_board(draw, folder: Path) -> str:
    """The runs a draw read that are not published runs (not in results/runs beside ``folder``), said in the text."""
    if draw is None:
        return ""
    published = folder.parent / "results" / "runs"
    off = [run for run in draw.runs if not (published / run).is_dir()]
    if not off:
        return ""
    return f" ({len(off)} of the {len(draw.runs)} runs it read are not on the board: {', '.join(off)})"


def _one_sided_judge(rows: list[dict]) -> list[str]:
    """A sentence when the judge gave every pair the same verdict: chance agreement is then the scorer's own share of
    that verdict, so Cohen's kappa is 0 (or undefined) however often the two agree (Feinstein & Cicchetti 1990, the
    first paradox of kappa); the agreement share is the figure to read."""
    verdicts = {x["same"] for x in rows}
    if len(verdicts) != 1:
        return []
    said = "the same" if verdicts.pop() else "different"
    return [
        f"The judge called every pair {said}, so chance agreement is the scorer's own share of that verdict and "
        "Cohen's kappa is 0 (or undefined where the scorer agrees everywhere) however often the two agree "
        "(Feinstein & Cicchetti 1990): read the agreement share here, not kappa.",
        "",
    ]


def _kept(figure: dict) -> bool:
    """Whether a read set was read by today's scorer: its read is then a held-out figure of today's rules too."""
    return figure["version"] == SCORER_VERSION


def _after_read(figure: dict) -> str:
    """What became of a read set, for its history line."""
    if _kept(figure):
        return (
            f"Published; no rule was changed after it was read (scorer {SCORER_VERSION} was kept), so that read is a "
            f"held-out figure of scorer {SCORER_VERSION} too, pooled with today's set above; it is excluded from "
            "later draws and shown with the tuning sets"
        )
    return (
        f"Published, its disagreements were then weighed in choosing scorer {SCORER_VERSION}'s rules, so it is a "
        "tuning set now"
    )


def _tuning_stratified_lines(
    folder: Path, gold: list[GoldRecord], abstracts: dict[str, str], held: HeldOutSet, title: str, figure: dict
) -> list[str]:
    """A stratified set read before today's rules were chosen, as a tuning set: today's scorer at the headline's level
    (overall, contested band, results, per field) and its remaining disagreements, each with its kind."""
    from paperfields.scoring.validity import disagreement_kind, load_stratified_judgments, stratified_report

    judged = load_stratified_judgments(folder / held.judgments, folder / held.pairs, {g.id for g in gold})
    report = stratified_report(judged, gold, abstracts)
    kept = _kept(figure)
    lines = [
        f"`gold/{held.judgments}` ({title}; "
        + (
            f"read once by scorer {SCORER_VERSION}, which no disagreement of it changed"
            if kept
            else f"scorer {SCORER_VERSION}'s rules were chosen weighing its disagreements"
        )
        + "), at the headline's level:",
        "",
    ]
    lines += _figure_rows(
        [
            ("all", report["overall"]),
            ("contested band (string pairs)", report["contested"]),
            ("results", report["results"]),
            *report["fields"].items(),
        ]
    )
    left = [x for x in report["rows"] if x["scorer"] != x["same"]]
    lines += ["", f"Remaining disagreements ({len(left)}), each with its kind:", ""]
    for x in sorted(left, key=lambda x: (x["stratum"], x["field"], x["paper_id"], x["pair_id"])):
        lines.append(
            f"- {disagreement_kind(x)}, {x['stratum']}: {x['paper_id']} `{x['field']}` {_shown(x['prediction'])} vs "
            f"gold {_shown(x['gold'])}. Judge: {x.get('note', '')} Scorer: {x['reason']}."
        )
    return lines + [""]


def _tuning_stratified(folder: Path) -> list[tuple[HeldOutSet, dict, str, int, str, str]]:
    """The sets of :data:`TUNING_STRATIFIED` that are not today's held-out set and whose files are in ``folder``."""
    return [
        t
        for t in TUNING_STRATIFIED
        if HELD_OUT is not t[0] and (folder / t[0].judgments).is_file() and (folder / t[0].pairs).is_file()
    ]


def _validity_section(
    gold_path: Path,
    gold: list[GoldRecord],
    embedder=None,
    figures: Optional[dict] = None,
    held_out: Optional[HeldOutSet] = None,
) -> list[str]:
    """Scorer validity: the held-out stratified set first (the figure to quote), the earlier held-out
    figures as history, then the tuning sets, each with the semantic tier's agreement beside it."""
    from paperfields.core.corpus import load_corpus
    from paperfields.scoring.validity import (
        EARLIER_HELDOUT_SET,
        FRESH_SET,
        TUNING_SETS,
        load_judgments,
        validity_report,
    )

    folder = gold_path.parent
    corpus = folder / "corpus.jsonl"  # the verdict reads the abstract as the scorer does
    abstracts = {p.id: p.text for p in load_corpus(corpus)} if corpus.is_file() else {}
    ids = {g.id for g in gold}
    lines = ["## Scorer validity", ""]
    stratified = _stratified_section(folder, gold, abstracts, embedder, figures, held_out)
    if not stratified and _tuning_stratified(folder):  # the next held-out set is not judged yet (its files are absent)
        stratified = [
            "### Held-out stratified pairs",
            "",
            f"The held-out set of scorer {SCORER_VERSION}, `gold/{(held_out or HELD_OUT).judgments}`, is not read yet: "
            "it is drawn and judged blind before it is read, and its pairs and judgments are not both in gold/ yet, so "
            "the figures below are on tuning pairs only.",
            "",
        ]
    if stratified:
        stratified += DISCLOSURES + _rescored_lines(folder)
    lines += stratified or [
        "No held-out judged pairs (`gold/scorer_stratified_judgments.jsonl`)"
        ": the figures below are on tuning pairs only.",
        "",
    ]
    history = []
    if (folder / FRESH_SET).is_file():
        k, n, version = FRESH_FIGURE
        low, high = _proportion_ci(k, n)
        history.append(
            f"`gold/{FRESH_SET}`: {n} (prediction, nearest gold) pairs judged blind before scorer {version}'s rules "
            f"were written; scorer {version} agreed on {k} of {n}: {k / n:.3f} [{low:.3f}, {high:.3f}], the held-out "
            "figure quoted until the stratified set above. Published, its disagreements were then weighed in "
            f"choosing scorer {SCORER_VERSION}'s rules, so it is a tuning set now."
        )
    if (folder / EARLIER_HELDOUT_SET).is_file():
        k, n, version = EARLIER_HELDOUT_FIGURE
        low, high = _proportion_ci(k, n)
        history.append(
            f"`gold/{EARLIER_HELDOUT_SET}`: {n} pairs judged blind after the scorer {version} rules "
            f"were frozen; scorer {version} agreed on {k} of {n}: {k / n:.3f} "
            f"[{low:.3f}, {high:.3f}]; a tuning set since scorer 3.2."
        )
    for number, (held, figure, title, seed, drawn_with, level) in enumerate(_tuning_stratified(folder)):
        history.insert(
            number,
            f"`gold/{held.judgments}`: {title} ({figure['overall'][1]} pairs, drawn with seed {seed} at scorer "
            f"{drawn_with}), read once with scorer {figure['version']} (rules frozen at {held.rules_frozen_at}): "
            + _band_cells({band: figure[band] for band in ("overall", "contested", "results")})
            + f", its result verdict at the `{level}` level. "
            + _after_read(figure)
            + " (its figure with today's scorer is under the tuning pairs below).",
        )
    if history:
        lines += ["### Earlier held-out pairs (history, now tuning material)", ""]
        lines += [line for h in history for line in (h, "")]
    lines += [
        "### Tuning pairs (not a held-out figure)",
        "",
        "The matching rules and the semantic tier's threshold were chosen on these judged pairs, so agreement on them "
        "overstates the scorer's validity.",
        "",
    ]
    for held, figure, title, *_ in _tuning_stratified(folder):
        lines += _tuning_stratified_lines(folder, gold, abstracts, held, title, figure)
    for name in TUNING_SETS:
        path = folder / name
        if not path.is_file():
            continue
        report = validity_report(load_judgments(path, ids), gold, abstracts)
        k, n = report["pairs"] - len(report["disagreements"]), report["pairs"]
        lines += [f"`gold/{name}`: {k / n:.3f} ({k} of {n}).", ""]
        lines += _semantic_tuning_line(report, folder, gold, abstracts, embedder)
        lines += _judged_rows(report)
        if report["disagreements"]:
            lines += [
                "",
                "Remaining disagreements: the judge's note, then why the scorer keeps its rule (each is a test):",
                "",
            ] + _disagreement_lines(report)
        lines.append("")
    return lines


def agreement_files(
    gold_dir: Path, current_path: Optional[Path] = None, embedder=None, held_out: Optional[HeldOutSet] = None
) -> dict[str, str]:
    """What ``paperfields gold agreement`` writes, by file name in ``gold_dir``: ``AGREEMENT.md``
    (:func:`agreement_markdown`) and, once the held-out set is read, ``validity.json`` (its figures, for the
    board and the README). Raises what :func:`agreement_markdown` raises."""
    figures: dict = {}
    text = agreement_markdown(gold_dir, current_path, embedder=embedder, figures=figures, held_out=held_out)
    out = {"AGREEMENT.md": text}
    if figures:
        out[VALIDITY_FILE] = json.dumps(figures, indent=2) + "\n"
    return out


def agreement_markdown(
    gold_dir: Path,
    current_path: Optional[Path] = None,
    gold_path: Optional[Path] = None,
    embedder=None,
    figures: Optional[dict] = None,
    held_out: Optional[HeldOutSet] = None,
) -> str:
    """``gold/AGREEMENT.md``: the current blind sample (when its labeling exists), the first blind
    sample, the relabeled copies as labeled non-agreement figures, and scorer validity.

    ``current_path`` overrides the current sample's labeling (default ``gold_dir/second_annotation_2.jsonl``);
    ``gold_path`` the gold file (default ``gold_dir/gold.jsonl``). Raises GoldError naming the file: a bad
    gold, labeling or judgments line, an empty labeling, a labeled paper with no first record, or a
    current sample that reuses first-sample papers or non-test papers.
    """
    gold_path = gold_path or gold_dir / "gold.jsonl"
    gold = load_gold(gold_path)
    lines = [
        "# Gold agreement",
        "",
        "Generated by `paperfields gold agreement`; do not edit by hand.",
        "",
        "Agreement is the project's own scorer with the first labeling as gold and a blind second labeling as the",
        "prediction (pairwise F1; Hripcsak & Rothschild 2005). Per field: pooled (micro) F1 over all items, and the",
        "mean per-paper F1 over the papers where the field is defined (a paper both labelings leave empty is left",
        "out); 95% percentile bootstrap intervals over papers. Overall = macro over the headline fields.",
        "",
    ]
    current = current_path or gold_dir / CURRENT_SAMPLE.second
    if current.is_file():
        first_ids = (
            {g.id for g in load_gold(gold_dir / FIRST_SAMPLE.second)}
            if (gold_dir / FIRST_SAMPLE.second).is_file()
            else set()
        )
        check_current_sample(load_gold(current), gold, first_ids, current)
        lines += sample_section(CURRENT_SAMPLE, gold_dir, gold, current)
    else:
        lines += [
            f"## {CURRENT_SAMPLE.title}",
            "",
            f"Not yet available: `{current.name}` does not exist. {CURRENT_SAMPLE.provenance}",
            "",
        ]
    if (gold_dir / FIRST_SAMPLE.second).is_file():
        lines += sample_section(FIRST_SAMPLE, gold_dir, gold)
    lines += _relabeled_section(gold_dir, gold)
    lines += _validity_section(gold_path, gold, embedder, figures, held_out)
    return "\n".join(lines) + "\n"
