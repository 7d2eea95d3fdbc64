# Fixture values for tests/test_pairwise_statistics.py: the decisive votes one pair needs
# for a two-sided exact binomial (sign) test at alpha 0.05 to reach power 0.8, the smallest
# n with that exact power, for the rate p at which the better system wins a decisive vote.
# Run once: Rscript tests/r/pairwise_sample_size.R (the tests never run R).
needed <- function(p, alpha = 0.05, power = 0.8) {
  for (n in 1:100000) {
    c <- qbinom(alpha / 2, n, 0.5)
    if (2 * pbinom(c, n, 0.5) > alpha) c <- c - 1
    if (c < 0) next
    reached <- pbinom(c, n, p) + pbinom(n - c - 1, n, p, lower.tail = FALSE)
    if (reached >= power) return(n)
  }
}
for (p in c(0.55, 0.6, 0.617, 0.661, 0.7, 0.8, 0.9, 1)) cat(p, needed(p), "\n")
# 0.55 786 / 0.6 199 / 0.617 145 / 0.661 74 / 0.7 49 / 0.8 20 / 0.9 12 / 1 6
