# Fixture values of tests/test_models_success.py: task success by GEE (geepack), binomial,
# logit link, exchangeable working correlation, robust standard errors, the dispersion fixed
# at 1 (scale.fix), iterated to convergence (epsilon 1e-12: geepack's default 1e-4 stops
# before the last digits settle). Two designs where statsmodels' moment estimate of the
# working correlation differs from geepack's: every participant two tasks, and one to four
# tasks each with the system varying within participants. Run once with Rscript from the
# repository's root; it writes the data to tests/fixtures/ and prints the values the test holds.
library(geepack)
options(digits = 15)
fit_one <- function(d, formula) {
  fit <- geeglm(formula, id = participant, data = d, family = binomial,
                corstr = "exchangeable", scale.fix = TRUE,
                control = geese.control(epsilon = 1e-12, maxit = 200))
  cat("alpha", fit$geese$alpha, "\ncoef", coef(fit), "\nse",
      summary(fit)$coefficients[, "Std.err"], "\n")
}
set.seed(2026)
n <- 26
two <- data.frame(participant = rep(sprintf("p%02d", 1:n), each = 2), task = rep(1:2, n))
shared <- rep(rnorm(n), each = 2)
two$success <- as.integer(runif(2 * n) < plogis(-0.2 + shared))
two$participant <- factor(two$participant, levels = unique(two$participant))
write.csv(two, "tests/fixtures/success_gee_two_tasks.csv", row.names = FALSE)
fit_one(two, success ~ 1)

n <- 40
sizes <- sample(1:4, n, replace = TRUE)
uneven <- data.frame(participant = rep(sprintf("q%02d", 1:n), sizes))
uneven$system <- ifelse(runif(nrow(uneven)) < 0.5, "a", "b")
shared <- rep(rnorm(n), sizes)
uneven$success <- as.integer(runif(nrow(uneven)) < plogis(-0.3 + 0.8 * (uneven$system == "b") + shared))
uneven$participant <- factor(uneven$participant, levels = unique(uneven$participant))
write.csv(uneven, "tests/fixtures/success_gee_unequal.csv", row.names = FALSE)
fit_one(uneven[uneven$system == "a", ], success ~ 1)
fit_one(uneven, success ~ system)
