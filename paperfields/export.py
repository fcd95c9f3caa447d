"""Release the corpus and gold (and optionally committed predictions) as a Hugging Face dataset.

``export_dataset`` writes a folder in Hub layout: ``gold/{dev,test}.parquet`` (config ``gold``),
``predictions/<split>.parquet`` (config ``predictions``, one split per published run, named by
:func:`split_names`), ``LICENSE.md`` (the terms: whose the abstracts are, and the project's license for
everything else) and a dataset card ``README.md`` generated from the project's own data.
``push_dataset`` uploads it with ``huggingface_hub``; the token comes from the environment or the
standard login and is never written.

The Parquet files hold plain Arrow types and no ``datasets`` feature metadata: ``datasets`` >= 4 writes
its list type as ``List``, which ``datasets`` 3.x cannot read (``Feature type 'List' not found``),
while plain Arrow lists load in both.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from paperfields.core.escape import escape_markdown, markdown_code, table_cell
from paperfields.core.fields import RecordField, record_fields, unwrap
from paperfields.core.gold import GOLD_VERSION, gold_fingerprint, load_gold
from paperfields.core.plural import plural
from paperfields.core.schema import SCHEMA_VERSION, PaperRecord, Result
from paperfields.scoring.score import SCORER_VERSION

if TYPE_CHECKING:
    from paperfields.report import RunFacts

# No single license covers the release: the abstracts are their authors' (no license can be granted
# for them here) and everything else is the project's, under its license (see LICENSE.md).
LICENSE = "other"
LICENSE_NAME = "paperfields-abstracts-by-their-authors-annotations-apache-2.0"
PROJECT_LICENSE = "Apache-2.0"


def features():
    """Explicit ``datasets`` Features of a gold row (nested results as a list of structs)."""
    from datasets import Features, Sequence, Value

    string = Value("string")

    def value(item: Any) -> Any:  # a scalar's Arrow type: numbers, booleans, and strings for text and enum labels
        return Value("float64") if item is float else Value("bool") if item is bool else string

    def column(field: RecordField) -> Any:
        if field.is_record_list:
            return [{name: value(unwrap(info.annotation)[2]) for name, info in field.item.model_fields.items()}]
        return Sequence(value(field.item)) if field.is_list else value(field.item)

    return Features(
        {
            "id": string,
            "split": string,
            "source": string,
            "position": Value("int32"),
            "text": string,
            **{f.name: column(f) for f in record_fields(PaperRecord)},
            "alternates": [{"canonical": string, "forms": Sequence(string)}],
            "normalized": Sequence(string),
        }
    )


def prediction_features():
    """``datasets`` Features of a predictions row: paper id, abstract, run metadata, ``valid``,
    ``failure``, then every record field (null on a failed row)."""
    from datasets import Features, Value

    string = Value("string")
    record = dict(features())
    for key in ("id", "split", "source", "position", "text", "alternates", "normalized"):
        record.pop(key)
    return Features(
        {
            "id": string,
            "text": string,
            "run_id": string,
            "backend": string,
            "strategy": string,
            "valid": Value("bool"),
            "failure": string,
            **record,
        }
    )


def gold_rows(gold_path: Path, corpus_path: Path) -> dict[str, list[dict[str, Any]]]:
    """Gold rows per split, in corpus order."""
    from paperfields.core.corpus import load_corpus

    papers = {p.id: p for p in load_corpus(corpus_path)}
    rows: dict[str, list[dict[str, Any]]] = {"dev": [], "test": []}
    for g in load_gold(gold_path):
        p = papers[g.id]
        rows[g.split].append(
            {
                "id": g.id,
                "split": g.split,
                "source": p.source,
                "position": p.position,
                "text": p.text,
                **g.record.model_dump(mode="json"),
                "alternates": [{"canonical": k, "forms": v} for k, v in sorted(g.alternates.items())],
                "normalized": g.normalized,
            }
        )
    return rows


def prediction_rows(run_dir: Path, texts: dict[str, str]) -> list[dict[str, Any]]:
    """One row per paper of a run, by paper id: the abstract (``texts``: paper id -> text), run metadata,
    and the predicted record, or, for a paper the model failed, ``valid`` False, the ``failure``
    class and every record field None (never an empty record, which would read as a real answer).
    Raises RunError naming the run and paper when a paper is not in ``texts``."""
    from paperfields.core.runlog import RunError, load_manifest, read_predictions

    manifest = load_manifest(run_dir)
    nothing = dict.fromkeys(PaperRecord.model_fields)
    rows = []
    for line in sorted(read_predictions(run_dir / "predictions.jsonl"), key=lambda l: l.paper_id):
        if line.paper_id not in texts:
            raise RunError(f"{run_dir / 'predictions.jsonl'}: paper {line.paper_id} is not in the exported corpus")
        rows.append(
            {
                "id": line.paper_id,
                "text": texts[line.paper_id],
                "run_id": manifest.run_id,
                "backend": manifest.config.backend,
                "strategy": manifest.config.strategy,
                "valid": line.record is not None,
                "failure": line.failure.value if line.failure else None,
                **(line.record or nothing),
            }
        )
    return rows


def split_name(run_id: str) -> str:
    """A Hub split name for a run id (letters, digits and underscores); two ids may give the same
    name: :func:`split_names` makes them unique."""
    return re.sub(r"[^A-Za-z0-9_]", "_", run_id)


def split_names(run_ids: list[str]) -> dict[str, str]:
    """Run id -> a unique Hub split name. Ids whose :func:`split_name` collides (``openai_qwen2.5-7b...``
    and ``openai_qwen2.5_7b...``) all get ``__`` plus 8 hex digits of their id's sha256 appended; an id
    that collides with none keeps its plain name. The same ids give the same names in any order.
    Raises ValueError in the (astronomically unlikely) case that the suffixed names still collide."""
    by_name: dict[str, list[str]] = defaultdict(list)
    for run_id in run_ids:
        by_name[split_name(run_id)].append(run_id)
    names = {}
    for name, ids in by_name.items():
        for run_id in ids:
            names[run_id] = name if len(ids) == 1 else f"{name}__{hashlib.sha256(run_id.encode()).hexdigest()[:8]}"
    if len(set(names.values())) != len(names):
        raise ValueError(f"run ids {sorted(run_ids)} do not give unique split names: rename a run folder")
    return names


def _write_parquet(rows: list[dict[str, Any]], features, path: Path) -> None:
    """Rows as Parquet, typed by ``features`` but without the ``datasets`` schema metadata (see module doc)."""
    import pyarrow.parquet as pq
    from datasets import Dataset

    path.parent.mkdir(parents=True, exist_ok=True)
    table = Dataset.from_list(rows, features=features).data.table
    pq.write_table(table.replace_schema_metadata(None), str(path))


def export_dataset(
    out_dir: Path,
    gold_path: Path,
    corpus_path: Path,
    runs_dir: Optional[Path],
    card_extras: dict[str, str],
    include_partial: frozenset[str] | set[str] = frozenset(),
) -> list[Path]:
    """Write the dataset folder; returns the files written. Same inputs give the same bytes. Beside the
    card, ``eval.yaml`` registers the folder as a Hub benchmark (:func:`paperfields.hub.eval_yaml`).

    Into a folder holding an earlier export, ``predictions/*.parquet`` files this export does not
    write (``runs_dir`` None, or a run since removed) are deleted, and an emptied ``predictions/``
    with them: the card would not list them, yet ``push`` would upload them. Nothing else is deleted.
    Raises RunError (before writing any prediction) when a run's scores are stale (its predictions
    changed since scoring, or it was scored against another version of ``gold_path``), or when a run
    is partial (``--limit``) or unfinished and its id is not in ``include_partial``.
    """
    from paperfields.core.corpus import load_corpus
    from paperfields.hub import EVAL_YAML, dump_yaml, eval_yaml

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    splits = gold_rows(gold_path, corpus_path)
    for split, rows in splits.items():
        path = out_dir / "gold" / f"{split}.parquet"
        _write_parquet(rows, features(), path)
        written.append(path)
    benchmark = out_dir / EVAL_YAML  # the Hub's benchmark registration, beside the card (paperfields/hub.py)
    benchmark.write_text(dump_yaml(eval_yaml(len(splits["test"]))), encoding="utf-8")
    written.append(benchmark)
    status: dict[str, dict[str, Any]] = {}
    facts: list[RunFacts] = []
    if runs_dir is not None:
        from paperfields.core.runlog import RunError, load_manifest
        from paperfields.report import run_facts
        from paperfields.scoring.board import board_order
        from paperfields.scoring.runs import load_scored_run

        run_dirs = sorted(p.parent for p in runs_dir.glob("*/scores.json"))
        names = split_names([run_dir.name for run_dir in run_dirs])
        for run_dir in run_dirs:
            scores, _ = load_scored_run(
                run_dir, gold_path
            )  # published predictions must be the ones the card's scores describe
            if not scores.comparable and run_dir.name not in include_partial:
                raise RunError(
                    f"{run_dir}: a {'unfinished' if scores.unfinished else 'partial'} run "
                    f"({scores.papers_done}/{scores.papers} papers done, {scores.papers} of "
                    f"{scores.papers_in_split} in the split) is not exported unless named on purpose: "
                    f"--include-partial {run_dir.name}, or finish it first"
                )
            status[names[run_dir.name]] = {
                "run_id": run_dir.name,
                "complete": scores.comparable,
                "reference": scores.reference,
                "papers": scores.papers,
                "papers_done": scores.papers_done,
                "papers_total": scores.papers_in_split,
            }
            facts.append(run_facts(load_manifest(run_dir), scores))
        by_id = {f.run_id: f for f in facts}
        facts = [by_id[s.run_id] for s in board_order([f.scores for f in facts])]
        texts = {p.id: p.text for p in load_corpus(corpus_path)}
        for run_dir in run_dirs:
            path = out_dir / "predictions" / f"{names[run_dir.name]}.parquet"
            _write_parquet(prediction_rows(run_dir, texts), prediction_features(), path)
            written.append(path)
    listing = out_dir / "predictions" / "runs.json"
    if status:
        listing.write_text(json.dumps(status, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        written.append(listing)
    elif listing.exists():
        listing.unlink()
    for stale in sorted(set((out_dir / "predictions").glob("*.parquet")) - set(written)):
        stale.unlink()
    if (out_dir / "predictions").is_dir() and not any((out_dir / "predictions").iterdir()):
        (out_dir / "predictions").rmdir()
    terms = out_dir / "LICENSE.md"
    terms.write_text(license_text(), encoding="utf-8")
    written.append(terms)
    card = out_dir / "README.md"
    card.write_text(dataset_card(gold_path, corpus_path, status, card_extras, facts), encoding="utf-8")
    written.append(card)
    return written


def _table(head: list[str], rows: list[list[str]]) -> str:
    """A Markdown table: header row, separator row, one row per item (``|`` in a cell escaped)."""

    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(table_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def field_table() -> str:
    """Markdown table of the schema fields and their descriptions (from the Pydantic model)."""
    rows = [[f"`{name}`", field.description or ""] for name, field in PaperRecord.model_fields.items()]
    rows += [[f"`results[].{name}`", field.description or ""] for name, field in Result.model_fields.items()]
    return _table(["field", "description"], rows)


def prediction_column_table() -> str:
    """Markdown table of the ``predictions`` config's columns."""
    from paperfields.core.runlog import FailureClass

    classes = ", ".join(f"`{c.value}`" for c in FailureClass)
    return _table(
        ["column", "meaning"],
        [
            ["`id`", "paper id; joins with the `gold` config's `id`"],
            ["`text`", "the abstract the model was given (the same text as in `gold`)"],
            ["`run_id`", "the run's id; `predictions/runs.json` maps each split name to its run id"],
            ["`backend`", "`provider/model` of the run (`rules/...`: model-free references)"],
            ["`strategy`", "the prompting strategy (zero_shot, few_shot, ...)"],
            ["`valid`", "true when the run produced a schema-valid record for the paper"],
            [
                "`failure`",
                f"null on a valid row; else why there is no record: {classes}. A failed paper scores 0 on every field",
            ],
            [
                "record fields",
                "as in `gold` (see Fields). All null on a failed row; on a valid row an empty list or a null is "
                "the model's answer (nothing found)",
            ],
        ],
    )


def license_text() -> str:
    """``LICENSE.md`` of the release: where the abstracts come from, whose they are, and the project's
    license for everything else."""
    return f"""# Terms of the PaperFields dataset

## The abstracts (`text`)

{ABSTRACTS_SOURCE}

Their copyright belongs to their authors (or to whomever the authors assigned it). This release grants
no license for them and claims none: they are included unchanged so that every label can be checked
against the text it was read from, for research on information extraction. Any other use is subject to
the terms under which each paper was published. An author who wants an abstract removed can open a
discussion on the dataset's page.

## Everything else

The gold labels (`gold` config: every field except `text`, with `alternates` and `normalized`), the
predictions of the published runs (`predictions` config, except `text`) and this documentation are the
PaperFields project's work, released under the project's license, {PROJECT_LICENSE}
(https://www.apache.org/licenses/LICENSE-2.0), the same as its code.
"""


ABSTRACTS_SOURCE = (
    "The abstracts are abstracts of ICML 2026 papers, written and published by the papers' authors, as the four "
    'plain-text lists the project took them from state (each headed "ICML 2026 Papers" or "ICML 2026 论文列表", '
    "a list of ICML 2026 papers; the file names are in the `source` column). Each text is verbatim from its list "
    "(every one appears there character for character); only the lists' header lines were left out. The lists give "
    "no titles, authors or links, so this release cannot name the paper behind an abstract, nor the terms under "
    "which each paper was published."
)


def run_cost_section(facts: Sequence[RunFacts]) -> str:
    """The card's per-run cost per correct item and contamination status: one Markdown table of
    :data:`paperfields.report.RUN_COLUMNS` per board section (contenders, references, partial or
    unfinished runs), runs in ``facts`` order (scored runs only), then what the columns mean."""
    from paperfields.report import run_table, run_table_text
    from paperfields.scoring.board import section_of

    titles = {
        "contender": "Contenders",
        "reference": "References (not ranked): model-free floors and a blind second "
        "labeling by an AI agent session (not a human ceiling)",
        "partial": "Partial and unfinished runs (not ranked)",
    }
    parts = []
    for key, title in titles.items():
        chosen = [f for f in facts if f.scores is not None and section_of(f.scores) == key]
        if chosen:
            head, rows = run_table(chosen)
            # a run id, a model cutoff and its source come from runs and submissions: text, escaped
            cells = [[markdown_code(row[0])] + [escape_markdown(c) for c in row[1:]] for row in rows]
            parts += [f"### {title}", _table(head, cells)]
    if not parts:
        return "No runs in this export."
    return "\n\n".join(parts + [run_table_text()])


def dataset_card(
    gold_path: Path,
    corpus_path: Path,
    runs: dict[str, dict[str, Any]],
    extras: dict[str, str],
    facts: Sequence[RunFacts] = (),
) -> str:
    """The dataset card: YAML front matter built with ``huggingface_hub.DatasetCardData`` and a body
    generated from the schema, the gold, the agreement file and the leaderboard. ``runs`` maps each
    predictions split name to its entry of ``predictions/runs.json`` (``run_id``, ``complete``, ``papers``,
    ...); ``facts`` are the exported runs' cost and contamination (:func:`run_cost_section`). Every
    table has a header and a separator row and stands between blank lines."""
    from huggingface_hub import DatasetCard, DatasetCardData

    rows = gold_rows(gold_path, corpus_path)
    configs = [
        {
            "config_name": "gold",
            "data_files": [{"split": s, "path": f"gold/{s}.parquet"} for s in ("dev", "test")],
            "default": True,
        }
    ]
    if runs:
        configs.append(
            {
                "config_name": "predictions",
                "data_files": [{"split": r, "path": f"predictions/{r}.parquet"} for r in sorted(runs)],
            }
        )
    data = DatasetCardData(
        license=LICENSE,
        license_name=LICENSE_NAME,
        license_link="LICENSE.md",
        language=["en"],
        task_categories=["text-generation"],
        size_categories=["n<1K"],
        pretty_name="PaperFields: structured extraction from ICML 2026 abstracts",
        configs=configs,
        tags=["information-extraction", "structured-output", "benchmark", "scientific-papers"],
    )
    versions = f"schema {SCHEMA_VERSION}, gold {GOLD_VERSION} ({gold_fingerprint(gold_path)}), scorer {SCORER_VERSION}"
    from paperfields.hub import task_ids

    benchmark_tasks = len(task_ids())
    if runs:
        split_rows = [
            [
                f"`{name}`",
                markdown_code(e["run_id"]),
                "yes" if e["complete"] else "no (partial or unfinished)",
                f"{e['papers_done']}/{e['papers']}",
            ]
            for name, e in sorted(runs.items())
        ]
        predictions = (
            "One split per published run. A split name is the run id with every character other than a letter, "
            "digit or underscore replaced by `_`; run ids that would give the same name get 8 hex digits of the "
            "sha256 of their id appended.\n\n"
            + _table(["split", "run id", "complete", "papers done"], split_rows)
            + "\n\nColumns:\n\n"
            + prediction_column_table()
        )
    else:
        predictions = "No predictions in this export."
    body = f"""
# PaperFields

A benchmark for turning a machine-learning paper abstract into a structured record. {sum(len(r) for r in rows.values())}
ICML 2026 abstracts ({len(rows["dev"])} dev, {len(rows["test"])} test), each labeled by reading the abstract.

Versions: {versions}.

## Configs

```python
from datasets import load_dataset
gold = load_dataset("path/or/repo", "gold")
predictions = load_dataset("path/or/repo", "predictions")
```

The files are plain Parquet (Arrow types, no `datasets` feature metadata), so `datasets` 3.x and 4 or later
load them alike.

### `gold`

One row per abstract: `id`, `split`, `source` (the list the abstract came from), `position` (its place in
that list), the abstract `text`, every schema field, `alternates` (other accepted surface forms of a gold
string) and `normalized` (gold strings not written verbatim in the abstract).

### `predictions`

{predictions}

## Benchmark

`eval.yaml` registers this dataset as a Hub benchmark: {benchmark_tasks} tasks on the `test` split of the `gold`
config, `headline` first, then each field's score; higher is better in every one. A model repository reports a run's
scores on them in `.eval_results/`, written by `paperfields hub-result RUN --dataset <this dataset's id>`.

## Fields

{field_table()}

## Source of the abstracts and terms of use

{ABSTRACTS_SOURCE}

The abstracts' copyright belongs to their authors; this release grants no license for them and claims
none (they are here so that each label can be checked against its text). The labels, the predictions and
this card are the PaperFields project's work under its license, {PROJECT_LICENSE}. Hence the metadata
license `other`: see `LICENSE.md` for the terms.

## How the gold was made

{extras.get("guidelines", "")}

{extras.get("agreement", "")}

## Leaderboard (test split)

{extras.get("leaderboard", "") or "(no runs yet)"}

## What models get wrong

{extras.get("difficulty", "") or "(no published runs yet)"}

## Cost per correct item and contamination status, per run

{run_cost_section(facts)}

## Citation

```bibtex
@misc{{paperfields2026,
  title  = {{PaperFields: a benchmark for structured extraction from machine-learning paper abstracts}},
  author = {{The PaperFields team}},
  year   = {{2026}},
  note   = {{{versions}}}
}}
```
"""
    body = re.sub(r"\n{3,}", "\n\n", body)
    card = DatasetCard(
        "---\n" + data.to_yaml() + "\n---\n" + body
    )  # parses the front matter back: a card that validates
    return str(card)


def markdown_blocks(text: str) -> list[tuple[str, int, list[tuple[str, str]]]]:
    """A Markdown document as sections: (heading text, heading level, blocks), where blocks are the
    section's top-level blocks in order as (kind, source text), kind one of ``paragraph``, ``table``,
    ``bullet_list``, ``ordered_list``, ``fence``, ``blockquote``, ... (markdown-it's token names). Text
    before the first heading is a section ("", 0, ...). Parsed with markdown-it (CommonMark plus GFM tables)."""
    from markdown_it import MarkdownIt

    lines = text.splitlines()
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    sections: list[tuple[str, int, list[tuple[str, str]]]] = [("", 0, [])]
    for i, token in enumerate(tokens):
        if token.level != 0 or token.nesting < 0 or not token.map:
            continue
        start, end = token.map
        if token.type == "heading_open":
            sections.append((tokens[i + 1].content, int(token.tag[1]), []))
        else:
            sections[-1][2].append((token.type.removesuffix("_open"), "\n".join(lines[start:end]).strip()))
    return sections


# A Markdown link whose target is relative to the repository ([x](../submissions/x/), [difficulty.md](difficulty.md)):
# the dataset folder holds neither, so the card names the target as code instead of linking nowhere.
_RELATIVE_LINK = re.compile(r"\[([^\]]+)\]\((?![a-z][a-z0-9+.-]*:|#)[^)\s]+\)")


def _unlinked(block: str) -> str:
    """``block`` with every relative Markdown link replaced by its text as a code span (a text already
    in backticks is kept as it is); absolute links (``https:``, ``mailto:``) and anchors stay."""
    return _RELATIVE_LINK.sub(lambda m: m[1] if m[1].startswith("`") else f"`{m[1]}`", block)


def _card_section(text: str, source: str) -> str:
    """A generated Markdown file (agreement, leaderboard) cut down for the card: the paragraphs and tables
    of its level-1 text and of each level-2 section that holds a table or is plain prose; level-2
    headings become level 3 (under the card's own level-2 heading). Lists, the paragraph introducing a
    list, deeper sections (per-paper disagreements) and the 'Generated by ...; do not edit' sentence
    are left out; links relative to the repository become code spans (:func:`_unlinked`)."""
    parts = [f"From `{source}`:"]
    sections = markdown_blocks(text)
    for k, (title, level, blocks) in enumerate(sections):
        has_subsections = k + 1 < len(sections) and sections[k + 1][1] > level
        kinds = {kind for kind, _ in blocks}
        if level >= 3 or (level == 2 and "table" not in kinds and (has_subsections or kinds - {"paragraph"})):
            continue
        kept = []
        for j, (kind, block) in enumerate(blocks):
            introduces_list = j + 1 < len(blocks) and blocks[j + 1][0].endswith("list")
            if kind == "table" or (kind == "paragraph" and not introduces_list):
                block = re.sub(r"^Generated by .*?do not edit by hand\.\s*", "", block, flags=re.S)
                kept += [_unlinked(block)] if block else []
        if level == 2 and kept:
            parts.append(f"### {title}")
        parts += kept
    return "\n\n".join(parts)


def card_extras(gold_dir: Path, results_dir: Path) -> dict[str, str]:
    """Text for the card from the project's own files: guideline summary, ``gold/AGREEMENT.md``,
    ``results/leaderboard.md`` and ``results/difficulty.md`` (what models get wrong; their level-1 and level-2 sections'
    paragraphs and tables; an absent file gives an empty string)."""
    # Who annotated is said here as gold/AGREEMENT.md and the README say it; the details per sample are in
    # AGREEMENT.md (copied below it in the card).
    guidelines = (
        "Each gold record was written by an AI agent session (a large language model working as an annotator, not a "
        "person) reading the abstract under `gold/GUIDELINES.md` (definition, inclusions, exclusions, canonical form "
        "and worked examples per field), never by keeping an extraction model's output. Rulings added after each "
        "labeling round were applied to every affected record. The current second labeling was written blind by a "
        "separate AI agent session, so the agreement figures below measure how consistently two independent annotators "
        "of that kind apply the guidelines; they are not a human ceiling. Who labeled each sample, and how blind each "
        "second labeling was, is stated with the agreement figures below."
    )
    agreement = gold_dir / "AGREEMENT.md"
    board = results_dir / "leaderboard.md"
    difficulty = results_dir / "difficulty.md"
    return {
        "guidelines": guidelines,
        "agreement": _card_section(agreement.read_text(encoding="utf-8"), "gold/AGREEMENT.md")
        if agreement.is_file()
        else "",
        "leaderboard": _card_section(board.read_text(encoding="utf-8"), "results/leaderboard.md")
        if board.is_file()
        else "",
        "difficulty": _card_section(difficulty.read_text(encoding="utf-8"), "results/difficulty.md")
        if difficulty.is_file()
        else "",
    }


def push_dataset(
    folder: Path, repo_id: str, private: bool, dry_run: bool, include_partial: frozenset[str] | set[str] = frozenset()
) -> dict[str, Any]:
    """Upload the folder as a dataset repo. ``dry_run`` lists the files and the commit instead, with
    ``warnings`` about the folder's ``eval.yaml`` when there are any.

    Raises RuntimeError with a clear message for a missing token or a network failure, and before
    any upload when a predictions file is not listed in the export's ``predictions/runs.json`` or
    is a partial or unfinished run whose id is not in ``include_partial``.
    """
    listing = folder / "predictions" / "runs.json"
    status = json.loads(listing.read_text(encoding="utf-8")) if listing.is_file() else {}
    for parquet in sorted((folder / "predictions").glob("*.parquet")):
        entry = status.get(parquet.stem)
        if entry is None:
            raise RuntimeError(f"{parquet}: not written by `paperfields export` (not in {listing}); export again")
        if not entry["complete"] and entry["run_id"] not in include_partial:
            raise RuntimeError(
                f"{parquet}: {entry['run_id']} is partial or unfinished "
                f"({entry['papers_done']}/{plural(entry['papers'], 'paper')} done, "
                f"{entry['papers']} of {entry['papers_total']} in the split); name it with "
                f"--include-partial {entry['run_id']} to publish it all the same"
            )
    warnings = _eval_yaml_warnings(folder)
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    message = f"PaperFields release: {len(files)} files"
    plan = {"repo_id": repo_id, "repo_type": "dataset", "private": private, "commit_message": message, "files": files}
    if warnings:
        plan["warnings"] = warnings
    return plan if dry_run else upload_folder(folder, plan)


def _eval_yaml_warnings(folder: Path) -> list[str]:
    """What the Hub may refuse in the folder's ``eval.yaml``: a framework not in its list yet. Raises
    RuntimeError for an ``eval.yaml`` that is not valid against the Hub's format (nothing is uploaded)."""
    import yaml

    from paperfields.hub import EVAL_YAML, eval_yaml_problems, framework_listed

    path = folder / EVAL_YAML
    if not path.is_file():
        return []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise RuntimeError(f"{path}: not YAML ({exc}); export again") from None
    problems = eval_yaml_problems(data)
    if problems:
        raise RuntimeError(f"{path}: not a valid eval.yaml: {'; '.join(problems)}; export again")
    framework = data["evaluation_framework"]
    if framework_listed(framework):
        return []
    return [
        f"{EVAL_YAML}: evaluation_framework {framework!r} is not in the Hub's list of frameworks yet (huggingface.js "
        "packages/tasks/src/eval.ts), which the Hub checks when eval.yaml is pushed; if the push is refused, remove "
        f"{EVAL_YAML} from {folder} and push again (the dataset is then not a Hub benchmark)"
    ]


def upload_folder(folder: Path, plan: dict[str, Any], **create: Any) -> dict[str, Any]:
    """Upload ``folder`` to the Hub as ``plan`` says (``repo_id``, ``repo_type``, ``private``,
    ``commit_message``), creating the repo when missing (``create``: more arguments to
    ``create_repo``, such as ``space_sdk``); returns ``plan`` with the ``commit`` made. The token comes
    from HF_TOKEN or the standard login and is never written. Raises RuntimeError for a missing token
    or any Hub or network failure, with the Hub's own message."""
    from huggingface_hub import HfApi
    from huggingface_hub.utils import get_token

    token = get_token()
    if not token:
        raise RuntimeError(
            "no Hugging Face token: set HF_TOKEN or run `huggingface-cli login` (it is never written anywhere)"
        )
    api = HfApi(token=token)
    repo_id, repo_type = plan["repo_id"], plan["repo_type"]
    try:
        api.create_repo(repo_id, repo_type=repo_type, private=plan["private"], exist_ok=True, **create)
        info = api.upload_folder(
            folder_path=str(folder), repo_id=repo_id, repo_type=repo_type, commit_message=plan["commit_message"]
        )
    except Exception as exc:  # network, auth, hub errors all end here with the hub's own message
        raise RuntimeError(f"upload to {repo_id} failed: {type(exc).__name__}: {str(exc)[:300]}") from None
    return {**plan, "commit": str(getattr(info, "oid", info))}
