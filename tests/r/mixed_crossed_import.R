# Fixture values of tests/test_import_sessions.py: IDIAL's task_completion construct (the mean
# of idial.s1 and idial.s2 of each session) from tests/fixtures/crossed_import_answers.csv,
# the sessions (system, scenario) from tests/fixtures/crossed_import_sessions.csv: 24
# participants between subjects, three tasks each over four scenarios. A linear mixed model
# (lme4, REML) with crossed random intercepts for participants and scenarios, system fixed
# (shop-v0 the reference). The test imports both files (ozlab import sessions, then ozlab
# import responses) and reads the model from ozlab report --format json. Run once with
# Rscript from the repository's root; values copied into the test.
library(lme4)
sessions <- read.csv("tests/fixtures/crossed_import_sessions.csv")
answers <- read.csv("tests/fixtures/crossed_import_answers.csv")
scores <- aggregate(value ~ session_id, data = answers, FUN = mean)
d <- merge(scores, sessions, by.x = "session_id", by.y = "session")
d$system <- factor(d$system, levels = c("shop-v0", "shop-v1"))
fit <- lmer(value ~ system + (1 | participant) + (1 | scenario), data = d, REML = TRUE)
options(digits = 15)
print(summary(fit)$coefficients, digits = 15)
print(confint(fit, method = "Wald", parm = "beta_"), digits = 15)
print(as.data.frame(VarCorr(fit)), digits = 15)
cat("REML", REMLcrit(fit), "\n")
