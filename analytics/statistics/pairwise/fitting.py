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
from scipy import optimize, sparse, special
from scipy.sparse.csgraph import connected_components

TieModel = Literal["half", "davidson"]
OUTCOMES = ("a", "b", "tie")
"""The outcomes a fit counts, in the order of a count table's last axis."""


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


def fit(model: Design, totals: np.ndarray, *, penalised: bool = False) -> np.ndarray:
    """The parameters for one table of totals (pairs × 3): the maximum-likelihood ones, or
    with ``penalised`` Firth's bias-reduced ones (``penalty_gradient``), which exist even when a
    system won or lost every comparison."""
    if penalised:
        return newton_rounds(model, totals[None], _start(model, totals), penalised=True).theta[0]
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


SHIFT = 1e-5
"""The half-width of the central differences that give the penalty's gradient."""


def penalty_gradient(theta: np.ndarray, model: Design, totals: np.ndarray) -> np.ndarray:
    """Firth's (1993) bias reduction, per round: the gradient of the penalty ½·log det I(θ)
    that the log-likelihood gains (Jeffreys' prior, since both tie models are exponential
    families in their canonical parameters, so that I is the negated Hessian whatever the
    outcomes), as in R's ``BTm(br = TRUE)`` (brglm): ½·tr(I⁻¹ ∂I/∂θ_r). With ties as half
    a win it is Σ h_i (½ − p_i) x_i, h the leverages (``_leverages``); with Davidson's,
    ∂I/∂θ_r by central differences. The pseudo-inverse leaves alone a system a round never
    compared."""
    if model.ties == "half":
        leverage, p = _leverages(theta, model, totals)
        return np.asarray((leverage * (0.5 - p)) @ model.x)
    information = -derivatives(theta, model, totals)[2]
    inverse = np.linalg.pinv(information, hermitian=True)
    gradient = np.empty_like(theta)
    for r in range(theta.shape[1]):
        shift = np.zeros(theta.shape[1])
        shift[r] = SHIFT
        upper = derivatives(theta + shift, model, totals)[2]
        lower = derivatives(theta - shift, model, totals)[2]
        gradient[:, r] = 0.5 * np.einsum("kij,kji->k", inverse, (lower - upper) / (2 * SHIFT))
    return gradient


def _leverages(
    theta: np.ndarray, model: Design, totals: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Ties as half a win, per round and pair: the leverage h = w·xᵀI⁻¹x (w = n·p(1 − p),
    the pair's weight in I = XᵀWX) and p, the chance the first side wins."""
    x = model.x
    p = special.expit(theta[:, : x.shape[1]] @ x.T)
    weight = totals.sum(axis=-1) * p * (1 - p)
    inverse = np.linalg.pinv(_weighted_outer(model, weight), hermitian=True)
    return weight * (np.matmul(x, inverse) * x).sum(axis=-1), p


def _penalised_newton(
    theta: np.ndarray,
    model: Design,
    totals: np.ndarray,
    now: tuple[np.ndarray, ...],
    scoring: np.ndarray,
) -> np.ndarray:
    """With ties as half a win, brglm's step: Fisher scoring of the modified score with the
    information of the pseudo-data (n + h votes a pair, h its leverage), which damps the
    overshoot of plain scoring. With Davidson's ties: Newton's step on the penalised
    likelihood, the penalty's Hessian by central differences of its gradient; scoring's
    step (``scoring``) where Newton's would not climb."""
    if model.ties == "half":
        leverage, p = _leverages(theta, model, totals)
        pseudo = _weighted_outer(model, (totals.sum(axis=-1) + leverage) * p * (1 - p))
        ridge = 1e-9 * np.eye(model.width)
        return np.asarray(np.linalg.solve(pseudo + ridge, now[1][..., None])[..., 0])
    width = theta.shape[1]
    curvature = np.empty((len(theta), width, width))
    for r in range(width):
        shift = np.zeros(width)
        shift[r] = SHIFT
        upper = penalty_gradient(theta + shift, model, totals)
        lower = penalty_gradient(theta - shift, model, totals)
        curvature[:, :, r] = (upper - lower) / (2 * SHIFT)
    hessian = now[2] + (curvature + curvature.transpose(0, 2, 1)) / 2
    with np.errstate(all="ignore"):
        newton = -np.linalg.solve(hessian - 1e-9 * np.eye(width), now[1][..., None])[..., 0]
    # an ascent direction of a concave model, else scoring's
    climbs = np.isfinite(newton).all(axis=1) & (np.linalg.eigvalsh(hessian).max(axis=1) < 0)
    return np.where(climbs[:, None], newton, scoring)


@dataclass(frozen=True)
class Rounds:
    """Fits of many count tables: every parameter, ±∞ where a round's estimate is infinite."""

    theta: np.ndarray
    converged: np.ndarray
    """Per round: whether its estimate is finite."""
    loose: np.ndarray
    """Rounds × width: a parameter a round without a finite estimate leaves undetermined
    (the likelihood rises as it goes either way): it counts against both ends."""


def newton_rounds(
    model: Design,
    totals: np.ndarray,
    start: np.ndarray,
    *,
    iterations: int = 60,
    penalised: bool = False,
) -> Rounds:
    """Fits of many count tables (rounds × pairs × 3) at once, each by Newton steps from
    ``start`` (the fit of all the data), a step at most 2 log-units long (with
    ``penalised``, Newton's on Firth's penalised likelihood, ``_penalised_newton``, halved
    while it does worse: ``worse``). A round has converged when its step has shrunk to
    nothing; one that has not has no finite estimate,
    and ``limits`` says which of its parameters are ±∞ and which undetermined (``loose``,
    as is one that a round cannot identify); the rest keep their fitted values."""
    theta = np.tile(np.asarray(start, dtype=float), (len(totals), 1))
    active = np.ones(len(totals), dtype=bool)
    ridge = 1e-9 * np.eye(model.width)

    def score(theta: np.ndarray, totals: np.ndarray) -> tuple[np.ndarray, ...]:
        """The (penalised) log-likelihood, its gradient and the likelihood's Hessian."""
        loglik, gradient, hessian = derivatives(theta, model, totals)
        if penalised:
            # the null directions of a round's design add a constant log(ridge)
            loglik = loglik + 0.5 * np.linalg.slogdet(ridge - hessian)[1]
            gradient = gradient + penalty_gradient(theta, model, totals)
        return loglik, gradient, hessian

    def worse(trial: np.ndarray, table: np.ndarray, now: tuple[np.ndarray, ...]) -> np.ndarray:
        """A step may not lower the penalised likelihood; where that is flat to rounding,
        it must shorten the gradient."""
        after = score(trial, table)
        tolerance = 1e-12 * (1 + np.abs(now[0]))
        lower = after[0] < now[0] - tolerance
        flat = np.abs(after[0] - now[0]) <= tolerance
        return lower | (flat & (np.abs(after[1]).max(axis=1) >= np.abs(now[1]).max(axis=1)))

    for _ in range(iterations):
        if not active.any():
            break
        rows = np.flatnonzero(active)
        table = totals[rows]
        now = score(theta[rows], table)
        step = np.linalg.solve(ridge - now[2], now[1][..., None])[..., 0]
        if penalised:
            step = _penalised_newton(theta[rows], model, table, now, step)
        longest = np.abs(step).max(axis=1, keepdims=True)
        scale = np.minimum(1.0, 2.0 / np.maximum(longest, 1e-300))
        for _ in range(30 if penalised else 0):  # a likelihood's Newton steps need none
            failing = worse(theta[rows] + step * scale, table, now) & (longest[:, 0] >= 1e-9)
            if not failing.any():
                break
            scale[failing] /= 2
        theta[rows] += step * scale
        active[rows[longest[:, 0] < 1e-9]] = False
    loose = np.zeros_like(theta, dtype=bool)
    known: dict[tuple[bytes, bool], np.ndarray] = {}
    # a converged round whose observed pairs span every column fixes every parameter
    gram = _weighted_outer(model, (totals.sum(axis=-1) > 0).astype(float))
    smallest = np.linalg.eigvalsh(gram)[:, 0]
    for r in np.flatnonzero(active | (smallest < 1e-9)):
        key = ((totals[r] > 0).tobytes(), bool(active[r]))
        if key not in known:
            known[key] = (
                np.full(model.width, LOOSE)  # Firth's exists: a round that missed it
                if penalised and active[r]
                else limits(model, totals[r], limit=bool(active[r]))
            )
        codes = known[key]
        infinite = (codes == 1) | (codes == -1)
        theta[r, infinite] = codes[infinite] * np.inf
        loose[r] = codes == LOOSE
        theta[r, loose[r]] = np.nan
    return Rounds(theta, ~active, loose)


def comparisons(model: Design, totals: np.ndarray) -> np.ndarray:
    """The rows c of a table's observed outcomes, each against an outcome it beat: the
    likelihood never falls along a direction d with c·d ≥ 0 for every row (each observed
    outcome at least as likely relative to the others), and rises for ever when one row is
    strict. Ties as half: a first-side win (a tie counts for both) gives x, a second-side
    win −x. Davidson's, in (x, τ): a first-side win beats the second side (x, 0) and a tie
    (x/2, −1); a second-side win (−x, 0) and (−x/2, −1); a tie (x/2, 1) and (−x/2, 1)."""
    x = model.x
    first, second, ties = totals[:, 0] > 0, totals[:, 1] > 0, totals[:, 2] > 0
    if model.ties == "half":
        return np.vstack([x[first | ties], -x[second | ties]])

    def rows(selected: np.ndarray, half: float, tau: float) -> np.ndarray:
        return np.column_stack([half * x[selected], np.full(int(selected.sum()), tau)])

    return np.vstack(
        [
            rows(first, 1.0, 0.0), rows(first, 0.5, -1.0),
            rows(second, -1.0, 0.0), rows(second, -0.5, -1.0),
            rows(ties, 0.5, 1.0), rows(ties, -0.5, 1.0),
        ]
    )  # fmt: skip


def strict_rows(rows: np.ndarray) -> np.ndarray:
    """Which ``comparisons`` rows some direction of never-falling likelihood makes strict
    (the estimate is then infinite: Albert & Anderson 1984). One linear programme (after
    Konis 2007): over the cone c·d ≥ 0, maximise Σ min(1, c·d), which is positive for every
    row that any direction of the cone makes strict."""
    n, width = rows.shape
    if n == 0:
        return np.zeros(0, dtype=bool)
    found = optimize.linprog(
        np.concatenate([np.zeros(width), -np.ones(n)]),
        A_ub=np.hstack([-rows, np.eye(n)]),
        b_ub=np.zeros(n),
        bounds=[(-1e3, 1e3)] * width + [(0.0, 1.0)] * n,
        method="highs",
    )
    solved = found.x if found.status == 0 else np.zeros(width + n)
    return np.asarray(solved)[width:] > 0.5


LOOSE = 2
"""``limits``' code of a parameter left undetermined (beside 0: fixed, ±1: goes to ±∞)."""


def limits(model: Design, totals: np.ndarray, *, limit: bool) -> np.ndarray:
    """Per parameter of one table: 0 when the fit fixes it; ``LOOSE`` when it lies outside
    the span of the outcomes the table observed (a system no vote compared, γ when every
    pair was shown in one order). With ``limit`` (the table has no finite estimate) the
    ``comparisons`` some direction makes strict fix nothing, and a free parameter goes to
    +∞ (1) or −∞ (−1) when every direction that makes them all strict moves it that way,
    else is ``LOOSE`` (Davidson's τ goes to −∞ without ties, to +∞ with nothing else)."""
    rows = comparisons(model, totals)
    strict = strict_rows(rows) if limit else np.zeros(len(rows), dtype=bool)
    kept, certain = rows[~strict], rows[strict]
    rank = np.linalg.matrix_rank(kept) if len(kept) else 0
    codes = np.zeros(model.width, dtype=np.int64)
    if rank == model.width:  # the observed outcomes fix every parameter
        return codes
    for j in range(model.width):
        unit = np.zeros((1, model.width))
        unit[0, j] = 1.0
        if np.linalg.matrix_rank(np.vstack([kept, unit])) == rank:
            continue
        codes[j] = LOOSE
        if len(certain):
            reach = [
                optimize.linprog(
                    sign * unit[0],
                    A_ub=-certain,
                    b_ub=-np.ones(len(certain)),
                    A_eq=kept if len(kept) else None,
                    b_eq=np.zeros(len(kept)) if len(kept) else None,
                    bounds=[(-1e3, 1e3)] * model.width,
                    method="highs",
                )
                for sign in (1.0, -1.0)
            ]
            lowest, highest = (float(r.fun or 0.0) if r.status == 0 else 0.0 for r in reach)
            if lowest > 0:
                codes[j] = 1
            elif -highest < 0:
                codes[j] = -1
    return codes


@dataclass(frozen=True)
class Estimability:
    """Whether the maximum-likelihood estimate exists, and if not, why."""

    groups: tuple[tuple[str, ...], ...]
    """The systems that were compared with each other, directly or through others: one
    group when the comparison graph is connected; scores of different groups share no
    scale (the model is not identified)."""
    position: bool
    """Whether the shown-first term can be told apart from the systems (it cannot when
    every pair was always shown in one order)."""
    separated: bool
    """Whether the likelihood keeps rising along some direction (Albert & Anderson 1984):
    a system won or lost every comparison with the rest (Ford 1957), the system shown
    first won every vote; with Davidson's ties also no tie at all, every vote a tie, or a
    system that won or tied every comparison (its strength and ν grow together)."""

    @property
    def connected(self) -> bool:
        return len(self.groups) == 1


def estimability(battles: Battles, totals: np.ndarray, ties: TieModel) -> Estimability:
    """Checked before any fit: the comparison graph's groups, whether γ is identified, and
    separation (``strict_rows`` of its ``comparisons``)."""
    met = totals.sum(axis=1) > 0
    k = len(battles.systems)
    graph = sparse.csr_matrix(
        (np.ones(int(met.sum())), (battles.first[met], battles.second[met])), shape=(k, k)
    )
    parts, labels = connected_components(graph, directed=False)
    groups = tuple(
        tuple(s for s, label in zip(battles.systems, labels, strict=True) if label == part)
        for part in range(parts)
    )
    if parts > 1:
        return Estimability(groups, position=False, separated=False)
    model = design(battles, 0, ties)
    position = bool(np.linalg.matrix_rank(model.x[met]) == model.x.shape[1])
    if not position:
        model = design(battles, 0, ties, position=False)
    separated = bool(strict_rows(comparisons(model, totals)).any())
    return Estimability(groups, position, separated)


def win_order(battles: Battles, totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranks that need no model: a system is above another when it reaches it through wins
    (A beat B, B beat C; a tie counts both ways) and is not reached back. Rank = 1 + the
    systems above; the worst rank = the systems minus those below. When every system
    reaches every other (the maximum-likelihood estimate exists) all share 1 to k."""
    k = len(battles.systems)
    beats = np.eye(k, dtype=bool)
    won = totals[:, 0] + totals[:, 2] > 0
    lost = totals[:, 1] + totals[:, 2] > 0
    beats[battles.first[won], battles.second[won]] = True
    beats[battles.second[lost], battles.first[lost]] = True
    reach = beats
    for _ in range(k):
        reach = reach | ((reach.astype(int) @ reach.astype(int)) > 0)
    above = (reach.T & ~reach).sum(axis=1)
    below = (reach & ~reach.T).sum(axis=1)
    return 1 + above, k - below


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
