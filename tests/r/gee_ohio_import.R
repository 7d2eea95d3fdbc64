# Fixture values of tests/test_import_sessions.py: the Ohio children's wheeze data (geepack's
# `ohio`, tests/fixtures/gee_ohio.csv) as sessions: each child a participant, each age a task
# (a scenario), wheeze the task's success, the mother's smoking the "system" (0: shop-v0,
# 1: shop-v1). geepack's exchangeable GEE of resp ~ smoke (scale fixed at 1), and of
# resp ~ 1 within each group, as ozlab report fits success ~ system. Run once with Rscript
# from the repository's root; values copied into the test.
library(geepack)
ohio <- read.csv("tests/fixtures/gee_ohio.csv")
options(digits = 15)
for (s in 0:1) {
  one <- ohio[ohio$smoke == s, ]
  fit <- geeglm(resp ~ 1, id = id, data = one, family = binomial, corstr = "exchangeable",
                scale.fix = TRUE)
  est <- coef(fit)[1]; se <- summary(fit)$coefficients[1, "Std.err"]; z <- qnorm(0.975)
  cat("smoke", s, "rate", plogis(est), "low", plogis(est - z * se), "high",
      plogis(est + z * se), "\n")
}
fit <- geeglm(resp ~ smoke, id = id, data = ohio, family = binomial, corstr = "exchangeable",
              scale.fix = TRUE)
s <- summary(fit)
cat("log_or", coef(fit)[2], "se", s$coefficients[2, "Std.err"], "wald",
    s$coefficients[2, "Wald"], "p", s$coefficients[2, "Pr(>|W|)"], "alpha",
    unlist(s$corr[1]), "\n")
