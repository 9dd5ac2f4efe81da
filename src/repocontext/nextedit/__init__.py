"""The next edit: when one place is changed, the same change offered at the next places
(issue 53). `propose` is the call; `edits` recognises the replacement, `places` finds where its
rules apply, `substitute` finds where the edit's tokens stand again and scores every place,
`memory` makes the places ahead of a change made again surer, `syntax` reads the buffer's
tree."""

from .edits import Edit, Replacement
from .memory import EditMemory
from .places import NextEditPlace
from .propose import explain, propose, propose_record

__all__ = [
    "Edit",
    "EditMemory",
    "NextEditPlace",
    "Replacement",
    "explain",
    "propose",
    "propose_record",
]
