# Fixture of tests/test_models_ordinal.py: one HMD item (hmd.understanding, a 1-5 scale) that
# 30 participants of the shipped within study answered after each of their two tasks, one
# with each system, the order alternating by participant. Writes
# tests/fixtures/ordinal_within.csv (the file the test imports with `ozlab import responses`)
# and prints the cumulative link mixed model ozlab fits to it: logit P(Y <= j) = theta_j -
# x'beta - u_participant, u ~ N(0, sigma^2), fixed system + period + carry-over as the linear
# model's, fitted by maximum likelihood with adaptive Gauss-Hermite quadrature (nAGQ = 20).
# Run once with Rscript from the repository's root; values copied into the test.
library(ordinal)
set.seed(35)
n <- 30
u <- rnorm(n, sd = 1.2)
rows <- do.call(rbind, lapply(seq_len(n), function(i) {
  systems <- if (i %% 2) c("shop-v1", "shop-v0") else c("shop-v0", "shop-v1")
  latent <- u[i] + 0.7 * (systems == "shop-v1") + rlogis(2)
  value <- as.integer(cut(latent, c(-Inf, -1.5, -0.3, 0.8, 2, Inf)))
  data.frame(participant_id = sprintf("P%02d", i), questionnaire_id = "hmd",
             item_id = "hmd.understanding", value = value, system_id = systems,
             scope = c("task1", "task2"), answered_at = 1760000000 + 3600 * i + c(0, 900))
}))
write.csv(rows, "tests/fixtures/ordinal_within.csv", row.names = FALSE, quote = FALSE)
rows$period <- factor(ifelse(rows$scope == "task1", 1, 2))
rows$carry_v1 <- as.integer(rows$period == 2 & rows$system_id == "shop-v0")
rows$system_id <- factor(rows$system_id, levels = c("shop-v0", "shop-v1"))
rows$y <- factor(rows$value, ordered = TRUE)
fit <- clmm(y ~ system_id + period + carry_v1 + (1 | participant_id), data = rows,
            nAGQ = 20)
options(digits = 15)
print(summary(fit)$coefficients, digits = 15)
cat("variance", as.numeric(VarCorr(fit)$participant_id), "logLik", logLik(fit), "\n")
