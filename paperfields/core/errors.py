"""One root for every error PaperFields raises on purpose, and one way to name a bad field.

The tree (each class keeps its built-in base, so ``except ValueError`` still catches bad input)::

    PaperFieldsError
    ├── InputError (ValueError)        a file or option the user gave is wrong: CorpusError, GoldError,
    │                                  PromptError, MixedVersionsError (runs that cannot share a board),
    │                                  SemanticUnavailable (a cosine no file stores, no embedding model)
    ├── RunError (RuntimeError)        a run folder that cannot be read or resumed (paperfields.core.runlog):
    │                                  NoGoldError (nothing to score), SubmissionError
    ├── BackendError (RuntimeError)    a backend that cannot be set up (paperfields.extract.backends.base)
    ├── WeightsError (RuntimeError)    model weights that cannot be found or fetched (extract/backends/weights.py)
    ├── HubResultError                 a run the Hub cannot report, a dataset id off its format (paperfields.hub)
    └── RegisterError                  logs that cannot enter the Inspect Evals Register entry
                                       (paperfields.integrations.inspect_register)

The command line prints any ``PaperFieldsError`` (every subclass, whichever command meets it) as one
line, ``error: <message>`` (the message names the file, line and field), and exits 2; anything else
is a bug and keeps its traceback. Exit 1 is an outcome a script must notice rather than a usage error:
a run with papers still unanswered, a run with no gold to score (NoGoldError), and every finding of
``gold check``, a gold file it cannot read included.
"""

from __future__ import annotations

from typing import Optional

from pydantic import ValidationError


class PaperFieldsError(Exception):
    """The root of PaperFields' own errors: the message is for the user and names what to fix."""


class InputError(PaperFieldsError, ValueError):
    """Input the user gave (a file, a line of it, an option) is not what it must be."""


def field_path(loc: tuple | list) -> str:
    """Pydantic's error location as a dotted path: ``("results", 0, "value")`` -> ``results.0.value``."""
    return ".".join(map(str, loc))


def field_error(exc: ValidationError, prefix: Optional[str] = None) -> str:
    """The first error of a Pydantic ``ValidationError`` as ``field 'a.b': message``.

    ``prefix`` (for example ``"record"``) is put before the path: ``field 'record.a.b': message``. An
    error at the top level (empty location) reads ``field '<prefix>'`` or ``the value``. Pydantic's
    ``Value error, `` prefix (a validator's own message) is dropped: the message is ours.
    """
    first = exc.errors()[0]
    path = ".".join(p for p in (prefix, field_path(first["loc"])) if p)
    where = f"field '{path}'" if path else "the value"
    return f"{where}: {first['msg'].removeprefix('Value error, ')}"
