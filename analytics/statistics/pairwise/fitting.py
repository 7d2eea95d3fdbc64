"""Bradley–Terry by maximum likelihood over counted battles, with a "shown first" term.

A vote between system i shown first and system j shown second has the linear predictor
η = β_i − β_j + γ: β is each system's log-strength (the anchor's fixed at 0) and γ the
advantage of being shown first. Two tie models:

- ``half``: a tie is half a win for each side (as Chatbot Arena counts them), so the
  likelihood is the binomial one, P(first wins) = 1 / (1 + e^−η), with wins + ties / 2 out
  of all votes of the pair;
- ``davidson``: Davidson's (1970) model with an order effect (Davidson & Beaver 1977),
  P(first) ∝ e^{η/2}, P(second) ∝ e^{−η/2}, P(tie) ∝ ν, ν = e^τ estimated.

A preference's strength may grade the vote (``graded``): a "slightly" preference counts
``slightly`` of a win (0.75 by default) and the rest for the other side, a fractional outcome
in the same binomial likelihood (R's ``glm(family = quasibinomial)`` of the share won gives
the same estimates). In the counts it is ``2·slightly − 1`` of a win and ``2·(1 − slightly)``
of a tie, since a tie is half a win for each side.

Votes are first counted per rater and ordered pair (``Battles``), so that a fit costs the
number of pairs, not of votes, and a bootstrap round is the same counts weighted by how
often each rater was drawn. The reported fit is made by scipy's trust-region Newton
(``scipy.optimize.minimize(method="trust-exact")``); bootstrap rounds are fitted together,
all at once, by Newton steps from that fit (``newton_rounds``): a thousand library calls
would cost seconds each report, the batched steps a fraction.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
import pandas as pd
from scipy import optimize, sparse
from scipy.sparse.csgraph import connected_components

TieModel = Literal["half", "davidson"]
OUTCOMES = ("a", "b", "tie")
"""The outcomes a fit counts, in the order of a count table's last axis."""
BOUND = 20.0
"""Log-strengths beyond ±20 (±3,474 Elo points) are taken as unbounded: a system that won
or lost every comparison in a bootstrap round has no finite estimate in that round."""


@dataclass(frozen=True)
class Battles:
    """Votes counted per rater and ordered pair (system shown first, system shown second)."""

    systems: tuple[str, ...]
    raters: tuple[str, ...]
    first: np.ndarray
    """Per ordered pair: the index of the system shown first."""
    second: np.ndarray
    counts: sparse.csr_matrix
    """Raters × (pairs · 3): first wins, second wins, ties of each pair, per rater, as the
    likelihood counts them (a graded "slightly" vote in parts of a win and of a tie)."""
    given: np.ndarray | None = None
    """Pairs × 3: the votes as given (a "slightly" one a whole win), when they differ from
    ``counts``' totals."""

    @property
    def pairs(self) -> int:
        return len(self.first)

    def totals(self) -> np.ndarray:
        """Pairs × 3 counts over every rater."""
        return np.asarray(self.counts.sum(axis=0)).reshape(self.pairs, 3)

    def as_given(self) -> np.ndarray:
        """Pairs × 3: wins, losses and ties as voted, whatever their strength."""
        return self.given if self.given is not None else self.totals()


def count_battles(
    votes: pd.DataFrame, systems: tuple[str, ...], *, slightly: float | None = None
) -> Battles:
    """``votes`` (columns rater, system_a, system_b, winner in ``OUTCOMES``; with
    ``slightly``, strength) as ``Battles``; ``systems`` names every system that appears, in
    the order scores are reported. ``slightly``: the share of a win a "slightly" preference
    counts (None: a win is a win, whatever its strength)."""
    index = {name: k for k, name in enumerate(systems)}
    first = votes["system_a"].map(index).to_numpy(dtype=np.int64)
    second = votes["system_b"].map(index).to_numpy(dtype=np.int64)
    outcome = votes["winner"].map({o: k for k, o in enumerate(OUTCOMES)}).to_numpy(np.int64)
    rater_codes, raters = pd.factorize(votes["rater"].astype(str), sort=True)
    pair_keys, pair_codes = np.unique(first * len(systems) + second, return_inverse=True)
    column = pair_codes.reshape(-1) * 3 + outcome
    shape = (len(raters), len(pair_keys) * 3)
    counts = sparse.csr_matrix((np.ones(len(votes)), (rater_codes, column)), shape=shape)
    counts.sum_duplicates()
    given = None
    if slightly is not None:
        graded = (votes["strength"].astype(object) == "slightly").to_numpy(bool) & (outcome < 2)
        weight = np.where(graded, 2 * slightly - 1, 1.0)
        tie_column = pair_codes.reshape(-1)[graded] * 3 + 2
        given = np.asarray(counts.sum(axis=0)).reshape(len(pair_keys), 3)
        counts = sparse.csr_matrix(
            (
                np.concatenate([weight, np.full(len(tie_column), 2 * (1 - slightly))]),
                (
                    np.concatenate([rater_codes, rater_codes[graded]]),
                    np.concatenate([column, tie_column]),
                ),
            ),
            shape=shape,
        )
        counts.sum_duplicates()
    return Battles(
        systems=systems,
        raters=tuple(str(r) for r in raters),
        first=pair_keys // len(systems),
        second=pair_keys % len(systems),
        counts=counts,
        given=given,
    )


@dataclass(frozen=True)
class Design:
    """The model's design: which columns are free (every system but the anchor, then γ)."""

    x: np.ndarray
    """Pairs × (systems − 1 + 1): +1 for the system shown first, −1 for the one shown
    second, the anchor's column left out, and a last column of ones (shown first) unless
    the model has no position term."""
    anchor: int
    ties: TieModel
    position: bool = True

    @cached_property
    def outer(self) -> np.ndarray:
        """Pairs × columns²: each pair's xxᵀ flattened, so that every round's Xᵀ diag(w) X
        is one matrix product (weights × ``outer``)."""
        return (self.x[:, :, None] * self.x[:, None, :]).reshape(len(self.x), -1)

    @property
    def width(self) -> int:
        """Parameters: the free log-strengths, γ, and τ for Davidson's model."""
        return self.x.shape[1] + (1 if self.ties == "davidson" else 0)


def design(battles: Battles, anchor: int, ties: TieModel, *, position: bool = True) -> Design:
    systems = len(battles.systems)
    x = np.zeros((battles.pairs, systems + 1))
    rows = np.arange(battles.pairs)
    x[rows, battles.first] += 1.0
    x[rows, battles.second] -= 1.0
    x[:, systems] = 1.0
    x = np.delete(x, anchor, axis=1)
    return Design(x if position else x[:, :-1], anchor, ties, position)


def derivatives(
    theta: np.ndarray, model: Design, totals: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Log-likelihood, gradient and Hessian of ``rounds`` fits at once: ``theta`` is
    rounds × width, ``totals`` rounds × pairs × 3 (first wins, second wins, ties)."""
    x = model.x
    eta = theta[:, : x.shape[1]] @ x.T
    first, second, ties = totals[..., 0], totals[..., 1], totals[..., 2]
    n = first + second + ties
    if model.ties == "half":
        wins = first + ties / 2
        p = 1.0 / (1.0 + np.exp(-eta))
        loglik = -(wins * np.logaddexp(0.0, -eta) + (n - wins) * np.logaddexp(0.0, eta)).sum(1)
        gradient = (wins - n * p) @ x
        hessian = -_weighted_outer(model, n * p * (1 - p))
        return loglik, gradient, hessian
    u = eta / 2
    tau = theta[:, -1:]
    log_z = np.logaddexp(np.logaddexp(u, -u), tau)
    pa, pb, pt = np.exp(u - log_z), np.exp(-u - log_z), np.exp(tau - log_z)
    loglik = ((first - second) * u + ties * tau - n * log_z).sum(1)
    score_u = (first - second) - n * (pa - pb)
    gradient = np.concatenate([(score_u / 2) @ x, (ties - n * pt).sum(1, keepdims=True)], axis=1)
    h_uu = -n * ((pa + pb) - (pa - pb) ** 2)
    h_ut = n * (pa - pb) * pt
    h_tt = -(n * pt * (1 - pt)).sum(1)
    rounds, width = theta.shape
    hessian = np.empty((rounds, width, width))
    hessian[:, :-1, :-1] = _weighted_outer(model, h_uu / 4)
    hessian[:, :-1, -1] = hessian[:, -1, :-1] = (h_ut / 2) @ x
    hessian[:, -1, -1] = h_tt
    return loglik, gradient, hessian


def _weighted_outer(model: Design, weights: np.ndarray) -> np.ndarray:
    """Xᵀ diag(w) X for every round's weights w (rounds × pairs)."""
    columns = model.x.shape[1]
    return (weights @ model.outer).reshape(len(weights), columns, columns)


def _start(model: Design, totals: np.ndarray) -> np.ndarray:
    theta = np.zeros(model.width)
    if model.ties == "davidson":
        share = totals[:, 2].sum() / max(totals.sum(), 1.0)
        share = min(max(share, 1e-3), 1 - 1e-3)
        theta[-1] = np.log(2 * share / (1 - share))  # ν for equal strengths
    return theta


def fit(model: Design, totals: np.ndarray) -> np.ndarray:
    """The maximum-likelihood parameters for one table of totals (pairs × 3)."""
    table = totals[None]

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        loglik, gradient, _ = derivatives(theta[None], model, table)
        return -float(loglik[0]), -gradient[0]

    def hessian(theta: np.ndarray) -> np.ndarray:
        return -derivatives(theta[None], model, table)[2][0]

    found = optimize.minimize(
        objective,
        _start(model, totals),
        jac=True,
        hess=hessian,
        method="trust-exact",
        options={"gtol": 1e-10, "maxiter": 500},
    )
    return np.asarray(found.x)


def newton_rounds(
    model: Design, totals: np.ndarray, start: np.ndarray, *, iterations: int = 60
) -> tuple[np.ndarray, np.ndarray]:
    """Fits of many count tables (rounds × pairs × 3) at once, each by Newton steps from
    ``start`` (the fit of all the data), a step at most 2 log-units long; the parameters
    (clipped to ±``BOUND``) and whether each round converged."""
    theta = np.tile(start, (len(totals), 1))
    active = np.ones(len(totals), dtype=bool)
    ridge = 1e-9 * np.eye(model.width)
    for _ in range(iterations):
        if not active.any():
            break
        _, gradient, hessian = derivatives(theta[active], model, totals[active])
        step = np.linalg.solve(ridge - hessian, gradient[..., None])[..., 0]
        longest = np.abs(step).max(axis=1, keepdims=True)
        step *= np.minimum(1.0, 2.0 / np.maximum(longest, 1e-300))
        theta[active] = np.clip(theta[active] + step, -2 * BOUND, 2 * BOUND)
        done = longest[:, 0] < 1e-9
        escaped = np.abs(theta[active]).max(axis=1) >= 2 * BOUND
        active[np.flatnonzero(active)[done | escaped]] = False
    converged = ~active & (np.abs(theta).max(axis=1) < 2 * BOUND)
    return np.clip(theta, -BOUND, BOUND), converged


def identified(battles: Battles, totals: np.ndarray) -> bool:
    """Whether the maximum-likelihood estimate exists (Ford 1957): every system reaches
    every other through wins (a tie counts both ways)."""
    k = len(battles.systems)
    beats = np.zeros((k, k), dtype=bool)
    won = totals[:, 0] + totals[:, 2] > 0
    lost = totals[:, 1] + totals[:, 2] > 0
    beats[battles.first[won], battles.second[won]] = True
    beats[battles.second[lost], battles.first[lost]] = True
    parts, _ = connected_components(sparse.csr_matrix(beats), directed=True, connection="strong")
    return bool(parts == 1)


def rater_scores(battles: Battles, model: Design, theta: np.ndarray) -> np.ndarray:
    """Each rater's contribution to the score (gradient) at ``theta``: raters × width."""
    counts = battles.counts
    first, second, ties = counts[:, 0::3], counts[:, 1::3], counts[:, 2::3]
    n = first + second + ties
    x = model.x
    eta = x @ theta[: x.shape[1]]
    if model.ties == "half":
        p = 1.0 / (1.0 + np.exp(-eta))
        return np.asarray((first + ties * 0.5) @ x - n @ (p[:, None] * x))
    u, tau = eta / 2, theta[-1]
    log_z = np.logaddexp(np.logaddexp(u, -u), tau)
    pa, pb, pt = np.exp(u - log_z), np.exp(-u - log_z), np.exp(tau - log_z)
    score_u = np.asarray((first - second) @ x - n @ ((pa - pb)[:, None] * x)) / 2
    score_t = np.asarray(ties.sum(axis=1)).reshape(-1) - np.asarray(n @ pt).reshape(-1)
    return np.column_stack([score_u, score_t])


def covariances(
    battles: Battles, model: Design, theta: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The model-based covariance (the inverse observed information) and the sandwich one
    clustered by rater, H⁻¹ (Σ_r g_r g_rᵀ) H⁻¹, without a small-sample factor (as geepack
    and R's ``sandwich::vcovCL(type = "HC0", cadjust = FALSE)``)."""
    information = -derivatives(theta[None], model, battles.totals()[None])[2][0]
    inverse = np.linalg.pinv(information)
    scores = rater_scores(battles, model, theta)
    return inverse, inverse @ (scores.T @ scores) @ inverse
