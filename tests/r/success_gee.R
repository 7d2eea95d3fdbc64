# Fixture values of tests/test_models_success.py: task success per system when every
# participant does three tasks, by GEE (geepack), binomial, logit link, exchangeable working
# correlation, robust (sandwich) standard errors; run once with Rscript, values copied into
# the test. The dispersion is fixed at 1 (scale.fix): a Bernoulli outcome has no free scale,
# and statsmodels' binomial GEE fixes it the same way.
library(geepack)
patterns <- list(
  alpha = c("111", "110", "111", "100", "111", "011", "111", "000", "110", "111"),
  beta = c("100", "000", "010", "110", "000", "001", "100", "000")
)
rows <- do.call(rbind, lapply(names(patterns), function(system) {
  do.call(rbind, lapply(seq_along(patterns[[system]]), function(i) {
    bits <- as.integer(strsplit(patterns[[system]][i], "")[[1]])
    data.frame(participant = sprintf("%s%02d", substr(system, 1, 1), i - 1),
               system = system, task = 1:3, success = bits)
  }))
}))
rows$participant <- factor(rows$participant, levels = unique(rows$participant))
options(digits = 15)
for (system in names(patterns)) {
  one <- rows[rows$system == system, ]
  fit <- geeglm(success ~ 1, id = participant, data = one, family = binomial,
                corstr = "exchangeable", scale.fix = TRUE)
  s <- summary(fit)
  est <- coef(fit)[1]; se <- s$coefficients[1, "Std.err"]
  z <- qnorm(0.975)
  cat(system, "logit", est, "se", se, "alpha", unlist(s$corr[1]),
      "rate", plogis(est), "low", plogis(est - z * se), "high", plogis(est + z * se), "\n")
}
fit <- geeglm(success ~ system, id = participant, data = rows, family = binomial,
              corstr = "exchangeable", scale.fix = TRUE)
print(summary(fit)$coefficients, digits = 15)
print(anova(fit), digits = 15)
cat("alpha", unlist(summary(fit)$corr[1]), "\n")
