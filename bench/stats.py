"""Small helpers shared by the benchmark scripts."""

from __future__ import annotations


def percentile(values, p: float) -> float:
    """The p-th percentile by nearest rank (NaN for no values); None values are ignored."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]
