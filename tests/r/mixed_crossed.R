# Fixture values of tests/test_models_mixed.py: a linear mixed model (lme4, REML) with crossed
# random intercepts for participants and scenarios, of scores from ozlab's synthetic study
# (analytics.data.synthetic, seed 3, 3 systems; tests/fixtures/crossed_*.csv hold one score
# per answer set). crossed_usability.csv: 160 sessions, the usability construct;
# crossed_boundary.csv: 60 sessions, task_completion, where the scenarios' variance is 0
# (a singular fit); crossed_participant_boundary.csv: eight participants in three scenarios,
# whose own variance is 0 (a singular fit). Run once with Rscript from the repository's root; values copied.
library(lme4)
options(digits = 15)
for (name in c("crossed_usability", "crossed_boundary", "crossed_participant_boundary")) {
  d <- read.csv(sprintf("tests/fixtures/%s.csv", name))
  fit <- lmer(score ~ system_id + (1 | participant_id) + (1 | scenario_id), data = d, REML = TRUE)
  cat(name, "\n")
  print(summary(fit)$coefficients, digits = 15)
  print(as.data.frame(VarCorr(fit)), digits = 15)
  cat("REML", REMLcrit(fit), "\n")
}
