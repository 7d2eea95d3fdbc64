# Fixture of tests/test_repeated_answers.py: a thumbs item asked after every reply (the
# starter study's "Was this reply helpful?", `ozlab new`), 24 participants between subjects,
# 12 with each system, each answering after 3 to 6 replies. Writes
# tests/fixtures/repeated_thumbs.csv (the file the test imports with `ozlab import
# responses`) and prints geepack's logistic
# GEE of every answer, participants as clusters: binomial, logit link, exchangeable working
# correlation, robust SE, the dispersion fixed at 1, iterated to convergence.
# Run once with Rscript from the repository's root; values copied into the test.
library(geepack)
set.seed(9)
rows <- do.call(rbind, lapply(1:24, function(i) {
  system <- if (i %% 2) "shop-v1" else "shop-v0"
  k <- sample(3:6, 1)
  shared <- rnorm(1, sd = 1)
  yes <- as.integer(runif(k) < plogis(0.2 + 0.9 * (system == "shop-v1") + shared))
  data.frame(participant_id = sprintf("R%02d", i), questionnaire_id = "my-reply-rating",
             item_id = "my-reply-rating.good", value = yes,
             system_id = system, turn = seq_len(k), answered_at = 1760000000 + 3600 * i + 60 * seq_len(k))
}))
write.csv(rows, "tests/fixtures/repeated_thumbs.csv", row.names = FALSE, quote = FALSE)
rows$participant_id <- factor(rows$participant_id, levels = unique(rows$participant_id))
rows$system_id <- factor(rows$system_id, levels = c("shop-v0", "shop-v1"))
fit <- geeglm(value ~ system_id, id = participant_id, data = rows, family = binomial,
              corstr = "exchangeable", scale.fix = TRUE,
              control = geese.control(epsilon = 1e-12, maxit = 200))
options(digits = 15)
s <- summary(fit)$coefficients
print(s, digits = 15)
b <- s["system_idshop-v1", "Estimate"]; se <- s["system_idshop-v1", "Std.err"]
cat("odds_ratio", exp(b), "low", exp(b - qnorm(0.975) * se), "high", exp(b + qnorm(0.975) * se),
    "\nwald", s["system_idshop-v1", "Wald"], "p", s["system_idshop-v1", "Pr(>|W|)"],
    "alpha", fit$geese$alpha, "answers", nrow(rows), "\n")
