"""Text and number normalization shared by matching, grounding and the gold check.

One function per concern, so every matching rule uses the same notion of "the same string".
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation
from functools import lru_cache

_LATEX_WRAP = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mathit|emph|texttt|operatorname)\{([^{}]*)\}")
_LATEX_SYMBOLS = {r"\times": "×", r"\%": "%", r"\sim": "~", r"\approx": "~", r"\&": "&", r"\_": "_", r"\#": "#"}
_GREEK = {name: chr(code) for name, code in [
    ("alpha", 0x3B1), ("beta", 0x3B2), ("gamma", 0x3B3), ("delta", 0x3B4), ("epsilon", 0x3B5), ("zeta", 0x3B6),
    ("eta", 0x3B7), ("theta", 0x3B8), ("iota", 0x3B9), ("kappa", 0x3BA), ("lambda", 0x3BB), ("mu", 0x3BC),
    ("nu", 0x3BD), ("xi", 0x3BE), ("pi", 0x3C0), ("rho", 0x3C1), ("sigma", 0x3C3), ("tau", 0x3C4),
    ("phi", 0x3C6), ("chi", 0x3C7), ("psi", 0x3C8), ("omega", 0x3C9)]}
_LATEX_GREEK = re.compile(r"\\(" + "|".join(_GREEK) + r")(?![A-Za-z])")
_LATEX_CMD = re.compile(r"\\[A-Za-z]+")
_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"), "-")
_QUOTES = dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032\u0060\u00b4"), "'") | dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f\u2033"), '"')
_MARKDOWN = re.compile(r"(\*\*|\*|__|`)")
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=1 << 16)  # pure, and called on the same gold strings for every prediction
def strip_markup(text: str) -> str:
    """Remove LaTeX wrappers and math delimiters and markdown emphasis; unify dashes and quotes.

    ``"*SafeCompass*"`` -> ``"SafeCompass"``; ``"$10\\times$"`` -> ``"10×"``; ``"56.61\\%"`` -> ``"56.61%"``.
    Case and inner spacing are kept.
    """
    text = unicodedata.normalize("NFKC", text)
    for _ in range(3):  # nested wrappers
        text = _LATEX_WRAP.sub(r"\1", text)
    for cmd, symbol in _LATEX_SYMBOLS.items():
        text = text.replace(cmd, symbol)
    text = _LATEX_GREEK.sub(lambda m: _GREEK[m.group(1)], text)
    text = _LATEX_CMD.sub("", text).replace("$", "").replace("{", "").replace("}", "").replace("^", "")
    text = text.translate(_DASHES).translate(_QUOTES)
    text = _MARKDOWN.sub("", text)
    return _SPACE.sub(" ", text).strip()


@lru_cache(maxsize=1 << 16)
def normalize(text: str) -> str:
    """Matching key of a short string: markup stripped, case-folded, hyphens, underscores and
    slashes read as spaces, surrounding quotes and trailing punctuation removed, leading "the"
    dropped, brackets read as spaces, whitespace collapsed. ``"The SWE-bench  Verified."`` -> ``"swe bench verified"``.
    """
    text = strip_markup(text).casefold()
    text = re.sub(r"[-_/()\[\]]", " ", text)
    text = text.strip(" \"'")
    text = re.sub(r"[.,;:!?]+$", "", text)
    text = re.sub(r"^the ", "", text)
    return _SPACE.sub(" ", text).strip()


def normalize_url(url: str) -> str:
    """Matching key of a URL: no scheme, ``www.``, fragment, trailing ``/``, ``.git``,
    trailing punctuation or brackets; case-folded host and path."""
    url = strip_markup(url).strip(" <>()[]{}\"'.,;:")
    url = re.sub(r"^[a-z]+://", "", url, flags=re.I)
    url = re.sub(r"^www\.", "", url, flags=re.I)
    url = url.split("#", 1)[0].rstrip("/")
    if url.endswith(".git"):
        url = url[:-4]
    return url.rstrip("/").casefold()


_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9}


def numbers_in(text: str) -> list[float]:
    """Every number written in a text, after markup stripping: thousands separators read
    (``"35,368"`` -> 35368), LaTeX read (``"53.19$\\times$"`` -> 53.19). Digits inside words
    (``"Qwen2.5"``) are found too. A ``K``/``M``/``B`` suffix adds the scaled value as well
    (``"20K"`` -> 20 and 20000)."""
    plain = strip_markup(text)
    found = []
    for match in re.finditer(r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)([KkMB](?![A-Za-z]))?", plain):
        value = float(match.group(1).replace(",", ""))
        found.append(value)
        if match.group(2):
            found.append(value * _SCALE[match.group(2).lower()])
    return found


def decimals(value: float) -> int:
    """Number of decimals in the shortest repr of ``value`` (56.61 -> 2, 3.0 -> 0)."""
    try:
        exponent = Decimal(repr(float(value))).normalize().as_tuple().exponent
    except InvalidOperation:
        return 0
    return max(0, -int(exponent))


def same_number(predicted: float, gold: float) -> bool:
    """True when ``predicted`` equals ``gold`` within half a unit in gold's last stated decimal
    (gold 56.61 accepts 56.605..56.615; gold 3 accepts 2.5..3.5)."""
    tolerance = 0.5 * 10 ** (-decimals(gold)) + 1e-9
    return abs(float(predicted) - float(gold)) <= tolerance
