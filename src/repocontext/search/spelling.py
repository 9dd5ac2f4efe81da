"""A question's words in the other English: `coloured` is also looked up as `colored`.

Code is nearly always written in American English (logrus's `isColored` and `levelColor`,
Go's `json.Marshaler`, pytest's `parametrize`), and people ask in their own: a question
about "coloured output" matched no word of logrus's `printColored`, and BM25 stems `colour`
and `color` apart. A British project is the other way round. So BM25 looks a word up in
both spellings (retrievers.py `bm25_terms`), from the word families below; a word whose
other form is another word (`disc`, `tyre`, `practise`) is left out.
"""

from __future__ import annotations

from functools import cache

# -our / -or: the British base, then the endings both spellings share
_OUR = (
    "arbour armour behaviour candour clamour colour endeavour favour flavour harbour honour "
    "humour labour neighbour odour parlour rancour rumour saviour splendour valour vapour vigour"
).split()
_OUR_ENDINGS = ("", "s", "ed", "ing", "ful", "less", "able", "ably", "al", "ally", "ite", "ites")
# -ise / -ize: the stem before the ending
_ISE = (
    "anonym author canonical capital categor central character container custom deserial "
    "emphas equal final general global initial internal item legal lexical local marginal "
    "material maxim memo minim modular monet neutral normal optim organ parallel parametr "
    "personal random rational real recogn sanit serial special stabil standard "
    "priorit summar symbol synchron token trivial util vector virtual visual"
).split()
_ISE_ENDINGS = ("ise", "ised", "ises", "ising", "isation", "isations", "iser", "isers", "isable")
_YSE = ("anal", "catal", "paral")
_YSE_ENDINGS = ("yse", "ysed", "ysing", "yser", "ysers")
# a final l doubled before an ending in British English only
_LL = (
    "cancel channel counsel dial equal fuel funnel label level libel marshal marvel model "
    "panel quarrel rival signal spiral total travel tunnel unravel"
).split()
_LL_ENDINGS = ("ed", "ing", "er", "ers")
# -re / -er
_RE = "calibre centre fibre litre lustre metre sabre spectre theatre".split()
_RE_ENDINGS = (("", ""), ("s", "s"), ("d", "ed"), ("ing", "ing"))
_OGUE = ("analogue", "catalogue", "dialogue")
_OGUE_ENDINGS = (("", ""), ("s", "s"), ("d", "ed"))
_WORDS = {
    "acknowledgement": "acknowledgment",
    "acknowledgements": "acknowledgments",
    "ageing": "aging",
    "amongst": "among",
    "artefact": "artifact",
    "artefacts": "artifacts",
    "defence": "defense",
    "enrol": "enroll",
    "fulfil": "fulfill",
    "grey": "gray",
    "greyed": "grayed",
    "judgement": "judgment",
    "judgements": "judgments",
    "licence": "license",
    "licences": "licenses",
    "manoeuvre": "maneuver",
    "mould": "mold",
    "offence": "offense",
    "pretence": "pretense",
    "programme": "program",
    "programmes": "programs",
}


@cache
def _pairs() -> dict[str, str]:
    """Both directions, built on the first question (about 2 ms), not on import."""
    british_to_american = dict(_WORDS)
    for base in _OUR:
        for ending in _OUR_ENDINGS:
            british_to_american[base + ending] = base[:-2] + "r" + ending
    for stem in _ISE:
        for ending in _ISE_ENDINGS:
            british_to_american[stem + ending] = stem + "iz" + ending[2:]
    for stem in _YSE:
        for ending in _YSE_ENDINGS:
            british_to_american[stem + ending] = stem + "yz" + ending[2:]
    for base in _LL:
        for ending in _LL_ENDINGS:
            british_to_american[base + "l" + ending] = base + ending
    for base in _RE:
        for british, american in _RE_ENDINGS:
            british_to_american[base + british] = base[:-2] + "er" + american
    for base in _OGUE:
        for british, american in _OGUE_ENDINGS:
            british_to_american[base + british] = base[:-2] + american
    both = dict(british_to_american)
    both.update((american, british) for british, american in british_to_american.items())
    return both


def other_spelling(word: str) -> str | None:
    """The word as the other English spells it (lower case), or None."""
    return _pairs().get(word.lower())
