"""Contamination status of a run: could the model have seen the corpus during training?

The table ``extract/backends/cutoffs.toml`` (beside the price table) holds each known model's
training-data cutoff (``YYYY-MM``) with the page it comes from, and the corpus's earliest public
date. A run is:

- ``after cutoff`` when the corpus was first public more than ``margin_months`` after the model's
  cutoff (the model cannot have trained on it);
- ``possible overlap`` when the cutoff is later than that (a preprint of an abstract may predate the
  conference deadline, hence the margin);
- ``unknown`` when the model's cutoff is not in the table (or is "unknown");
- ``n/a`` for reference runs (rules/, annotator/), which involve no trained model.

This is a date check, not a detection of memorization (compare Sainz et al. 2023, "NLP Evaluation in
trouble"; Deng et al. 2024 on contamination detection): "after cutoff" is the only status that rules
contamination out.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Optional

from pydantic import BaseModel

CUTOFFS = Path(__file__).resolve().parent.parent / "extract" / "backends" / "cutoffs.toml"
STATUSES = ("after cutoff", "possible overlap", "unknown", "n/a")


class Cutoff(BaseModel):
    """A model's training-data cutoff (``YYYY-MM`` or ``unknown``) and where it comes from."""

    cutoff: str
    source: str


class CorpusDate(BaseModel):
    """When the corpus was first public (``YYYY-MM``), its source, and the margin for preprints (months)."""

    earliest_public: str
    source: str
    margin_months: int = 6


class Contamination(BaseModel):
    """The status of one run, with the dates and sources it was decided from."""

    status: str
    model_cutoff: Optional[str] = None
    cutoff_source: Optional[str] = None
    corpus_earliest_public: Optional[str] = None


def _months(date: str) -> int:
    """``YYYY-MM`` as a month count. Raises ValueError naming the value for any other form."""
    match = re.fullmatch(r"(\d{4})-(\d{2})", date)
    if not match or not 1 <= int(match.group(2)) <= 12:
        raise ValueError(f"{date!r} is not a YYYY-MM date")
    return int(match.group(1)) * 12 + int(match.group(2)) - 1


@lru_cache(maxsize=4)
def load_cutoffs(path: Path = CUTOFFS) -> tuple[CorpusDate, dict[str, Cutoff]]:
    """(the benchmark corpus's date, model -> cutoff) from the table. Raises ValueError naming the file
    and entry for a date that is not ``YYYY-MM`` (``unknown`` is allowed for a model)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    corpus = CorpusDate.model_validate(data["corpus"])
    models = {name: Cutoff.model_validate(entry) for name, entry in data.get("models", {}).items()}
    for name, entry in [("corpus", corpus.earliest_public)] + [(n, c.cutoff) for n, c in models.items() if c.cutoff != "unknown"]:
        try:
            _months(entry)
        except ValueError as exc:
            raise ValueError(f"{path}: {name}: {exc}") from None
    return corpus, models


def contamination_status(backend: str, reference: bool = False, corpus_date: Optional[str] = None,
                         path: Path = CUTOFFS) -> Contamination:
    """The status of a run of ``backend`` (``provider/model``) on a corpus first public in
    ``corpus_date`` (``YYYY-MM``; default: the benchmark corpus's date from the table)."""
    corpus, models = load_cutoffs(path)
    earliest = corpus_date or corpus.earliest_public
    if reference:
        return Contamination(status="n/a", corpus_earliest_public=earliest)
    entry = models.get(backend)
    if entry is None or entry.cutoff == "unknown":
        return Contamination(status="unknown", cutoff_source=entry.source if entry else None, corpus_earliest_public=earliest)
    gap = _months(earliest) - _months(entry.cutoff)
    status = "after cutoff" if gap > corpus.margin_months else "possible overlap"
    return Contamination(status=status, model_cutoff=entry.cutoff, cutoff_source=entry.source, corpus_earliest_public=earliest)
