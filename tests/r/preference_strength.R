# Fixture values for tests/test_preference_strength.py, computed once with R 4 and geepack
# from Debian (Rscript tests/r/preference_strength.R); the tests never run R.
#
# A preference's strength graded (the study file's pairwise: strength: graded): a vote for a
# side counts y = 1 ("much") or 0.75 ("slightly") for that side and 1 - y for the other, a
# tie ("no preference") 0.5 each. Bradley-Terry with a "shown first" intercept as a logistic
# regression of the fractional outcome, alpha the anchor: each vote is a win of weight y and
# a loss of weight 1 - y; the robust variance clustered by rater is geepack's (independence
# working correlation, no small-sample factor), the model-based one glm's.
suppressMessages(library(geepack))
options(digits = 12)

votes <- read.csv("tests/fixtures/preference_votes.csv", na.strings = "")
votes$vote <- seq_len(nrow(votes))
credit <- ifelse(votes$winner == "tie", 0.5,
                 ifelse(is.na(votes$strength) | votes$strength == "much", 1, 0.75))
votes$y_a <- ifelse(votes$winner == "b", 1 - credit, credit)
long <- rbind(transform(votes, y = 1, w = y_a), transform(votes, y = 0, w = 1 - y_a))
long <- long[long$w > 0, ]
for (s in c("beta", "gamma")) {
  long[[s]] <- (long$system_a == s) - (long$system_b == s)
}
long <- long[order(long$rater, long$vote), ]
long$cluster <- as.integer(factor(long$rater))
fit <- suppressWarnings(geeglm(y ~ beta + gamma, family = binomial, data = long,
                               weights = w, id = cluster, corstr = "independence"))
print(coef(fit))
print(sqrt(diag(vcov(fit))))          # robust (sandwich) standard errors
model <- suppressWarnings(glm(y ~ beta + gamma, family = binomial, data = long, weights = w))
print(coef(model))                    # the same estimates
print(sqrt(diag(vcov(model))))        # model-based standard errors
quasi <- glm(y_a ~ beta + gamma, family = quasibinomial,
             data = transform(votes, beta = (system_a == "beta") - (system_b == "beta"),
                              gamma = (system_a == "gamma") - (system_b == "gamma")))
print(coef(quasi))                    # the fractional outcome itself: the same estimates

# The strength ignored (the default): every win a whole win, a tie half of one.
votes$y_a <- ifelse(votes$winner == "tie", 0.5, as.numeric(votes$winner == "a"))
plain <- glm(y_a ~ beta + gamma, family = quasibinomial,
             data = transform(votes, beta = (system_a == "beta") - (system_b == "beta"),
                              gamma = (system_a == "gamma") - (system_b == "gamma")))
print(coef(plain))
