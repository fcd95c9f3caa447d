"""Characters that make one name read as another: letters and digits drawn like other letters (:data:`LOOKALIKES`,
folded by :func:`fold_lookalikes`) and characters that draw nothing yet move or join what is around them
(:data:`INVISIBLE`: bidirectional controls and zero-width characters, found by :func:`invisible`).

:data:`LOOKALIKES` is the one table of look-alikes the submission door folds with: the skeleton a name is compared
with the references' names by (:func:`skeleton`) and the words a name may not spell (:func:`spelled_word`, which
:func:`~paperfields.scoring.score.reference_spelling` reads the reference words with) both fold with it, so a
character folded in one is folded in the other.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Optional

# What a letter or digit passes for once case-folded (NFKC has already made full-width forms plain): 0 for o; 1, i
# | and ! for l; 5 and $ for s; 3 for e; 4 and @ for a; and the Cyrillic and Greek letters drawn like Latin ones.
# Keys are single case-folded characters, values Latin letters a-z.
LOOKALIKES: dict[str, str] = {
    **dict.fromkeys("0οоσ", "o"),
    **dict.fromkeys("1i|ιіӏ!", "l"),
    **dict.fromkeys("5$ѕ", "s"),
    **dict.fromkeys("3εе", "e"),
    **dict.fromkeys("4@αа", "a"),
    **dict.fromkeys("ρр", "p"),
    **dict.fromkeys("с", "c"),
    **dict.fromkeys("уγ", "y"),
    **dict.fromkeys("хχ", "x"),
    **dict.fromkeys("νѵ", "v"),
    **dict.fromkeys("τт", "t"),
    **dict.fromkeys("κк", "k"),
    **dict.fromkeys("υ", "u"),
    **dict.fromkeys("ոп", "n"),
    **dict.fromkeys("ɡ", "g"),
    **dict.fromkeys("һ", "h"),
    **dict.fromkeys("ԁ", "d"),
    **dict.fromkeys("ј", "j"),
    **dict.fromkeys("м", "m"),
}
FOLD = str.maketrans(LOOKALIKES)  # for case-folded text (str.translate)


def skeleton(name: str) -> str:
    """``name`` as it reads: NFKC (full-width and other compatibility forms made plain), case-folded, look-alike
    letters and digits folded (:data:`LOOKALIKES`: ``agent-sessi0n``, Cyrillic ``а``) and everything but a-z and 0-9
    dropped (separators: ``agent_session``, ``Agent.Session``). Two names with one skeleton read as one."""
    text = unicodedata.normalize("NFKC", name).casefold().translate(FOLD)
    return re.sub(r"[^a-z0-9]", "", text)


# A name's words: a run of capitals, a camelCase hump, digits, other letters.
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\W\d_]+")


def spelled_word(name: str, words: frozenset[str]) -> Optional[str]:
    """The word of ``words`` (lower-case a-z words) that ``name`` spells, or None: the name with its separators
    removed and each of its words (split at anything not a letter or digit and at camelCase humps), as written and
    with every look-alike folded first (:func:`fold_lookalikes`), are compared by :func:`skeleton`, so case,
    compatibility forms, separators and look-alikes do not matter (``Rules``, ``human_``, ``h-u-m-a-n``,
    ``HumanLabels``, ``ruIes``, ``hum4n``, ``MyHum4n``), while a longer word is no word of ``words`` (``goldfish``)."""
    by_skeleton = {skeleton(word): word for word in sorted(words)}
    text = unicodedata.normalize("NFKC", name)
    for form in (text, fold_lookalikes(text)):
        parts = _WORDS.findall(form)
        for candidate in ("".join(parts), *parts):
            if word := by_skeleton.get(skeleton(candidate)):
                return word
    return None


def fold_lookalikes(text: str) -> str:
    """``text`` with each character that passes for a Latin letter (:data:`LOOKALIKES`, looked up case-folded, so a
    capital ``I`` or a Cyrillic capital ``А`` too) written as that letter in lower case, and every other character as
    written (its case kept, so camelCase humps still split words): ``ru1es``, ``ruIes`` -> ``rules``; ``hum4n`` ->
    ``human``; ``g0ld`` -> ``gold``."""
    return "".join(LOOKALIKES.get(c.casefold(), c) for c in text)


# Bidirectional controls (the embeddings, overrides and isolates, the marks LRM, RLM and ALM) and zero-width
# characters (space, non-joiner, joiner, word joiner, and U+FEFF, the zero-width no-break space a BOM is): drawn as
# nothing, they reorder or hide what a name shows (``acme\u202eyfed`` is drawn as ``acmedefy``).
INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


def invisible(text: str) -> Optional[tuple[int, str]]:
    """The first invisible character of ``text`` (:data:`INVISIBLE`) as (its 1-based position, its code point and
    name: ``U+202E (right-to-left override)``), or None when there is none."""
    found = INVISIBLE.search(text)
    if found is None:
        return None
    char = found.group(0)
    return found.start() + 1, f"U+{ord(char):04X} ({unicodedata.name(char).lower()})"
