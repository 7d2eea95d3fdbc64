# Fixture values of tests/test_models_mixed.py: a linear mixed model (lme4, REML) of IDIAL's
# task_completion construct (the mean of idial.s1 and idial.s2 in each answer set) from
# tests/fixtures/mixed_idial.csv, the file the test imports with `ozlab import responses`.
# Fixed: system (shop-v0 the reference), period (the answer set's place in the participant's
# order, a factor, 1 the reference) and carry-over (the previous answer set was with shop-v1);
# a random intercept per participant. Run once with Rscript; values copied into the test.
library(lme4)
answers <- read.csv("tests/fixtures/mixed_idial.csv")
sets <- aggregate(value ~ participant_id + system_id + scope, data = answers, FUN = mean)
when <- aggregate(answered_at ~ participant_id + scope, data = answers, FUN = min)
sets <- merge(sets, when)
sets <- sets[order(sets$participant_id, sets$answered_at), ]
sets$period <- factor(ave(sets$answered_at, sets$participant_id, FUN = rank))
previous <- ave(seq_len(nrow(sets)), sets$participant_id, FUN = function(i) c(NA, head(i, -1)))
sets$carry_v1 <- ifelse(is.na(previous), 0, as.integer(sets$system_id[previous] == "shop-v1"))
sets$system_id <- factor(sets$system_id, levels = c("shop-v0", "shop-v1"))
fit <- lmer(value ~ system_id + period + carry_v1 + (1 | participant_id), data = sets, REML = TRUE)
options(digits = 15)
print(summary(fit)$coefficients, digits = 15)
print(as.data.frame(VarCorr(fit)), digits = 15)
print(confint(fit, method = "Wald", parm = "beta_"), digits = 15)
cat("REML", REMLcrit(fit), "logLik", logLik(fit), "n", nrow(sets), "\n")
