# Fixture values of tests/test_effect_intervals.py: 95% intervals of the effect sizes of the
# report's tests, run once with Rscript, values copied into the test.
library(boot)
options(digits = 15)
z <- qnorm(0.975)
# Mann-Whitney: rank-biserial r with the Fisher z interval, as effectsize::rank_biserial
# (SE of atanh(r) = sqrt((n1 + n2 + 1) / (3 n1 n2))). Tortoise and hare, 6 and 6.
order <- strsplit("THHHHHTTTTTH", "")[[1]]
hare <- which(order == "H"); tortoise <- which(order == "T")
u <- wilcox.test(hare, tortoise)$statistic
r <- 2 * u / (6 * 6) - 1
se <- sqrt((6 + 6 + 1) / (3 * 6 * 6))
cat("mwu r", r, "low", tanh(atanh(r) - z * se), "high", tanh(atanh(r) + z * se), "\n")
# Wilcoxon signed-rank: matched-pairs rank-biserial r, SE of atanh(r) =
# sqrt((2 nd^3 + 3 nd^2 + nd) / 6) / (nd (nd + 1) / 2), nd the non-zero differences.
x <- c(1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30)
y <- c(0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29)
v <- wilcox.test(x, y, paired = TRUE)$statistic
nd <- sum(x != y); maxw <- nd * (nd + 1) / 2
r <- (v - (maxw - v)) / maxw
se <- sqrt((2 * nd^3 + 3 * nd^2 + nd) / 6) / maxw
cat("wilcoxon r", r, "low", tanh(atanh(r) - z * se), "high", tanh(atanh(r) + z * se), "\n")
# Fisher's exact test, 2 x 2: conditional MLE odds ratio and its exact interval (twins).
f <- fisher.test(matrix(c(2, 15, 10, 3), 2))
cat("fisher or", f$estimate, "low", f$conf.int[1], "high", f$conf.int[2], "\n")
# McNemar: matched-pairs odds ratio b / c, exact (Clopper-Pearson) interval of b / (b + c)
# turned into odds. Discordant pairs 9 and 2.
b <- 9; c <- 2
ci <- binom.test(b, b + c)$conf.int
cat("mcnemar or", b / c, "low", ci[1] / (1 - ci[1]), "high", ci[2] / (1 - ci[2]), "\n")
# Percentile bootstrap over participants, 20,000 resamples (the reference; ozlab's own
# resamples differ, so its interval agrees within Monte Carlo error).
set.seed(1)
B <- 20000
muco <- data.frame(
  v = c(2.9, 3.0, 2.5, 2.6, 3.2, 3.8, 2.7, 4.0, 2.4, 2.8, 3.4, 3.7, 2.2, 2.0),
  g = factor(rep(c("normal", "obstructive", "asbestosis"), c(5, 4, 5))))
eps <- function(d, i) { k <- kruskal.test(d$v[i], d$g[i])$statistic; k / (nrow(d) - 1) }
b <- boot(muco, eps, R = B, strata = muco$g)
cat("kruskal eps2", b$t0, "low", quantile(b$t, 0.025), "high", quantile(b$t, 0.975), "\n")
RoundingTimes <- matrix(c(5.40, 5.50, 5.55, 5.85, 5.70, 5.75, 5.20, 5.60, 5.50, 5.55, 5.50,
  5.40, 5.90, 5.85, 5.70, 5.45, 5.55, 5.60, 5.40, 5.40, 5.35, 5.45, 5.50, 5.35, 5.25, 5.15,
  5.00, 5.85, 5.80, 5.70, 5.25, 5.20, 5.10, 5.65, 5.55, 5.45, 5.60, 5.35, 5.45, 5.05, 5.00,
  4.95, 5.50, 5.50, 5.40, 5.45, 5.55, 5.50, 5.55, 5.55, 5.35, 5.45, 5.50, 5.55, 5.50, 5.45,
  5.25, 5.65, 5.60, 5.40, 5.70, 5.65, 5.55, 6.30, 6.30, 6.25), nrow = 22, byrow = TRUE)
w <- function(d, i) friedman.test(d[i, ])$statistic / (length(i) * (ncol(d) - 1))
b <- boot(RoundingTimes, w, R = B)
cat("friedman w", b$t0, "low", quantile(b$t, 0.025), "high", quantile(b$t, 0.975), "\n")
# Cramér's V of Pearson's chi-squared (R's chisq.test example, Agresti 2007 p. 39: party
# identification by gender), the parties as systems, resampled within each party.
M <- rbind(F = c(762, 327, 468), M = c(484, 239, 477))
long <- data.frame(
  party = factor(rep(rep(c("Democrat", "Independent", "Republican"), each = 2), c(M))),
  gender = factor(rep(rep(c("F", "M"), 3), c(M))))
v <- function(d, i) {
  t <- table(d$party[i], d$gender[i])
  sqrt(suppressWarnings(chisq.test(t, correct = FALSE))$statistic / (length(i) * (min(dim(t)) - 1)))
}
b <- boot(long, v, R = B, strata = long$party)
cat("chisq v", b$t0, "low", quantile(b$t, 0.025), "high", quantile(b$t, 0.975), "\n")
# Cochran's Q: 12 participants' yes (1) / no (0) with three systems, eta^2_Q = Q / (n (k - 1)).
yes <- matrix(c(1,1,0, 1,0,0, 1,1,1, 0,0,0, 1,0,0, 1,1,0, 1,0,1, 1,1,0, 0,1,0, 1,0,0,
                1,1,0, 1,0,0), ncol = 3, byrow = TRUE)
q <- function(d, i) {
  d <- d[i, ]; k <- ncol(d); cols <- colSums(d); rows <- rowSums(d); n <- sum(d)
  (k - 1) * (k * sum(cols^2) - n^2) / (k * n - sum(rows^2)) / (nrow(d) * (k - 1))
}
b <- boot(yes, q, R = B)
cat("cochran eta2", b$t0, "low", quantile(b$t, 0.025), "high", quantile(b$t, 0.975), "\n")
# fisher.test's conditional interval, its own code with uniroot's tolerance tightened
# (fisher.test leaves uniroot at .Machine$double.eps^0.25: its ends are good to ~1e-4 only).
xt <- matrix(c(2, 15, 10, 3), 2)
m <- sum(xt[, 1]); n <- sum(xt[, 2]); k <- sum(xt[1, ]); x <- xt[1, 1]
lo <- max(0, k - n); hi <- min(k, m); support <- lo:hi
logdc <- dhyper(support, m, n, k, log = TRUE)
dnhyper <- function(ncp) { d <- logdc + log(ncp) * support; d <- exp(d - max(d)); d / sum(d) }
pnhyper <- function(q, ncp, upper.tail = FALSE) {
  if (upper.tail) sum(dnhyper(ncp)[support >= q]) else sum(dnhyper(ncp)[support <= q]) }
alpha <- 0.025; tol <- 1e-14
# on the log scale, so that the tolerance is relative
upper <- exp(uniroot(function(t) pnhyper(x, exp(t)) - alpha, c(-30, 30), tol = tol)$root)
lower <- exp(uniroot(function(t) pnhyper(x, exp(t), upper.tail = TRUE) - alpha, c(-30, 30), tol = tol)$root)
mle <- exp(uniroot(function(t) sum(support * dnhyper(exp(t))) - x, c(-30, 30), tol = tol)$root)
options(digits = 15); cat("fisher or", mle, "low", lower, "high", upper, "\n")
# Through ozlab import responses -> ozlab report (tests/test_effect_intervals.py): HMD's
# usefulness item (1-5) of 8 participants per system, ties: normal approximation. The study
# lists shop-v1 first, so the report's effect is shop-v1's over shop-v0's.
v0 <- c(2, 3, 3, 4, 2, 1, 3, 2); v1 <- c(4, 5, 3, 4, 5, 4, 3, 5)
w <- suppressWarnings(wilcox.test(v1, v0))
r <- 2 * w$statistic / (8 * 8) - 1
se <- sqrt((8 + 8 + 1) / (3 * 8 * 8))
cat("hmd U", w$statistic, "p", w$p.value, "r", r, "low", tanh(atanh(r) - z * se), "high",
    tanh(atanh(r) + z * se), "\n")
