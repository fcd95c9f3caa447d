"""The floor: the benchmark's nouns, which both extraction and scoring stand on.

Nothing here imports ``paperfields.extract`` or ``paperfields.scoring`` (a test checks it):

- :mod:`~paperfields.core.schema`: the record a model fills (``PaperRecord``) and each field's facts;
- :mod:`~paperfields.core.corpus`: papers and corpus files;
- :mod:`~paperfields.core.gold`: gold records and their loading;
- :mod:`~paperfields.core.normalize` and :mod:`~paperfields.core.locate`: text normalization and grounding;
- :mod:`~paperfields.core.confidence`: per-field confidence from token log-probabilities;
- :mod:`~paperfields.core.runlog`: the run log (``RunConfig``, ``PredictionLine``, ``Manifest``,
  ``FailureClass``, ``Usage``; ``redact_secrets``, which masks every key-shaped string);
- :mod:`~paperfields.core.escape`: text from runs and submissions made safe for the Markdown we write;
- :mod:`~paperfields.core.confusables`: look-alike letters and invisible characters, which make a name read as
  another;
- :mod:`~paperfields.core.errors`, :mod:`~paperfields.core.paths`,
  :mod:`~paperfields.core.plural`, :mod:`~paperfields.core.version`.
"""
