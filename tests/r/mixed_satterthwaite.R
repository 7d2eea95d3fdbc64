# Fixture values of tests/test_models_mixed.py: Satterthwaite's degrees of freedom, t tests
# and t intervals of the fixed effects (lmerTest 3.1, which computes them from the REML
# deviance's Hessian in the variance parameters), for the models of tests/r/mixed_idial.R,
# tests/r/mixed_crossed.R and tests/r/mixed_crossed_import.R (tests/test_import_sessions.py).
# Run once with Rscript from the repository's root; values copied.
library(lmerTest)
options(digits = 15)
show <- function(name, fit) {
  s <- summary(fit, ddf = "Satterthwaite")$coefficients
  low <- s[, "Estimate"] - qt(0.975, s[, "df"]) * s[, "Std. Error"]
  high <- s[, "Estimate"] + qt(0.975, s[, "df"]) * s[, "Std. Error"]
  cat(name, "\n")
  print(cbind(s[, c("Estimate", "df", "t value", "Pr(>|t|)")], low, high), digits = 15)
}
answers <- read.csv("tests/fixtures/mixed_idial.csv")
sets <- aggregate(value ~ participant_id + system_id + scope, data = answers, FUN = mean)
when <- aggregate(answered_at ~ participant_id + scope, data = answers, FUN = min)
sets <- merge(sets, when)
sets <- sets[order(sets$participant_id, sets$answered_at), ]
sets$period <- factor(ave(sets$answered_at, sets$participant_id, FUN = rank))
previous <- ave(seq_len(nrow(sets)), sets$participant_id, FUN = function(i) c(NA, head(i, -1)))
sets$carry_v1 <- ifelse(is.na(previous), 0, as.integer(sets$system_id[previous] == "shop-v1"))
sets$system_id <- factor(sets$system_id, levels = c("shop-v0", "shop-v1"))
show("mixed_idial", lmer(value ~ system_id + period + carry_v1 + (1 | participant_id),
                         data = sets, REML = TRUE))
d <- read.csv("tests/fixtures/crossed_usability.csv")
show("crossed_usability", lmer(score ~ system_id + (1 | participant_id) + (1 | scenario_id),
                               data = d, REML = TRUE))
d <- read.csv("tests/fixtures/crossed_participant_boundary.csv")
show("crossed_participant_boundary",
     lmer(score ~ system_id + (1 | participant_id) + (1 | scenario_id), data = d, REML = TRUE))
sessions <- read.csv("tests/fixtures/crossed_import_sessions.csv")
answers <- read.csv("tests/fixtures/crossed_import_answers.csv")
scores <- aggregate(value ~ session_id, data = answers, FUN = mean)
d <- merge(scores, sessions, by.x = "session_id", by.y = "session")
d$system <- factor(d$system, levels = c("shop-v0", "shop-v1"))
show("crossed_import", lmer(value ~ system + (1 | participant) + (1 | scenario), data = d,
                            REML = TRUE))
