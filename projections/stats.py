"""Pearson's chi-square test of a die's fairness, without scipy.

The p-value of a chi-square statistic ``x`` with ``k`` degrees of freedom is the regularised
upper incomplete gamma function ``Q(k/2, x/2)``, computed here by its series (``x < a + 1``) or
its continued fraction (Numerical Recipes, 6.2), accurate to ~1e-12 — plenty for a figure
shown to players.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

_EPS = 1e-15
_TINY = 1e-300
_ITERATIONS = 500


def upper_gamma_q(a: float, x: float) -> float:
    """The regularised upper incomplete gamma function Q(a, x) (a > 0, x >= 0)."""
    if a <= 0:
        raise ValueError("a must be positive")
    if x < 0:
        raise ValueError("x must not be negative")
    if x == 0:
        return 1.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        # Series for P(a, x); Q = 1 - P.
        term = total = 1.0 / a
        denominator = a
        for _ in range(_ITERATIONS):
            denominator += 1
            term *= x / denominator
            total += term
            if abs(term) < abs(total) * _EPS:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    # Continued fraction for Q (modified Lentz).
    b = x + 1 - a
    c = 1 / _TINY
    d = 1 / b
    h = d
    for i in range(1, _ITERATIONS):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < _EPS:
            break
    return min(1.0, math.exp(log_front) * h)


def chi_square(counts: Sequence[int]) -> tuple[float, float] | None:
    """(statistic, p-value) of ``counts`` against equal chances for every face; None for no
    rolls. Degrees of freedom: faces - 1 (5 for a d6)."""
    total = sum(counts)
    if total == 0 or len(counts) < 2:
        return None
    expected = total / len(counts)
    statistic = sum((n - expected) ** 2 / expected for n in counts)
    return statistic, upper_gamma_q((len(counts) - 1) / 2, statistic / 2)
