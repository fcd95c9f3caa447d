"""Extraction: schema, corpus, backends, prompt strategies, runner (``paperfields.extract``).

The package is also callable: ``paperfields.extract(abstract, backend=..., strategy=...)`` is
:func:`paperfields.api.extract`. The API function and this subpackage share the name
``paperfields.extract``, and the subpackage must stay a module (``paperfields.extract.runner`` and
friends are imported through it), so the module itself forwards calls.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    def __call__(self, abstract: str, **options: Any) -> Any:
        from paperfields.api import extract

        return extract(abstract, **options)


sys.modules[__name__].__class__ = _CallableModule
