"""Release the corpus and gold (and optionally committed predictions) as a Hugging Face dataset.

``export_dataset`` writes a folder in Hub layout: ``gold/{dev,test}.parquet`` (config ``gold``),
``predictions/<run>.parquet`` (config ``predictions``, one split per committed run) and a dataset
card ``README.md`` generated from the project's own data. ``push_dataset`` uploads it with
``huggingface_hub``; the token comes from the environment or the standard login and is never written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Optional

from paperfields.extract.schema import SCHEMA_VERSION, PaperRecord, Result
from paperfields.scoring.gold import GOLD_VERSION, gold_fingerprint, load_gold
from paperfields.scoring.score import SCORER_VERSION

LICENSE = "cc-by-4.0"


def features():
    """Explicit ``datasets`` Features of a gold row (nested results as a list of structs)."""
    from datasets import Features, Sequence, Value

    string = Value("string")
    result = {name: (Value("float64") if name in ("value", "value_upper") else string) for name in Result.model_fields}
    return Features({
        "id": string, "split": string, "source": string, "position": Value("int32"), "text": string,
        "method_name": string, "method_full_name": string, "contribution_types": Sequence(string), "research_area": string,
        "tasks": Sequence(string), "datasets": Sequence(string), "models": Sequence(string), "metrics": Sequence(string),
        "baselines": Sequence(string), "results": [result], "code_url": string, "training_free": Value("bool"),
        "alternates": [{"canonical": string, "forms": Sequence(string)}], "normalized": Sequence(string),
    })


def prediction_features():
    from datasets import Features, Value

    base = dict(features())
    for key in ("split", "source", "position", "text", "alternates", "normalized"):
        base.pop(key)
    base.update({"run_id": Value("string"), "backend": Value("string"), "strategy": Value("string"),
                 "valid": Value("bool"), "failure": Value("string")})
    return Features(base)


def gold_rows(gold_path: Path, corpus_path: Path) -> dict[str, list[dict[str, Any]]]:
    """Gold rows per split, in corpus order."""
    from paperfields.extract.corpus import load_corpus

    papers = {p.id: p for p in load_corpus(corpus_path)}
    rows: dict[str, list[dict[str, Any]]] = {"dev": [], "test": []}
    for g in load_gold(gold_path):
        p = papers[g.id]
        rows[g.split].append({
            "id": g.id, "split": g.split, "source": p.source, "position": p.position, "text": p.text,
            **g.record.model_dump(mode="json"),
            "alternates": [{"canonical": k, "forms": v} for k, v in sorted(g.alternates.items())],
            "normalized": g.normalized,
        })
    return rows


def prediction_rows(run_dir: Path) -> list[dict[str, Any]]:
    """One row per paper of a run: the predicted record (empty when it failed) and run metadata."""
    from paperfields.extract.runner import load_manifest, read_predictions

    manifest = load_manifest(run_dir)
    empty = {k: v for k, v in PaperRecord().model_dump(mode="json").items()}
    rows = []
    for line in sorted(read_predictions(run_dir / "predictions.jsonl"), key=lambda l: l.paper_id):
        record = line.record or {**empty, "research_area": None}
        rows.append({"id": line.paper_id, **record, "run_id": manifest.run_id, "backend": manifest.config.backend,
                     "strategy": manifest.config.strategy, "valid": line.record is not None,
                     "failure": line.failure.value if line.failure else None})
    return rows


def split_name(run_id: str) -> str:
    """A Hub split name for a run id (letters, digits and underscores)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", run_id)


def export_dataset(out_dir: Path, gold_path: Path, corpus_path: Path, runs_dir: Optional[Path], card_extras: dict[str, str],
                   include_partial: frozenset[str] | set[str] = frozenset()) -> list[Path]:
    """Write the dataset folder; returns the files written. Same inputs give the same bytes.

    Into a folder holding an earlier export, ``predictions/*.parquet`` files this export does not
    write (``runs_dir`` None, or a run since removed) are deleted, and an emptied ``predictions/``
    with them: the card would not list them, yet ``push`` would upload them. Nothing else is deleted.
    Raises RunError (before writing any prediction) when a run's scores are stale (its predictions
    changed since scoring, or it was scored against another version of ``gold_path``), or when a run
    is partial (``--limit``) or unfinished and its id is not in ``include_partial``.
    """
    from datasets import Dataset

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for split, rows in gold_rows(gold_path, corpus_path).items():
        path = out_dir / "gold" / f"{split}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        Dataset.from_list(rows, features=features()).to_parquet(str(path))
        written.append(path)
    runs = []
    if runs_dir is not None:
        from paperfields.extract.runner import RunError
        from paperfields.scoring.runs import load_scored_run

        run_dirs = sorted(p.parent for p in runs_dir.glob("*/scores.json"))
        for run_dir in run_dirs:
            scores, _ = load_scored_run(run_dir, gold_path)  # published predictions must be the ones the card's scores describe
            if not scores.comparable and run_dir.name not in include_partial:
                raise RunError(f"{run_dir}: a {'unfinished' if scores.unfinished else 'partial'} run ({scores.papers_done}/{scores.papers} "
                               f"papers done, {scores.papers} of {scores.papers_in_split} in the split) is not exported unless named on "
                               f"purpose: --include-partial {run_dir.name}, or finish it first")
        status = {}
        for run_dir in run_dirs:
            scores, _ = load_scored_run(run_dir, gold_path)
            status[split_name(run_dir.name)] = {"run_id": run_dir.name, "complete": scores.comparable,
                                                "reference": scores.reference, "papers": scores.papers, "papers_done": scores.papers_done,
                                                "papers_total": scores.papers_in_split}
        for run_dir in run_dirs:
            path = out_dir / "predictions" / f"{split_name(run_dir.name)}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            Dataset.from_list(prediction_rows(run_dir), features=prediction_features()).to_parquet(str(path))
            written.append(path)
            runs.append(split_name(run_dir.name))
    if runs:
        listing = out_dir / "predictions" / "runs.json"
        listing.write_text(json.dumps(status, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        written.append(listing)
    elif (out_dir / "predictions" / "runs.json").exists():
        (out_dir / "predictions" / "runs.json").unlink()
    for stale in sorted(set((out_dir / "predictions").glob("*.parquet")) - set(written)):
        stale.unlink()
    if (out_dir / "predictions").is_dir() and not any((out_dir / "predictions").iterdir()):
        (out_dir / "predictions").rmdir()
    card = out_dir / "README.md"
    card.write_text(dataset_card(gold_path, corpus_path, runs, card_extras), encoding="utf-8")
    written.append(card)
    return written


def field_table() -> str:
    """Markdown table of the schema fields and their descriptions (from the Pydantic model)."""
    lines = ["| field | description |", "|---|---|"]
    for name, field in PaperRecord.model_fields.items():
        lines.append(f"| `{name}` | {field.description} |")
    for name, field in Result.model_fields.items():
        lines.append(f"| `results[].{name}` | {field.description} |")
    return "\n".join(lines)


def dataset_card(gold_path: Path, corpus_path: Path, runs: list[str], extras: dict[str, str]) -> str:
    """The dataset card: YAML front matter built with ``huggingface_hub.DatasetCardData`` and a body
    generated from the schema, the gold, the agreement file and the leaderboard."""
    from huggingface_hub import DatasetCard, DatasetCardData

    rows = gold_rows(gold_path, corpus_path)
    configs = [{"config_name": "gold", "data_files": [{"split": s, "path": f"gold/{s}.parquet"} for s in ("dev", "test")], "default": True}]
    if runs:
        configs.append({"config_name": "predictions", "data_files": [{"split": r, "path": f"predictions/{r}.parquet"} for r in runs]})
    data = DatasetCardData(
        license=LICENSE, language=["en"], task_categories=["text-generation"], size_categories=["n<1K"],
        pretty_name="PaperFields: structured extraction from ICML 2026 abstracts", configs=configs,
        tags=["information-extraction", "structured-output", "benchmark", "scientific-papers"],
    )
    versions = f"schema {SCHEMA_VERSION}, gold {GOLD_VERSION} ({gold_fingerprint(gold_path)}), scorer {SCORER_VERSION}"
    body = f"""
# PaperFields

A benchmark for turning a machine-learning paper abstract into a structured record. {sum(len(r) for r in rows.values())}
ICML 2026 abstracts ({len(rows['dev'])} dev, {len(rows['test'])} test), each hand-labeled by reading the abstract.

Versions: {versions}.

## Configs

- `gold`: one row per abstract, with the abstract `text`, every schema field, `alternates` (other accepted
  surface forms of a gold string) and `normalized` (gold strings not written verbatim in the abstract).
- `predictions`: one split per committed run ({len(runs)} runs), the predicted record per paper with run metadata.

```python
from datasets import load_dataset
gold = load_dataset("path/or/repo", "gold")
```

## Fields

{field_table()}

## How the gold was made

{extras.get('guidelines', '')}

{extras.get('agreement', '')}

## Leaderboard (test split)

{extras.get('leaderboard', '')}

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
    card = DatasetCard("---\n" + data.to_yaml() + "\n---\n" + body)  # parses the front matter back: a card that validates
    return str(card)


def card_extras(gold_dir: Path, results_dir: Path) -> dict[str, str]:
    """Text for the card from the project's own files: guideline summary, agreement, leaderboard."""
    guidelines = (
        "Each abstract was labeled by a person under `gold/GUIDELINES.md` (definition, inclusions, exclusions, "
        "canonical form and worked examples per field), never by keeping a model's output. Rulings added after "
        "each labeling round were applied to every affected record."
    )
    agreement = ""
    path = gold_dir / "AGREEMENT.md"
    if path.is_file():
        text = path.read_text(encoding="utf-8")
        keep = [l for l in text.splitlines() if l.startswith(("Overall agreement", "research_area:", "Scorer-human agreement", "| "))]
        agreement = "Agreement (from `gold/AGREEMENT.md`):\n\n" + "\n".join(keep[:40])
    board = results_dir / "leaderboard.md"
    leaderboard = "\n".join(l for l in board.read_text(encoding="utf-8").splitlines() if l.startswith("|")) if board.is_file() else "(no runs yet)"
    return {"guidelines": guidelines, "agreement": agreement, "leaderboard": leaderboard}


def push_dataset(folder: Path, repo_id: str, private: bool, dry_run: bool, include_partial: frozenset[str] | set[str] = frozenset()) -> dict[str, Any]:
    """Upload the folder as a dataset repo. ``dry_run`` lists the files and the commit instead.

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
            raise RuntimeError(f"{parquet}: {entry['run_id']} is partial or unfinished ({entry['papers_done']}/{entry['papers']} papers done, "
                               f"{entry['papers']} of {entry['papers_total']} in the split); name it with --include-partial "
                               f"{entry['run_id']} to publish it all the same")
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    message = f"PaperFields release: {len(files)} files"
    plan = {"repo_id": repo_id, "repo_type": "dataset", "private": private, "commit_message": message, "files": files}
    if dry_run:
        return plan
    from huggingface_hub import HfApi
    from huggingface_hub.utils import get_token

    token = get_token()
    if not token:
        raise RuntimeError("no Hugging Face token: set HF_TOKEN or run `huggingface-cli login` (it is never written anywhere)")
    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        info = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="dataset", commit_message=message)
    except Exception as exc:  # network, auth, hub errors all end here with the hub's own message
        raise RuntimeError(f"upload to {repo_id} failed: {type(exc).__name__}: {str(exc)[:300]}") from None
    return {**plan, "commit": str(getattr(info, "oid", info))}
