"""Prompt strategies: turn a paper into chat messages, from a template file in ``prompts/``.

A prompt file is TOML with ``name``, ``version``, ``description``, ``system`` and ``user``
(Jinja2 templates). It is validated on load; its sha256 goes into the run manifest so a changed
prompt can never pass silently as the old one.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

import jinja2
from pydantic import BaseModel, ValidationError

from paperfields.extract.corpus import Paper
from paperfields.extract.schema import PaperRecord
from paperfields.paths import prompts_dir


class PromptError(ValueError):
    """A prompt file that is missing, not TOML, or lacks a required key or template variable."""


class PromptTemplate(BaseModel):
    """A validated prompt file."""

    name: str
    version: str
    description: str = ""
    system: str
    user: str


def field_guide(model: type[BaseModel] = PaperRecord) -> str:
    """One line per field: ``- name: description`` (enum choices included), from the schema."""
    schema = model.model_json_schema()
    lines = []
    for name, prop in schema["properties"].items():
        lines.append(f"- {name}: {prop.get('description', '')}")
    result = schema["$defs"]["Result"]["properties"]
    lines.append("Each results item has: " + "; ".join(f"{k}: {v.get('description', '')}" for k, v in result.items()))
    for enum in ("ResearchArea", "Unit", "ResultKind", "Qualifier", "ContributionType"):
        lines.append(f"{enum} values: {', '.join(schema['$defs'][enum]['enum'])}")
    return "\n".join(lines)


class Strategy:
    """Zero-shot strategy: system = instructions + field guide, user = the abstract."""

    def __init__(self, name: str = "zero_shot", directory: Path | None = None) -> None:
        path = (directory or prompts_dir()) / f"{name}.toml"
        if not path.is_file():
            known = sorted(p.stem for p in (directory or prompts_dir()).glob("*.toml"))
            raise PromptError(f"{path}: no such prompt file; known strategies: {', '.join(known) or '(none)'}")
        raw = path.read_bytes()
        try:
            self.template = PromptTemplate.model_validate(tomllib.loads(raw.decode("utf-8")))
        except tomllib.TOMLDecodeError as exc:
            raise PromptError(f"{path}: not valid TOML ({exc})") from None
        except ValidationError as exc:
            first = exc.errors()[0]
            raise PromptError(f"{path}: field '{'.'.join(map(str, first['loc']))}': {first['msg']}") from None
        if self.template.name != name:
            raise PromptError(f"{path}: field 'name' is '{self.template.name}', expected '{name}' (the file name)")
        env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)
        try:
            self._system = env.from_string(self.template.system)
            self._user = env.from_string(self.template.user)
        except jinja2.TemplateSyntaxError as exc:
            raise PromptError(f"{path}:{exc.lineno}: template syntax error: {exc.message}") from None
        self.name = name
        self.path = path
        self.sha256 = hashlib.sha256(raw).hexdigest()
        self._guide = field_guide()

    def messages(self, paper: Paper) -> list[dict[str, str]]:
        """Chat messages for one paper: ``[{"role": "system", ...}, {"role": "user", ...}]``."""
        context = {"field_guide": self._guide, "paper": paper}
        try:
            return [
                {"role": "system", "content": self._system.render(context)},
                {"role": "user", "content": self._user.render(context)},
            ]
        except jinja2.UndefinedError as exc:
            raise PromptError(f"{self.path}: template uses an unknown variable: {exc.message}") from None
