"""The next edit: when one place is changed, the same change offered at the next places
(issue 53). `propose` is the call; `edits` recognises the replacement, `places` finds where its
rules apply, `substitute` finds where the edit's tokens stand again and scores every place,
`syntax` reads the buffer's tree."""

from .edits import Edit, Replacement
from .places import NextEditPlace
from .propose import explain, propose, propose_record

__all__ = ["Edit", "NextEditPlace", "Replacement", "explain", "propose", "propose_record"]
