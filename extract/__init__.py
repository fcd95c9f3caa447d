"""Extraction: backends, prompt strategies, the runner and the batch path (``paperfields.extract``).

It stands on the floor (:mod:`paperfields.core`) and never imports :mod:`paperfields.scoring`. The
function that extracts one abstract is :func:`paperfields.extract_record` (the package itself is no
longer callable: ``paperfields.extract(...)`` was renamed, see the README's changelog).
"""
