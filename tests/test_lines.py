"""The lines the repository wrote, for the completion to copy (context/lines.py) and the source
that follows one of them (complete/steering/lines.py LineSource): the pure parts.
On the real model and a real index: tests/test_steering.py."""

from __future__ import annotations

from collections import Counter

import numpy as np

from repocontext.complete.steering import LINE_SURE, LINE_WEIGHT, LineSource, Place, line_odds
from repocontext.context.lines import RepositoryLines, counted_lines

LOGGER = 'logger = logging.getLogger("acme.payments")'


def lines_of(**files: str) -> RepositoryLines:
    return RepositoryLines().updated(
        {
            path: (f"h{len(text)}", counted_lines([(1, text.count("\n") + 1, text)]))
            for path, text in files.items()
        }  # fmt: skip
    )


def test_the_lines_most_often_written_that_begin_so_come_first():
    lines = lines_of(
        a=f"import logging\n{LOGGER}\n    {LOGGER}\n",
        b=f"{LOGGER}\nlogger = logging.getLogger(__name__)\n",
    )
    found = lines.starting("logger = logging.getL", None)
    assert [(c.text, c.count) for c in found] == [
        (LOGGER, 3),  # indentation does not count
        ("logger = logging.getLogger(__name__)", 1),
    ]
    # the file being edited: the buffer is newer than the index's copy, so its lines go
    assert [(c.text, c.count) for c in lines.starting("logger = logging.getL", "a")] == [
        ("logger = logging.getLogger(__name__)", 1),  # a tie: the shorter first
        (LOGGER, 1),
    ]
    assert lines.starting(LOGGER, None) == []  # nothing goes on past it
    assert lines.starting("nothing begins so", None) == []


def test_a_class_outline_gives_no_lines_and_a_changed_file_only_its_own():
    outline = "class Box:\n    def area(self) ...\n    def fill(self) ..."
    counts = counted_lines([(1, 9, outline), (2, 3, "    def area(self):\n        return 1")])
    assert counts == Counter({"def area(self):": 1, "return 1": 1})  # `ret` is too short
    first = lines_of(a="alpha = compute(1)\nbeta = compute(2)\n", b="alpha = compute(1)\n")
    second = first.updated({"a": ("h2", Counter({"gamma = compute(3)": 1})), "b": None})
    assert [c.text for c in second.starting("gamma", None)] == ["gamma = compute(3)"]
    assert second.starting("alpha", None) == [] and second.starting("beta", None) == []
    assert second.sorted == ["gamma = compute(3)"]
    # the first is left as it was: a reader on another thread holds it
    assert [c.count for c in first.starting("alpha", None)] == [2]


class Letters:
    """A tokenizer whose tokens are single bytes: token id = byte value."""

    def __call__(self, text: bytes) -> list[int]:
        return list(text)


def apply(source: LineSource, line: bytes, ahead: bytes = b"") -> np.ndarray:
    logits = np.zeros(256, dtype=np.float32)
    source.apply(logits, Place(line, ahead, []))
    return logits


def test_the_line_most_written_is_followed_to_its_end_when_it_is_likely_the_one():
    source = LineSource([("total = price * qty", 8), ("total = price + tax", 1)], Letters())
    first = apply(source, b"    total = pr")
    assert source.line == b"total = price * qty" and source.sure >= LINE_SURE
    assert np.argmax(first) == ord("i") and np.count_nonzero(first) == 1
    assert np.argmax(apply(source, b"    total = price ")) == ord("*")  # not `+`
    assert np.argmax(apply(source, b"    total = price * qty")) == ord("\n")  # its end
    # the text left it (the model wrote `+`): done for good
    assert not np.any(apply(source, b"    total = price +"))
    assert not np.any(apply(source, b"    total = price "))
    assert LINE_WEIGHT < 0.5  # a confident model can still override it (tests/test_steering.py)


def test_a_line_unlikely_to_be_the_one_steers_nothing():
    # two characters typed, and the lines that begin so disagree: a guess
    lines = [("total = price * qty", 1), ("tokens = []", 1), ("", 30)]
    source = LineSource(lines, Letters())
    assert not np.any(apply(source, b"    to"))
    assert source.sure < LINE_SURE and source.done
    assert line_odds(1, 1 / 32, 2) < 0.01 < LINE_SURE < line_odds(4, 1.0, 20)
    # what healing backed up must still be spelled: a line that does not go on so is no fit
    healed = LineSource([("total = price * qty", 5)], Letters())
    assert not np.any(apply(healed, b"    total = ", b"x")) and healed.line is None
