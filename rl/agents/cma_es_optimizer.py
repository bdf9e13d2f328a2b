"""CMA-ES in numpy: ask for a population, tell it the losses, repeat (minimization).

Hansen 2016, "The CMA Evolution Strategy: A Tutorial", https://arxiv.org/abs/1604.00772
(equations and default constants of its Table 1 and Appendix A), with positive recombination
weights only (no "active" negative weights). The separable variant (`diagonal=True`) keeps only
the diagonal of C, with the covariance learning rates scaled by (n + 2) / 3: Ros & Hansen 2008,
https://doi.org/10.1007/978-3-540-87700-4_30; O(n) per sample and no eigendecomposition.

One generation:

    y_k = B D z_k, z_k ~ N(0, I)          x_k = m + sigma y_k            (ask, k = 1..lambda)
    <y>_w = sum_i w_i y_{i:lambda}          (the mu best, best first)     (tell)
    m     <- m + c_m sigma <y>_w
    p_s   <- (1 - c_s) p_s + sqrt(c_s (2 - c_s) mu_eff) C^(-1/2) <y>_w
    sigma <- sigma exp(c_s / d_s (|p_s| / E|N(0, I)| - 1))
    p_c   <- (1 - c_c) p_c + h_s sqrt(c_c (2 - c_c) mu_eff) <y>_w
    C     <- (1 + c_1 delta(h_s) - c_1 - c_mu) C + c_1 p_c p_c^T + c_mu sum_i w_i y_i y_i^T
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

import numpy as np


def recombination_weights(popsize: int) -> np.ndarray:
    """w_i = ln((lambda + 1) / 2) - ln i for i = 1..mu (mu = lambda // 2), normalized to sum 1
    (tutorial eq. 49 restricted to the positive weights)."""
    if popsize < 2:
        raise ValueError(f"CMA-ES needs a population of at least 2, got {popsize}")
    mu = popsize // 2
    raw = math.log((popsize + 1) / 2) - np.log(np.arange(1, mu + 1))
    return raw / raw.sum()


def expected_norm(n: int) -> float:
    """E|N(0, I_n)| ~= sqrt(n) (1 - 1/(4n) + 1/(21 n^2)) (tutorial, below eq. 44)."""
    return math.sqrt(n) * (1.0 - 1.0 / (4 * n) + 1.0 / (21 * n * n))


class CMAES:
    """(mu/mu_w, lambda)-CMA-ES minimizing a function of R^n: `ask()` the population [lambda, n],
    `tell(losses)` (lower is better); `mean` is the current best estimate."""

    def __init__(
        self,
        mean: np.ndarray,
        sigma: float,
        popsize: int,
        seed: int,
        diagonal: bool = False,
        mean_lr: float = 1.0,
    ) -> None:
        mean = np.asarray(mean, np.float64).reshape(-1)
        n = self.dimension = mean.size
        self.popsize = int(popsize)
        self.diagonal = bool(diagonal)
        self.mean_lr = float(mean_lr)
        self.weights = recombination_weights(self.popsize)
        self.mu = self.weights.size
        mu_eff = self.mu_eff = 1.0 / float(np.sum(self.weights**2))
        # Step-size control (tutorial eq. 55, Table 1).
        self.c_sigma = (mu_eff + 2.0) / (n + mu_eff + 5.0)
        self.d_sigma = (
            1.0 + 2.0 * max(0.0, math.sqrt((mu_eff - 1.0) / (n + 1.0)) - 1.0) + self.c_sigma
        )
        # Covariance adaptation (tutorial eqs. 56-58, alpha_cov = 2).
        self.c_c = (4.0 + mu_eff / n) / (n + 4.0 + 2.0 * mu_eff / n)
        c_1 = 2.0 / ((n + 1.3) ** 2 + mu_eff)
        c_mu = min(1.0 - c_1, 2.0 * (mu_eff - 2.0 + 1.0 / mu_eff) / ((n + 2.0) ** 2 + mu_eff))
        if self.diagonal:  # sep-CMA-ES: n^2 / n as many parameters learn faster
            scale = min((n + 2.0) / 3.0, 1.0 / (c_1 + c_mu))
            c_1, c_mu = c_1 * scale, c_mu * scale
        self.c_1, self.c_mu = c_1, c_mu
        self.chi_n = expected_norm(n)

        self.rng = np.random.default_rng(seed)
        self.mean = mean.copy()
        self.sigma = float(sigma)
        self.generation = 0
        self.p_sigma = np.zeros(n)
        self.p_c = np.zeros(n)
        self.cov = np.ones(n) if self.diagonal else np.eye(n)  # diagonal: C's diagonal
        self.eigvecs = np.zeros((0, 0)) if self.diagonal else np.eye(n)  # B (diagonal: I)
        self.eigvals_sqrt = np.ones(n)  # D: C = B diag(D^2) B^T
        self.population_y = np.zeros((0, n))  # y_k of the pending population (0 rows: none)

    # ------------------------------------------------------------------ ask / tell
    def ask(self) -> np.ndarray:
        """Samples a new population x_k = m + sigma B D z_k, [lambda, n]; remembers y_k."""
        z = self.rng.standard_normal((self.popsize, self.dimension))
        y = z * self.eigvals_sqrt
        if not self.diagonal:
            y = y @ self.eigvecs.T
        self.population_y = y
        return self.mean + self.sigma * y

    @property
    def pending(self) -> bool:
        return self.population_y.shape[0] > 0  # asked for and not yet told

    def tell(self, losses: np.ndarray) -> None:
        """Updates mean, sigma, paths and C from the losses of the pending population."""
        losses = np.asarray(losses, np.float64).reshape(-1)
        if not self.pending:
            raise RuntimeError("tell() without a pending population: call ask() first")
        if losses.shape != (self.popsize,):
            raise ValueError(f"tell() needs {self.popsize} losses, got {losses.shape}")
        if not np.all(np.isfinite(losses)):
            raise ValueError(f"tell() got non-finite losses: {losses}")
        n = self.dimension
        # Stable sort: ties keep the population order, so results do not depend on the sort.
        best = np.argsort(losses, kind="stable")[: self.mu]
        y_best = self.population_y[best]  # [mu, n], best first
        y_w = self.weights @ y_best  # <y>_w
        self.mean = self.mean + self.mean_lr * self.sigma * y_w

        # C^(-1/2) <y>_w = B D^-1 B^T <y>_w
        if self.diagonal:
            c_inv_sqrt_y = y_w / self.eigvals_sqrt
        else:
            c_inv_sqrt_y = self.eigvecs @ ((self.eigvecs.T @ y_w) / self.eigvals_sqrt)
        self.p_sigma = (1.0 - self.c_sigma) * self.p_sigma + math.sqrt(
            self.c_sigma * (2.0 - self.c_sigma) * self.mu_eff
        ) * c_inv_sqrt_y
        norm_p_sigma = float(np.linalg.norm(self.p_sigma))
        self.sigma *= math.exp((self.c_sigma / self.d_sigma) * (norm_p_sigma / self.chi_n - 1.0))

        # Stall the rank-one update while p_sigma is long (right after a big step-size change).
        correction = math.sqrt(1.0 - (1.0 - self.c_sigma) ** (2 * (self.generation + 1)))
        h_sigma = norm_p_sigma / correction < (1.4 + 2.0 / (n + 1.0)) * self.chi_n
        self.p_c = (1.0 - self.c_c) * self.p_c
        if h_sigma:
            self.p_c += math.sqrt(self.c_c * (2.0 - self.c_c) * self.mu_eff) * y_w
        delta = 0.0 if h_sigma else self.c_c * (2.0 - self.c_c)

        decay = 1.0 + self.c_1 * delta - self.c_1 - self.c_mu  # sum(w) = 1
        if self.diagonal:
            rank_mu = self.weights @ (y_best**2)
            self.cov = decay * self.cov + self.c_1 * self.p_c**2 + self.c_mu * rank_mu
            self.eigvals_sqrt = np.sqrt(np.maximum(self.cov, 1e-300))
        else:
            rank_mu = (y_best * self.weights[:, None]).T @ y_best
            cov = decay * self.cov + self.c_1 * np.outer(self.p_c, self.p_c) + self.c_mu * rank_mu
            self.cov = (cov + cov.T) / 2.0  # exact symmetry for eigh
            eigvals, self.eigvecs = np.linalg.eigh(self.cov)
            self.eigvals_sqrt = np.sqrt(np.maximum(eigvals, 1e-300))
        self.generation += 1
        self.population_y = np.zeros((0, n))

    @property
    def axis_ratio(self) -> float:
        """sqrt(largest / smallest eigenvalue of C): how elongated the search distribution is."""
        return float(self.eigvals_sqrt.max() / self.eigvals_sqrt.min())

    # ------------------------------------------------------------------------- state
    ARRAYS = ("mean", "p_sigma", "p_c", "cov", "eigvecs", "eigvals_sqrt", "population_y")

    def state_dict(self) -> dict[str, np.ndarray]:
        """Everything needed to continue bit for bit, as plain numpy arrays (no pickle)."""
        return {
            **{name: getattr(self, name).copy() for name in self.ARRAYS},
            "sigma": np.array(self.sigma),
            "generation": np.array(self.generation, np.int64),
            "rng_state": np.array(json.dumps(self.rng.bit_generator.state)),
        }

    def load_state_dict(self, state: Mapping[str, np.ndarray]) -> None:
        n = self.dimension
        cov_shape = (n,) if self.diagonal else (n, n)
        if state["mean"].shape != (n,) or state["cov"].shape != cov_shape:
            raise ValueError(
                f"checkpoint holds a CMA-ES of mean {state['mean'].shape} and C "
                f"{state['cov'].shape}; this one has ({n},) and {cov_shape}"
            )
        rng_state = json.loads(str(state["rng_state"]))
        if rng_state.get("bit_generator") != type(self.rng.bit_generator).__name__:
            raise ValueError(f"checkpoint CMA-ES RNG is {rng_state.get('bit_generator')!r}")
        for name in self.ARRAYS:
            setattr(self, name, np.array(state[name], np.float64))
        self.population_y = self.population_y.reshape(-1, n)
        self.sigma = float(state["sigma"])
        self.generation = int(state["generation"])
        self.rng.bit_generator.state = rng_state
